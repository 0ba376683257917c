package pathmgr

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// netlinkSource is the Linux Source: rtnetlink link and address
// notifications (RTNLGRP_LINK, RTNLGRP_IPV4_IFADDR, RTNLGRP_IPV6_IFADDR)
// through github.com/vishvananda/netlink, in the network namespace of the
// calling process.
type netlinkSource struct{}

// NewNetlinkSource returns the Source that watches this host's links and
// addresses over rtnetlink (Linux only; elsewhere its Watch fails).
func NewNetlinkSource() Source { return netlinkSource{} }

// dumpTries bounds the retries of a link or address dump that the kernel
// interrupted because the table changed meanwhile.
const dumpTries = 5

// Watch subscribes first and lists second, so that no change falls in
// between: a change seen both in the list and as a notification is applied
// twice, which is harmless because updates carry whole records.
func (netlinkSource) Watch(ctx context.Context, out chan<- Update) error {
	done := make(chan struct{})
	lsub := make(chan netlink.LinkUpdate, 64)
	asub := make(chan netlink.AddrUpdate, 64)
	lch, ach := lsub, asub // set to nil when the library closes them
	var (
		mu     sync.Mutex
		subErr error
	)
	onErr := func(err error) {
		mu.Lock()
		if subErr == nil {
			subErr = err
		}
		mu.Unlock()
	}
	var running []func()
	defer func() {
		close(done) // closes the sockets; the library then closes its channels
		for _, drain := range running {
			drain()
		}
	}()
	if err := netlink.LinkSubscribeWithOptions(lsub, done, netlink.LinkSubscribeOptions{ErrorCallback: onErr}); err != nil {
		return fmt.Errorf("pathmgr: subscribe to links: %w", err)
	}
	running = append(running, func() {
		for range lsub {
		}
	})
	if err := netlink.AddrSubscribeWithOptions(asub, done, netlink.AddrSubscribeOptions{ErrorCallback: onErr}); err != nil {
		return fmt.Errorf("pathmgr: subscribe to addresses: %w", err)
	}
	running = append(running, func() {
		for range asub {
		}
	})
	send := func(u Update) error {
		select {
		case out <- u:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	snap, err := snapshot()
	if err != nil {
		return err
	}
	for _, u := range snap {
		if err := send(u); err != nil {
			return err
		}
	}
	for {
		var u Update
		select {
		case lu, ok := <-lch:
			if !ok {
				lch = nil
				break
			}
			u = Update{Kind: LinkChanged, Link: linkOf(lu.Link)}
			if lu.Header.Type == unix.RTM_DELLINK {
				u.Kind = LinkDeleted
			}
		case au, ok := <-ach:
			if !ok {
				ach = nil
				break
			}
			var good bool
			u, good = addrUpdateOf(au)
			if !good {
				continue
			}
		case <-ctx.Done():
			return ctx.Err()
		}
		if lch == nil || ach == nil {
			mu.Lock()
			err := subErr
			mu.Unlock()
			return fmt.Errorf("pathmgr: netlink subscription ended: %v", err)
		}
		if err := send(u); err != nil {
			return err
		}
	}
}

// snapshot lists the links and addresses as Resync, updates, Synced.
func snapshot() ([]Update, error) {
	var links []netlink.Link
	var addrs []netlink.Addr
	var err error
	for try := 0; try < dumpTries; try++ {
		links, err = netlink.LinkList()
		if err == nil {
			addrs, err = netlink.AddrList(nil, netlink.FAMILY_ALL)
		}
		if !errors.Is(err, netlink.ErrDumpInterrupted) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("pathmgr: list links and addresses: %w", err)
	}
	out := []Update{{Kind: Resync}}
	for _, l := range links {
		out = append(out, Update{Kind: LinkChanged, Link: linkOf(l)})
	}
	for _, a := range addrs {
		if a.IPNet == nil {
			continue
		}
		if ad, ok := addrOf(a.LinkIndex, a.IP, a.Flags); ok {
			out = append(out, Update{Kind: AddrAdded, Addr: ad})
		}
	}
	return append(out, Update{Kind: Synced}), nil
}

// linkOf converts a netlink link.
func linkOf(l netlink.Link) Link {
	a := l.Attrs()
	return Link{
		Index:    a.Index,
		Name:     a.Name,
		Type:     l.Type(),
		Up:       a.RawFlags&unix.IFF_UP != 0,
		Running:  a.RawFlags&unix.IFF_RUNNING != 0,
		Loopback: a.RawFlags&unix.IFF_LOOPBACK != 0,
	}
}

// addrOf converts a netlink address; ok is false for a malformed one.
func addrOf(index int, ip net.IP, flags int) (Addr, bool) {
	a, ok := netip.AddrFromSlice(ip)
	if !ok || index <= 0 {
		return Addr{}, false
	}
	return Addr{
		Index:      index,
		IP:         a.Unmap(),
		Tentative:  flags&unix.IFA_F_TENTATIVE != 0,
		Deprecated: flags&unix.IFA_F_DEPRECATED != 0,
		DADFailed:  flags&unix.IFA_F_DADFAILED != 0,
	}, true
}

// addrUpdateOf converts a netlink address notification.
func addrUpdateOf(au netlink.AddrUpdate) (Update, bool) {
	a, ok := addrOf(au.LinkIndex, au.LinkAddress.IP, au.Flags)
	if !ok {
		return Update{}, false
	}
	u := Update{Kind: AddrAdded, Addr: a}
	if !au.NewAddr {
		u.Kind = AddrDeleted
	}
	return u, true
}
