package pathmgr

import (
	"net/netip"
	"testing"
)

func TestUsable(t *testing.T) {
	eth := Link{Index: 2, Name: "eth0", Type: "device", Up: true, Running: true}
	lo := Link{Index: 1, Name: "lo", Type: "device", Up: true, Running: true, Loopback: true}
	a := func(ip string) Addr { return Addr{Index: 2, IP: netip.MustParseAddr(ip)} }
	for _, tc := range []struct {
		name   string
		p      Policy
		l      Link
		known  bool
		a      Addr
		family int
		want   string
	}{
		{"global IPv4 on an up link", Policy{}, eth, true, a("192.0.2.2"), 4, whyOK},
		{"any family", Policy{}, eth, true, a("2001:db8::2"), 0, whyOK},
		{"unknown link", Policy{}, eth, false, a("192.0.2.2"), 4, whyNoLink},
		// The brief: "skip loopback (unless explicitly allowed)".
		{"loopback link", Policy{}, lo, true, Addr{Index: 1, IP: netip.MustParseAddr("127.0.0.1")}, 4, whyLoopback},
		{"loopback allowed", Policy{AllowLoopback: true}, lo, true, Addr{Index: 1, IP: netip.MustParseAddr("127.0.0.1")}, 4, whyOK},
		{"loopback address on another link", Policy{}, eth, true, a("127.0.0.2"), 4, whyLoopback},
		// "skip … down links": IFF_UP clear, or no carrier (IFF_RUNNING clear).
		{"link down", Policy{}, Link{Index: 2, Name: "eth0", Running: true}, true, a("192.0.2.2"), 4, whyLinkDown},
		{"no carrier", Policy{}, Link{Index: 2, Name: "eth0", Up: true}, true, a("192.0.2.2"), 4, whyNoCarrier},
		// RFC 4291 §2.5.6: "Routers must not forward any packets with
		// Link-Local source or destination addresses to other links."
		{"IPv6 link-local", Policy{}, eth, true, a("fe80::1"), 6, whyLinkLocal},
		// RFC 3927 §2.7: the same for IPv4 link-local (169.254/16).
		{"IPv4 link-local", Policy{}, eth, true, a("169.254.7.7"), 4, whyLinkLocal},
		// RFC 4862 §2: "A tentative address is not considered assigned to an
		// interface in the usual sense."
		{"tentative", Policy{}, eth, true, Addr{Index: 2, IP: netip.MustParseAddr("2001:db8::2"), Tentative: true}, 6, whyTentative},
		{"DAD failed", Policy{}, eth, true, Addr{Index: 2, IP: netip.MustParseAddr("2001:db8::2"), DADFailed: true, Tentative: true}, 6, whyDADFailed},
		// RFC 4862 §5.5.4: "the use of a deprecated address SHOULD be
		// discouraged" for new communication.
		{"deprecated", Policy{}, eth, true, Addr{Index: 2, IP: netip.MustParseAddr("2001:db8::2"), Deprecated: true}, 6, whyDeprecated},
		{"IPv6 address, IPv4 server", Policy{}, eth, true, a("2001:db8::2"), 4, whyOtherFamily},
		{"IPv4 address, IPv6 server", Policy{}, eth, true, a("192.0.2.2"), 6, whyOtherFamily},
		{"multicast", Policy{}, eth, true, a("224.0.0.1"), 4, whyNotUnicast},
		{"unspecified", Policy{}, eth, true, a("0.0.0.0"), 4, whyNotUnicast},
		{"excluded", Policy{Exclude: []string{"docker*", "eth0"}}, eth, true, a("192.0.2.2"), 4, whyExcluded},
		{"not excluded", Policy{Exclude: []string{"docker*"}}, eth, true, a("192.0.2.2"), 4, whyOK},
	} {
		if got := tc.p.usable(tc.l, tc.known, tc.a, tc.family); got != tc.want {
			t.Errorf("%s: usable = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestIsBackup(t *testing.T) {
	for _, tc := range []struct {
		backup []string
		l      Link
		want   bool
	}{
		// The brief: "-backup wwan0,eth2 marks by name".
		{[]string{"wwan0", "eth2"}, Link{Name: "wwan0"}, true},
		{[]string{"wwan0", "eth2"}, Link{Name: "eth2"}, true},
		{[]string{"wwan0", "eth2"}, Link{Name: "eth1"}, false},
		{[]string{"wwan*"}, Link{Name: "wwan1"}, true},
		{[]string{"wwan*"}, Link{Name: "wlan0"}, false},
		// "an interface-type rule: names matching wwan*/ppp*/rmnet* as cellular".
		{[]string{"cellular"}, Link{Name: "wwan0"}, true},
		{[]string{"cellular"}, Link{Name: "ppp0"}, true},
		{[]string{"cellular"}, Link{Name: "rmnet_data0"}, true},
		{[]string{"cellular"}, Link{Name: "wwp0s20f0u6"}, true},
		{[]string{"cellular"}, Link{Name: "modem", Type: "wwan"}, true},
		{[]string{"cellular"}, Link{Name: "wlan0", Type: "device"}, false},
		{[]string{"cellular"}, Link{Name: "eth0", Type: "veth"}, false},
		{nil, Link{Name: "wwan0"}, false},
		{[]string{"[bad"}, Link{Name: "[bad"}, true}, // a malformed pattern matches its own text
		{[]string{"[bad"}, Link{Name: "b"}, false},
	} {
		if got := (Policy{Backup: tc.backup}).IsBackup(tc.l); got != tc.want {
			t.Errorf("Backup %q, link %+v: IsBackup = %v, want %v", tc.backup, tc.l, got, tc.want)
		}
	}
}
