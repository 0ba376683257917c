package pathmgr

import (
	"net/netip"
	"path"
)

// CellularPatterns are the interface names of cellular modems on Linux:
// wwan (the WWAN subsystem and most USB modems), rmnet (Qualcomm's in-SoC
// modems), ppp (dial-up and older modems) and wwp (systemd's predictable
// names for WWAN devices). Put them in Policy.Backup to keep cellular as a
// backup, or use the keyword "cellular" there.
var CellularPatterns = []string{"wwan*", "wwp*", "rmnet*", "ppp*"}

// cellularTypes are netlink link kinds that are cellular whatever the name.
var cellularTypes = map[string]bool{"wwan": true, "rmnet": true, "ppp": true}

// Policy decides which addresses carry paths and which paths are backups.
// The zero Policy uses every usable address and marks no backup.
type Policy struct {
	// Backup lists interface names or shell patterns (path.Match syntax,
	// e.g. "wwan*") whose paths are backups. The keyword "cellular" stands
	// for CellularPatterns and the cellular link kinds (wwan, rmnet, ppp).
	Backup []string
	// Exclude lists interface names or patterns never used (e.g. "docker*").
	Exclude []string
	// AllowLoopback lets the loopback interface and loopback addresses carry
	// paths (tests on one host; never useful to reach another host).
	AllowLoopback bool
}

// matchAny reports whether name matches one of the patterns. A malformed
// pattern matches only the identical name.
func matchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if ok, err := path.Match(p, name); ok || err != nil && p == name {
			return true
		}
	}
	return false
}

// IsBackup reports whether paths over l are backups under the policy.
func (p Policy) IsBackup(l Link) bool {
	for _, b := range p.Backup {
		if b == "cellular" && (cellularTypes[l.Type] || matchAny(CellularPatterns, l.Name)) {
			return true
		}
	}
	return matchAny(p.Backup, l.Name)
}

// Why an address is not usable; "" means usable.
const (
	whyOK          = ""
	whyNoLink      = "link deleted"
	whyLinkDown    = "link down"
	whyNoCarrier   = "no carrier"
	whyLoopback    = "loopback"
	whyExcluded    = "excluded by policy"
	whyTentative   = "address tentative"
	whyDADFailed   = "address failed duplicate detection"
	whyDeprecated  = "address deprecated"
	whyLinkLocal   = "link-local address"
	whyNotUnicast  = "not a unicast address"
	whyOtherFamily = "not the server's address family"
)

// usable says why a is not a usable path address on link l ("" if it is),
// for a server of family want (4, 6, or 0 for any). ok is false when the
// link is unknown.
func (p Policy) usable(l Link, ok bool, a Addr, want int) string {
	ip := a.IP.Unmap()
	switch {
	case !ok:
		return whyNoLink
	case (l.Loopback || ip.IsLoopback()) && !p.AllowLoopback:
		return whyLoopback
	case matchAny(p.Exclude, l.Name):
		return whyExcluded
	case !l.Up:
		return whyLinkDown
	case !l.Running:
		return whyNoCarrier
	case want == 4 && !ip.Is4() || want == 6 && !ip.Is6():
		return whyOtherFamily
	case ip.IsLinkLocalUnicast():
		return whyLinkLocal
	case !ip.IsValid() || ip.IsUnspecified() || ip.IsMulticast() || ip == broadcast4:
		return whyNotUnicast
	case a.DADFailed:
		return whyDADFailed
	case a.Tentative:
		return whyTentative
	case a.Deprecated:
		return whyDeprecated
	}
	return whyOK
}

// broadcast4 is the IPv4 limited broadcast address.
var broadcast4 = netip.AddrFrom4([4]byte{255, 255, 255, 255})
