package session

import (
	"net"
	"testing"
)

// The local-address check that makes a plain connection migrate (the
// behaviour itself: test/netns TestFallbackMigratesWhenItsInterfaceGoes).
func TestLocalAddrUp(t *testing.T) {
	for _, tc := range []struct {
		addr net.Addr
		want bool
	}{
		{&net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}, true},  // lo is up
		{&net.UDPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 1}, false}, // TEST-NET-1 (RFC 5737): no interface has it
		{&net.UDPAddr{IP: net.IPv4zero, Port: 1}, true},            // any interface: cannot tell
		{&net.UDPAddr{IP: net.IPv6unspecified, Port: 1}, true},
		{&net.IPAddr{IP: net.IPv4(192, 0, 2, 1)}, true}, // not a UDP address: cannot tell
	} {
		if got := localAddrUp(tc.addr); got != tc.want {
			t.Errorf("localAddrUp(%v) = %v, want %v", tc.addr, got, tc.want)
		}
	}
}
