package session

import (
	"bytes"
	"io"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/emu"
	"github.com/mpqsched/mpqsched/sched"
)

// blockingSched is minRTT whose Decide, once armed, blocks on the first
// decision made with data in flight until release is closed: a model
// inference that takes long.
type blockingSched struct {
	sched.Scheduler
	armed   atomic.Bool
	entered chan struct{} // closed when the blocking Decide begins
	release chan struct{} // closed by the test to let it return
}

func (b *blockingSched) Decide(c *sched.ConnInfo, p []sched.PathInfo) sched.Decision {
	if c.InFlightBytes > 0 && b.armed.CompareAndSwap(true, false) {
		close(b.entered)
		<-b.release
	}
	return b.Scheduler.Decide(c, p)
}

// spinUntil reports whether done is closed within a bounded number of
// yields. It does not let virtual time advance, so it also ends when the
// goroutine it waits for is stuck on a mutex (which synctest's clock does
// not see as durably blocked).
func spinUntil(done <-chan struct{}) bool {
	for range 1_000_000 {
		select {
		case <-done:
			return true
		default:
			runtime.Gosched()
		}
	}
	return false
}

// Issue 19, finding 7: "Decide, the Observer and the receiver reports run
// under s.mu. EdAR's model inference inside Decide stalls every Read, Write
// and Ack of the session." What to build, item 3: "Decide, the Observer,
// Logf and any model inference never run under a lock that Read, Write or
// the path readers need." While the client's Decide is blocked, the client
// reads data already buffered, writes into its send buffer's room, takes
// the Acks of the segments in flight and receives new data from the peer.
func TestSlowDecideBlocksNothingElse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bs := &blockingSched{entered: make(chan struct{}), release: make(chan struct{})}
		cliCfg := &Config{NewScheduler: func() sched.Scheduler {
			bs.Scheduler, _ = sched.New("minrtt")
			return bs
		}}
		link := emu.LinkConfig{RateBps: 10e6, Delay: 20 * time.Millisecond}
		tb := newTestbedCfgs(t, 1, nil, cliCfg, false, emu.PathSpec{Up: link, Down: link})
		defer tb.close()
		released := false
		defer func() {
			if !released {
				close(bs.release)
			}
		}()

		st, _ := tb.cli.OpenStream()
		if _, err := st.Write([]byte("hello")); err != nil {
			t.Fatal(err)
		}
		peer := accept(t, tb.srv, 10*time.Second)
		var hello [5]byte
		if _, err := io.ReadFull(peer, hello[:]); err != nil {
			t.Fatal(err)
		}
		down := bytes.Repeat([]byte{'d'}, 1000)
		if _, err := peer.Write(down); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second) // the client receives and buffers it
		synctest.Wait()

		up := bytes.Repeat([]byte{'u'}, 64<<10)
		bs.armed.Store(true)
		if _, err := st.Write(up); err != nil {
			t.Fatal(err)
		}
		<-bs.entered // Decide blocks with segments in flight

		readDone, writeDone := make(chan struct{}), make(chan struct{})
		var got [1000]byte
		go func() { io.ReadFull(st, got[:]); close(readDone) }()
		go func() { st.Write([]byte("more")); close(writeDone) }()
		if !spinUntil(readDone) {
			t.Fatal("Stream.Read of buffered data waits for the blocked Decide")
		}
		if !spinUntil(writeDone) {
			t.Fatal("Stream.Write into buffer room waits for the blocked Decide")
		}
		if !bytes.Equal(got[:], down) {
			t.Fatal("read the wrong bytes")
		}

		// Acks and new segments arrive while Decide is still blocked. (No
		// virtual time passed since Decide began.)
		ackedBefore := tb.cli.Stats().Paths[0].BytesAcked
		if _, err := peer.Write(down); err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
		if acked := tb.cli.Stats().Paths[0].BytesAcked; acked <= ackedBefore {
			t.Errorf("no Ack processed while Decide blocked: %d bytes acked before, %d after", ackedBefore, acked)
		}
		st.SetReadDeadline(time.Now().Add(time.Second))
		if _, err := io.ReadFull(st, got[:]); err != nil || !bytes.Equal(got[:], down) {
			t.Errorf("segments from the peer not received while Decide blocked: %v", err)
		}
		select {
		case <-bs.release:
			t.Fatal("Decide returned early")
		default:
		}

		released = true
		close(bs.release)
		st.Close()
		all := readAll(t, peer, 30*time.Second)
		want := append(append(up[:0:0], up...), "more"...)
		if !bytes.Equal(all, want) {
			t.Errorf("peer read %d bytes, want %d", len(all), len(want))
		}
	})
}

// statsSched is minRTT that calls the session's Stats from Decide, from
// DecideDatagram and from every observer call, each in a goroutine it
// waits for in real time: a deadlock shows as a timeout, not a hang.
type statsSched struct {
	sched.Scheduler
	sess                           atomic.Pointer[Session] // set once the session exists
	decides, acks, reports, dgrams atomic.Int64
	blocked                        atomic.Int64
}

func (x *statsSched) stats(n *atomic.Int64) {
	s := x.sess.Load()
	if s == nil || x.blocked.Load() > 0 {
		return // after one timeout, stop waiting
	}
	n.Add(1)
	done := make(chan struct{})
	go func() { s.Stats(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		x.blocked.Add(1)
	}
}

func (x *statsSched) Decide(c *sched.ConnInfo, p []sched.PathInfo) sched.Decision {
	if x.decides.Load() < 50 {
		x.stats(&x.decides)
	}
	return x.Scheduler.Decide(c, p)
}

func (x *statsSched) DecideDatagram(c *sched.ConnInfo, p []sched.PathInfo, size int) sched.PathSet {
	x.stats(&x.dgrams)
	return sched.FastestLive(p)
}

func (x *statsSched) SegmentAcked(now time.Time, path sched.PathID, seq, size uint64, sentAt time.Time) {
	x.stats(&x.acks)
}

func (x *statsSched) SegmentLost(now time.Time, path sched.PathID, seq uint64) {}

func (x *statsSched) ReceiverReport(now time.Time, r sched.ReceiverReport) { x.stats(&x.reports) }

// Issue 19, finding 7: a callback that calls Stats (which takes s.mu)
// deadlocked when made under s.mu. Decide, DecideDatagram, SegmentAcked
// and ReceiverReport each call Stats here, and each returns. Real time:
// synctest would not advance its clock past a goroutine blocked on a mutex.
func TestObserverMayCallStats(t *testing.T) {
	x := &statsSched{}
	cliCfg := &Config{ReportInterval: 20 * time.Millisecond, NewScheduler: func() sched.Scheduler {
		x.Scheduler, _ = sched.New("minrtt")
		return x
	}}
	srvCfg := &Config{ReportInterval: 20 * time.Millisecond}
	a := emu.LinkConfig{RateBps: 100e6, Delay: time.Millisecond}
	tb := newTestbedCfgs(t, 1, srvCfg, cliCfg, false, emu.PathSpec{Up: a, Down: a})
	defer tb.close()
	x.sess.Store(tb.cli)
	st, _ := tb.cli.OpenStream()
	go func() { st.Write(make([]byte, 256<<10)); st.Close() }()
	peer := accept(t, tb.srv, 10*time.Second)
	readAll(t, peer, 20*time.Second)
	for range 3 {
		tb.cli.SendDatagram([]byte("dgram"))
	}
	peer.Close()
	readAll(t, st, 20*time.Second)
	if x.blocked.Load() != 0 {
		t.Fatalf("a scheduler call that took Stats blocked (decides %d, acks %d, reports %d, datagrams %d)",
			x.decides.Load(), x.acks.Load(), x.reports.Load(), x.dgrams.Load())
	}
	if x.decides.Load() == 0 || x.acks.Load() == 0 || x.reports.Load() == 0 || x.dgrams.Load() == 0 {
		t.Errorf("callbacks not exercised: decides %d, acks %d, reports %d, datagrams %d", x.decides.Load(), x.acks.Load(), x.reports.Load(), x.dgrams.Load())
	}
}
