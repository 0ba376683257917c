package pathmgr

import (
	"context"
	"fmt"
	"net/netip"
)

// Link is what the manager knows of one network interface.
type Link struct {
	Index    int    // interface index (the kernel's ifindex); the key of a link
	Name     string // interface name, e.g. "wlan0"
	Type     string // link kind as netlink reports it: "device", "veth", "wwan", "ppp", …
	Up       bool   // administratively up (IFF_UP)
	Running  bool   // operationally up: carrier present (IFF_RUNNING)
	Loopback bool   // the loopback interface (IFF_LOOPBACK)
}

// Addr is one address on a link.
type Addr struct {
	Index      int        // index of the link that holds the address
	IP         netip.Addr // the address, unmapped (an IPv4 address is 4 bytes)
	Tentative  bool       // duplicate address detection still running (IFA_F_TENTATIVE)
	Deprecated bool       // preferred lifetime over: not for new connections (IFA_F_DEPRECATED)
	DADFailed  bool       // duplicate address detection failed (IFA_F_DADFAILED)
}

// UpdateKind says what an Update reports.
type UpdateKind uint8

// Kinds of Update.
const (
	// Resync starts a full snapshot: everything known so far is forgotten
	// and the links and addresses that follow, up to Synced, are all there
	// is. A Source sends it first, and again after it lost events (a
	// netlink socket overrun).
	Resync UpdateKind = iota + 1
	// Synced ends the snapshot that Resync started.
	Synced
	// LinkChanged reports a new link or a change of one (Update.Link).
	LinkChanged
	// LinkDeleted reports that the link Update.Link.Index is gone.
	LinkDeleted
	// AddrAdded reports a new address or a change of one (Update.Addr).
	AddrAdded
	// AddrDeleted reports that the address Update.Addr is gone.
	AddrDeleted
)

// String names the kind.
func (k UpdateKind) String() string {
	switch k {
	case Resync:
		return "resync"
	case Synced:
		return "synced"
	case LinkChanged:
		return "link-changed"
	case LinkDeleted:
		return "link-deleted"
	case AddrAdded:
		return "addr-added"
	case AddrDeleted:
		return "addr-deleted"
	}
	return fmt.Sprintf("UpdateKind(%d)", uint8(k))
}

// Update is one report of a Source.
type Update struct {
	Kind UpdateKind
	Link Link // for LinkChanged and LinkDeleted (only Index counts for LinkDeleted)
	Addr Addr // for AddrAdded and AddrDeleted
}

// Source reports the host's links and addresses. It is the only part of the
// manager that talks to the operating system.
type Source interface {
	// Watch sends Resync, the current links and addresses, Synced, and then
	// every change, in the order they happened, until ctx ends (it then
	// returns ctx.Err()) or it fails (it returns why; the manager calls
	// Watch again after a pause, and the new snapshot starts with Resync).
	// Every send must give up when ctx ends, and nothing is sent after
	// Watch returns.
	Watch(ctx context.Context, out chan<- Update) error
}
