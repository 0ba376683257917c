package pathmgr

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// The netlink Source's snapshot, on this host (no root needed): it starts
// with Resync, holds the loopback link with 127.0.0.1, ends with Synced,
// and Watch returns once its context ends.
func TestNetlinkSnapshot(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := make(chan Update)
	errc := make(chan error, 1)
	go func() { errc <- NewNetlinkSource().Watch(ctx, out) }()
	timeout := time.After(10 * time.Second)
	var got []Update
	for len(got) == 0 || got[len(got)-1].Kind != Synced {
		select {
		case u := <-out:
			got = append(got, u)
		case err := <-errc:
			t.Fatalf("Watch returned before the snapshot ended: %v", err)
		case <-timeout:
			t.Fatalf("no Synced within 10 s; got %d updates", len(got))
		}
	}
	if got[0].Kind != Resync {
		t.Errorf("first update %v, want resync", got[0].Kind)
	}
	loIndex := 0
	for _, u := range got {
		if u.Kind == LinkChanged && u.Link.Loopback {
			loIndex = u.Link.Index
			if !u.Link.Up {
				t.Errorf("loopback link %+v reads as down", u.Link)
			}
		}
	}
	if loIndex == 0 {
		t.Fatalf("no loopback link in the snapshot: %+v", got)
	}
	found := false
	for _, u := range got {
		if u.Kind == AddrAdded && u.Addr.Index == loIndex && u.Addr.IP == netip.MustParseAddr("127.0.0.1") {
			found = true
		}
	}
	if !found {
		t.Errorf("no 127.0.0.1 on the loopback link (index %d) in the snapshot: %+v", loIndex, got)
	}
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Watch returned %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Watch did not return within 10 s of its context ending")
	}
}

// The conversions from the netlink library's records.
func TestNetlinkConvert(t *testing.T) {
	l := linkOf(&netlink.Dummy{LinkAttrs: netlink.LinkAttrs{Index: 7, Name: "wwan0", RawFlags: unix.IFF_UP | unix.IFF_RUNNING}})
	if want := (Link{Index: 7, Name: "wwan0", Type: "dummy", Up: true, Running: true}); l != want {
		t.Errorf("linkOf = %+v, want %+v", l, want)
	}
	l = linkOf(&netlink.Device{LinkAttrs: netlink.LinkAttrs{Index: 1, Name: "lo", RawFlags: unix.IFF_UP | unix.IFF_LOOPBACK}})
	if want := (Link{Index: 1, Name: "lo", Type: "device", Up: true, Loopback: true}); l != want {
		t.Errorf("linkOf(lo) = %+v, want %+v", l, want)
	}
	u, ok := addrUpdateOf(netlink.AddrUpdate{LinkAddress: net.IPNet{IP: net.ParseIP("2001:db8::7"), Mask: net.CIDRMask(64, 128)}, LinkIndex: 7, Flags: unix.IFA_F_TENTATIVE})
	if want := (Update{Kind: AddrDeleted, Addr: Addr{Index: 7, IP: netip.MustParseAddr("2001:db8::7"), Tentative: true}}); !ok || u != want {
		t.Errorf("addrUpdateOf = %+v %v, want %+v", u, ok, want)
	}
	// net.ParseIP gives 16 bytes for an IPv4 address: the result is unmapped.
	u, ok = addrUpdateOf(netlink.AddrUpdate{LinkAddress: net.IPNet{IP: net.ParseIP("192.0.2.7")}, LinkIndex: 7, NewAddr: true, Flags: unix.IFA_F_DEPRECATED | unix.IFA_F_DADFAILED})
	if want := (Update{Kind: AddrAdded, Addr: Addr{Index: 7, IP: netip.MustParseAddr("192.0.2.7"), Deprecated: true, DADFailed: true}}); !ok || u != want {
		t.Errorf("addrUpdateOf(IPv4) = %+v %v, want %+v", u, ok, want)
	}
	if _, ok := addrUpdateOf(netlink.AddrUpdate{LinkAddress: net.IPNet{IP: net.IP{1, 2}}, LinkIndex: 7}); ok {
		t.Errorf("a 2-byte address converted")
	}
}

// Listen binds to the address and to the interface: the socket's
// SO_BINDTOIFINDEX reads back the endpoint's interface.
func TestListenBindsDevice(t *testing.T) {
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Skip("no lo here:", err)
	}
	pc, err := Listen(Endpoint{Index: lo.Index, Name: "lo", IP: netip.MustParseAddr("127.0.0.1")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	if ip := pc.LocalAddr().(*net.UDPAddr).IP; !ip.Equal(net.IPv4(127, 0, 0, 1)) {
		t.Errorf("bound to %v, want 127.0.0.1", ip)
	}
	rc, err := pc.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var idx int
	var gerr error
	rc.Control(func(fd uintptr) { idx, gerr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_BINDTOIFINDEX) })
	if gerr != nil {
		t.Fatal(gerr)
	}
	if idx != lo.Index && unix.Geteuid() == 0 {
		t.Errorf("SO_BINDTOIFINDEX = %d, want lo's index %d", idx, lo.Index)
	}
	t.Logf("bound to interface index %d (lo is %d)", idx, lo.Index)
}
