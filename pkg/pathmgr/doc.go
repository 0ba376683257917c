// Package pathmgr is a client path manager that follows the host's network
// interfaces, as Linux's mptcpd does for kernel MPTCP: when an interface
// with a usable address comes up it joins a path bound to that address
// (Joiner.AddPath, e.g. a *session.Session), and when the address goes away
// or the interface goes down it removes the path (Joiner.RemovePath).
//
// The parts:
//   - Source reports links and addresses: a snapshot, then every change.
//     NewNetlinkSource is the Linux one (rtnetlink through
//     github.com/vishvananda/netlink); tests feed a fake.
//   - Policy decides which addresses are usable (no loopback unless
//     allowed, no link-local, no tentative, deprecated or failed addresses,
//     no down links, the server's address family only) and which paths are
//     backups (interface names or patterns, CellularPatterns).
//   - table is the bookkeeping: which endpoints are wanted, joining, joined
//     or leaving, with the debounce that absorbs a flapping interface. It is
//     pure: every method takes the time.
//   - Manager runs it: one goroutine for the Source, one loop, one goroutine
//     per join in flight; Close stops them all within bounded time.
//
// Use from a client (the first path is dialled by the caller):
//
//	m, _ := pathmgr.New(pathmgr.Config{Remote: server, Policy: pathmgr.Policy{Backup: []string{"wwan*"}}})
//	_ = m.Start(ctx)                      // watches; returns after the first snapshot
//	first := m.Usable()[0]                // preferred: not a backup, lowest interface index
//	pc, _ := pathmgr.Listen(first, server) // bound to the address and the interface
//	s, _ := session.Dial(ctx, pc, server, tlsConf, cfg)
//	_ = m.Attach(s, first, s.Paths()[0])  // from now on joins and removes paths of s
//	defer m.Close()
//
// Without a Manager, a fixed list of paths (mpquic-client's -paths):
// ListenPaths binds a socket per address or interface (ResolvePath), the
// caller dials the session on the first, and JoinPaths joins the others.
package pathmgr
