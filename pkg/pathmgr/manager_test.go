package pathmgr

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/session"
	"github.com/mpqsched/mpqsched/sched"
)

// fakeSource plays a snapshot, then the updates the test pushes. Watch
// number n (from 1) fails right after its snapshot if n <= fails.
type fakeSource struct {
	snaps   [][]Update // snapshot of each Watch; the last one repeats
	changes chan Update
	fails   int
	mu      sync.Mutex
	watches int
}

func (f *fakeSource) Watch(ctx context.Context, out chan<- Update) error {
	f.mu.Lock()
	f.watches++
	n := f.watches
	f.mu.Unlock()
	snap := f.snaps[min(n, len(f.snaps))-1]
	for _, u := range snap {
		select {
		case out <- u:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if n <= f.fails {
		return errors.New("netlink overrun")
	}
	for {
		select {
		case u := <-f.changes:
			select {
			case out <- u:
			case <-ctx.Done():
				return ctx.Err()
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// fakeConn is the socket fakeListen hands out.
type fakeConn struct {
	net.PacketConn // nil: only LocalAddr and Close are called
	ep             Endpoint
	closed         bool
}

func (c *fakeConn) LocalAddr() net.Addr { return &net.UDPAddr{IP: c.ep.IP.AsSlice()} }
func (c *fakeConn) Close() error        { c.closed = true; return nil }

// fakeJoiner records the calls of the manager with their (virtual) times
// since start. AddPath takes delay (or until its ctx ends) and then fails
// with fail, or returns the next path ID.
type fakeJoiner struct {
	start time.Time
	delay time.Duration
	fail  error

	mu    sync.Mutex
	calls []string
	conns []*fakeConn
	next  sched.PathID
}

func (j *fakeJoiner) AddPath(ctx context.Context, pc net.PacketConn, remote net.Addr, opts session.PathOptions) (sched.PathID, error) {
	fc := pc.(*fakeConn)
	j.mu.Lock()
	j.calls = append(j.calls, fmt.Sprintf("%v add %v backup=%v", time.Since(j.start), fc.ep, opts.Backup))
	j.conns = append(j.conns, fc)
	j.mu.Unlock()
	select {
	case <-time.After(j.delay):
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	if j.fail != nil {
		return 0, j.fail
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.next++
	return j.next, nil
}

func (j *fakeJoiner) RemovePath(id sched.PathID) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.calls = append(j.calls, fmt.Sprintf("%v remove %d", time.Since(j.start), id))
	return nil
}

func (j *fakeJoiner) log() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return strings.Join(j.calls, "\n")
}

// harness is a Manager over a fakeSource and a fakeJoiner, attached to
// eth0 as path 0, inside a synctest bubble.
type harness struct {
	t      *testing.T
	m      *Manager
	src    *fakeSource
	j      *fakeJoiner
	mu     sync.Mutex
	events []string
}

func newHarness(t *testing.T, src *fakeSource, j *fakeJoiner, p Policy) *harness {
	h := &harness{t: t, src: src, j: j}
	j.start = time.Now()
	m, err := New(Config{
		Source: src,
		Remote: &net.UDPAddr{IP: net.IPv4(203, 0, 113, 1), Port: 4443},
		Policy: p,
		Listen: func(ep Endpoint, _ net.Addr) (net.PacketConn, error) { return &fakeConn{ep: ep}, nil },
		OnEvent: func(e Event) {
			h.mu.Lock()
			h.events = append(h.events, fmt.Sprintf("%v %v", e.Time.Sub(j.start), e))
			h.mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	h.m = m
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	us := m.Usable()
	if len(us) == 0 {
		t.Fatal("no usable address after Start")
	}
	if err := m.Attach(j, us[0], 0); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *harness) push(us ...Update) {
	for _, u := range us {
		h.src.changes <- u
	}
}

func (h *harness) wantCalls(step, want string) {
	h.t.Helper()
	synctest.Wait()
	if got := h.j.log(); got != want {
		h.t.Errorf("%s: calls\n%s\nwant\n%s", step, got, want)
	}
}

func (h *harness) wantEvents(step, want string) {
	h.t.Helper()
	synctest.Wait()
	h.mu.Lock()
	got := strings.Join(h.events, "\n")
	h.mu.Unlock()
	if got != want {
		h.t.Errorf("%s: events\n%s\nwant\n%s", step, got, want)
	}
}

// The issue: "it joins a path when an interface with a usable address comes
// up; it removes the path when the interface goes down or the address goes
// away", with the brief's debounce of 200 ms, in virtual time.
func TestManagerJoinRemove(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, &fakeSource{snaps: [][]Update{snapshot0()}, changes: make(chan Update)}, &fakeJoiner{}, Policy{Backup: []string{"wwan*"}})
		h.wantEvents("attach", "0s joined path 0 on eth0 192.0.2.2: first path")

		time.Sleep(time.Second)
		h.push(linkUp(wwan0), addrAdd(addr(4, "203.0.113.9")))
		time.Sleep(199 * time.Millisecond)
		h.wantCalls("199 ms after wwan0 came up", "")
		time.Sleep(time.Millisecond)
		h.wantCalls("200 ms after", "1.2s add wwan0 203.0.113.9 backup=true")

		time.Sleep(time.Second)
		h.push(addrDel(addr(4, "203.0.113.9")), linkDel(wwan0))
		h.wantCalls("wwan0 deleted", "1.2s add wwan0 203.0.113.9 backup=true\n2.2s remove 1")
		h.wantEvents("wwan0 deleted", "0s joined path 0 on eth0 192.0.2.2: first path\n"+
			"1.2s joined path 1 on wwan0 203.0.113.9 (backup)\n"+
			"2.2s removed path 1 on wwan0 203.0.113.9 (backup): link deleted")
		if err := h.m.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
}

// Close cancels a join in flight and returns with every goroutine ended
// (synctest fails the test if one is left); the socket is closed.
func TestManagerCloseDuringJoin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		j := &fakeJoiner{delay: time.Hour}
		h := newHarness(t, &fakeSource{snaps: [][]Update{snapshot0()}, changes: make(chan Update)}, j, Policy{})
		h.push(linkUp(wlan0), addrAdd(addr(3, "198.51.100.7")))
		time.Sleep(time.Second)
		h.wantCalls("joining", "200ms add wlan0 198.51.100.7 backup=false")
		start := time.Now()
		if err := h.m.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("Close took %v of virtual time, want 0 (the join is cancelled, not waited out)", d)
		}
		if !j.conns[0].closed {
			t.Errorf("the failed join's socket is still open")
		}
		if err := h.m.Attach(j, ep(eth0, "192.0.2.2"), 0); err == nil {
			t.Errorf("Attach after Close: no error")
		}
	})
}

// A join that fails is tried again after RetryInterval (5 s) while the
// address stays usable.
func TestManagerRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		j := &fakeJoiner{delay: time.Second, fail: errors.New("no route to host")}
		h := newHarness(t, &fakeSource{snaps: [][]Update{snapshot0()}, changes: make(chan Update)}, j, Policy{})
		h.push(linkUp(wlan0), addrAdd(addr(3, "198.51.100.7")))
		time.Sleep(7 * time.Second)
		h.wantCalls("after 7 s", "200ms add wlan0 198.51.100.7 backup=false\n6.2s add wlan0 198.51.100.7 backup=false")
		h.wantEvents("after 7 s", "0s joined path 0 on eth0 192.0.2.2: first path\n"+
			"1.2s join on wlan0 198.51.100.7 failed (no route to host)")
		time.Sleep(time.Second)
		h.m.Close()
	})
}

// When the Source fails (a netlink overrun loses events) it is watched
// again after a pause, and the new snapshot decides: a link missing from it
// is gone.
func TestManagerResync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		withWlan := append(snapshot0()[:5:5], linkUp(wlan0), addrAdd(addr(3, "198.51.100.7")), Update{Kind: Synced})
		src := &fakeSource{snaps: [][]Update{withWlan, snapshot0()}, changes: make(chan Update), fails: 1}
		h := newHarness(t, src, &fakeJoiner{}, Policy{})
		time.Sleep(300 * time.Millisecond)
		h.wantCalls("start", "200ms add wlan0 198.51.100.7 backup=false")
		time.Sleep(2 * time.Second)
		h.wantCalls("after the resync", "200ms add wlan0 198.51.100.7 backup=false\n1s remove 1")
		h.m.Close()
	})
}

// Start gives up after SyncTimeout when no snapshot comes, and stops what
// it started.
func TestManagerStartTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := &fakeSource{snaps: [][]Update{{{Kind: Resync}}}, changes: make(chan Update)}
		m, err := New(Config{Source: src, Remote: &net.UDPAddr{IP: net.IPv4(203, 0, 113, 1)}, SyncTimeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		err = m.Start(context.Background())
		if err == nil || !strings.Contains(err.Error(), "no interface snapshot within 2s") {
			t.Errorf("Start: %v, want no interface snapshot within 2s", err)
		}
		if d := time.Since(start); d != 2*time.Second {
			t.Errorf("Start returned after %v, want 2s", d)
		}
	})
}

func TestNewNeedsRemote(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Errorf("New without Remote: no error")
	}
}
