package pathmgr

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// A small host: lo, eth0 (192.0.2.2) and, when the tests add them, wlan0
// and wwan0.
var (
	t0    = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	lo    = Link{Index: 1, Name: "lo", Up: true, Running: true, Loopback: true}
	eth0  = Link{Index: 2, Name: "eth0", Up: true, Running: true}
	wlan0 = Link{Index: 3, Name: "wlan0", Up: true, Running: true}
	wwan0 = Link{Index: 4, Name: "wwan0", Up: true, Running: true}
)

func addr(index int, ip string) Addr { return Addr{Index: index, IP: netip.MustParseAddr(ip)} }

func ep(l Link, ip string) Endpoint {
	return Endpoint{Index: l.Index, Name: l.Name, IP: netip.MustParseAddr(ip)}
}

func linkUp(l Link) Update  { return Update{Kind: LinkChanged, Link: l} }
func linkDel(l Link) Update { return Update{Kind: LinkDeleted, Link: Link{Index: l.Index}} }
func addrAdd(a Addr) Update { return Update{Kind: AddrAdded, Addr: a} }
func addrDel(a Addr) Update { return Update{Kind: AddrDeleted, Addr: a} }
func down(l Link) Update    { l.Up, l.Running = false, false; return linkUp(l) }
func snapshot0() []Update {
	return []Update{{Kind: Resync}, linkUp(lo), addrAdd(addr(1, "127.0.0.1")), linkUp(eth0), addrAdd(addr(2, "192.0.2.2")), {Kind: Synced}}
}

// testTable is a table fed by a script: at(d, updates...) applies updates
// at t0+d and returns what reconcile asked for, as strings.
type testTable struct {
	t  *testing.T
	tb *table
}

func newTestTable(t *testing.T, p Policy) *testTable {
	tt := &testTable{t: t, tb: newTable(p, 4, 200*time.Millisecond, 5*time.Second)}
	tt.at(0, snapshot0()...)
	return tt
}

func (tt *testTable) at(d time.Duration, us ...Update) []string {
	var acts []action
	for _, u := range us {
		tt.tb.apply(u)
		acts = append(acts, tt.tb.reconcile(t0.Add(d))...)
	}
	if len(us) == 0 {
		acts = tt.tb.reconcile(t0.Add(d))
	}
	return strs(acts)
}

func strs(acts []action) []string {
	var out []string
	for _, a := range acts {
		s := ""
		switch a.kind {
		case actJoin:
			s = fmt.Sprintf("join %v", a.ep)
		case actCancel:
			s = fmt.Sprintf("cancel %v", a.ep)
		case actRemove:
			s = fmt.Sprintf("remove %d: %s", a.id, a.reason)
		case actJoined:
			s = fmt.Sprintf("joined %d on %v", a.id, a.ep)
		case actJoinFailed:
			s = fmt.Sprintf("join-failed %v", a.ep)
		case actKept:
			s = fmt.Sprintf("kept %d", a.id)
		}
		if a.backup {
			s += " backup"
		}
		out = append(out, s)
	}
	return out
}

func (tt *testTable) want(step string, got []string, want ...string) {
	tt.t.Helper()
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		tt.t.Errorf("%s: actions %q, want %q", step, got, want)
	}
}

func (tt *testTable) wantNext(step string, d time.Duration) {
	tt.t.Helper()
	at, ok := tt.tb.next()
	if !ok || !at.Equal(t0.Add(d)) {
		tt.t.Errorf("%s: next step at %v (%v), want t0+%v", step, at.Sub(t0), ok, d)
	}
}

// The issue: "it joins a path when an interface with a usable address comes
// up; it removes the path when the interface goes down or the address goes
// away". The brief: "Debounce flapping (configurable, e.g. 200 ms)".
func TestTableJoinAndRemove(t *testing.T) {
	tt := newTestTable(t, Policy{})
	if got := fmt.Sprint(tt.tb.usable()); got != "[eth0 192.0.2.2]" {
		t.Fatalf("usable after the snapshot = %s, want [eth0 192.0.2.2] (lo skipped)", got)
	}
	tt.want("before attach", tt.at(time.Second), nil...)
	tt.want("attach", strs([]action{tt.tb.attach(ep(eth0, "192.0.2.2"), 0)}), "joined 0 on eth0 192.0.2.2")

	// wlan0 comes up with an address: joined once it stayed 200 ms.
	tt.want("wlan0 up", tt.at(2*time.Second, linkUp(wlan0), addrAdd(addr(3, "198.51.100.7"))), nil...)
	tt.wantNext("wlan0 up", 2200*time.Millisecond)
	tt.want("199 ms later", tt.at(2199*time.Millisecond), nil...)
	tt.want("200 ms later", tt.at(2200*time.Millisecond), "join wlan0 198.51.100.7")
	tt.want("join done", strs(tt.tb.joinDone(ep(wlan0, "198.51.100.7").key(), 1, 1, nil, t0.Add(2300*time.Millisecond))), "joined 1 on wlan0 198.51.100.7")

	// wlan0 flaps: down and back up within the debounce keeps the path.
	tt.want("wlan0 down", tt.at(3*time.Second, down(wlan0)), nil...)
	tt.wantNext("wlan0 down", 3200*time.Millisecond)
	tt.want("wlan0 back", tt.at(3100*time.Millisecond, linkUp(wlan0)), "kept 1")
	if _, ok := tt.tb.next(); ok {
		t.Errorf("after the flap: a step is still pending")
	}

	// The address goes away for good: removed after the debounce.
	tt.want("address gone", tt.at(4*time.Second, addrDel(addr(3, "198.51.100.7"))), nil...)
	tt.want("200 ms later", tt.at(4200*time.Millisecond), "remove 1: address removed")

	// A link deleted takes its socket with it: removed at once.
	tt.want("eth0 deleted", tt.at(5*time.Second, addrDel(addr(2, "192.0.2.2")), linkDel(eth0)), "remove 0: link deleted")
	if len(tt.tb.eps) != 0 {
		t.Errorf("entries left: %v", tt.tb.eps)
	}
}

// An address that comes and goes within the debounce is never joined.
func TestTableFlapBeforeJoin(t *testing.T) {
	tt := newTestTable(t, Policy{})
	tt.tb.attach(ep(eth0, "192.0.2.2"), 0)
	tt.want("up", tt.at(time.Second, linkUp(wlan0), addrAdd(addr(3, "198.51.100.7"))), nil...)
	tt.want("down", tt.at(1100*time.Millisecond, down(wlan0)), nil...)
	tt.want("up again", tt.at(1150*time.Millisecond, linkUp(wlan0)), nil...)
	// The debounce restarts: stable from 1.15 s, joined at 1.35 s.
	tt.want("at 1.2 s", tt.at(1200*time.Millisecond), nil...)
	tt.want("at 1.349 s", tt.at(1349*time.Millisecond), nil...)
	tt.want("at 1.35 s", tt.at(1350*time.Millisecond), "join wlan0 198.51.100.7")
}

// A failed join is tried again after the retry interval while the address
// stays usable, and dropped when it goes.
func TestTableJoinFailed(t *testing.T) {
	tt := newTestTable(t, Policy{})
	tt.tb.attach(ep(eth0, "192.0.2.2"), 0)
	tt.at(0, linkUp(wlan0), addrAdd(addr(3, "198.51.100.7")))
	tt.want("due", tt.at(200*time.Millisecond), "join wlan0 198.51.100.7")
	k := ep(wlan0, "198.51.100.7").key()
	tt.want("failed", strs(tt.tb.joinDone(k, 1, 0, errors.New("no route"), t0.Add(time.Second))), "join-failed wlan0 198.51.100.7")
	tt.wantNext("failed", 6*time.Second)
	tt.want("before retry", tt.at(5999*time.Millisecond), nil...)
	tt.want("retry", tt.at(6*time.Second), "join wlan0 198.51.100.7")
	tt.want("failed again", strs(tt.tb.joinDone(k, 2, 0, errors.New("no route"), t0.Add(7*time.Second))), "join-failed wlan0 198.51.100.7")
	tt.want("address gone", tt.at(8*time.Second, addrDel(addr(3, "198.51.100.7"))), nil...)
	if _, ok := tt.tb.next(); ok {
		t.Errorf("a retry is pending for an address that is gone")
	}
}

// An address that goes while its join is in flight cancels the join; a
// join that succeeds all the same is removed at once.
func TestTableGoneWhileJoining(t *testing.T) {
	tt := newTestTable(t, Policy{})
	tt.tb.attach(ep(eth0, "192.0.2.2"), 0)
	tt.at(0, linkUp(wlan0), addrAdd(addr(3, "198.51.100.7")))
	tt.want("due", tt.at(200*time.Millisecond), "join wlan0 198.51.100.7")
	tt.want("link deleted", tt.at(300*time.Millisecond, linkDel(wlan0)), "cancel wlan0 198.51.100.7")
	k := ep(wlan0, "198.51.100.7").key()
	tt.want("joined anyway", strs(tt.tb.joinDone(k, 1, 4, nil, t0.Add(400*time.Millisecond))),
		"joined 4 on wlan0 198.51.100.7", "remove 4: link deleted")
	// A result that matches no join never leaves a path behind.
	tt.want("stray result", strs(tt.tb.joinDone(k, 9, 5, nil, t0.Add(time.Second))), "remove 5: join no longer wanted")
}

// Nothing is acted on while a snapshot is incomplete. A resync that no
// longer holds an address removes its path after the debounce, and one
// that no longer holds a link removes its path at once.
func TestTableResync(t *testing.T) {
	tt := newTestTable(t, Policy{})
	tt.tb.attach(ep(eth0, "192.0.2.2"), 0)
	tt.at(0, linkUp(wlan0), addrAdd(addr(3, "198.51.100.7")), linkUp(wwan0), addrAdd(addr(4, "203.0.113.9")))
	tt.at(200 * time.Millisecond)
	tt.tb.joinDone(ep(wlan0, "198.51.100.7").key(), 1, 1, nil, t0.Add(300*time.Millisecond))
	tt.tb.joinDone(ep(wwan0, "203.0.113.9").key(), 2, 2, nil, t0.Add(300*time.Millisecond))
	tt.want("resync started", tt.at(time.Second, Update{Kind: Resync}, linkUp(eth0)), nil...)
	tt.want("mid-snapshot, later", tt.at(3*time.Second), nil...)
	tt.want("synced", tt.at(3*time.Second, addrAdd(addr(2, "192.0.2.2")), linkUp(wlan0), Update{Kind: Synced}), "remove 2: link deleted")
	tt.want("debounce not over", tt.at(3199*time.Millisecond), nil...)
	tt.want("debounce over", tt.at(3200*time.Millisecond), "remove 1: address removed")
}

// The brief: "a policy to mark a path backup (by interface name list …)";
// the first path is the preferred usable address: not a backup.
func TestTableBackup(t *testing.T) {
	tb := newTable(Policy{Backup: []string{"cellular"}}, 4, 0, time.Second)
	for _, u := range []Update{{Kind: Resync}, linkUp(wwan0), addrAdd(addr(4, "203.0.113.9")), linkUp(wlan0), addrAdd(addr(3, "198.51.100.7")), {Kind: Synced}} {
		tb.apply(u)
	}
	if got := fmt.Sprint(tb.usable()); got != "[wlan0 198.51.100.7 wwan0 203.0.113.9]" {
		t.Errorf("usable = %s, want wlan0 before wwan0 (a backup), though wwan0 has the lower index", got)
	}
	tb.attach(ep(wlan0, "198.51.100.7"), 0)
	if got := strs(tb.reconcile(t0)); fmt.Sprint(got) != "[join wwan0 203.0.113.9 backup]" {
		t.Errorf("with no debounce: actions %q, want [join wwan0 203.0.113.9 backup]", got)
	}
}
