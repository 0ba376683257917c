package session

import (
	"fmt"
	"io"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/emu"
)

// Failover of a path that dies while quic-go still holds some of its
// segments (found on video-handoff without a tracer: stalls of 13-20 s
// where the tracer's runs stalled 1.2-1.9 s).
//
// A client fetches responses one after another over a fast path A and a
// lossy slower path B, as a video player fetches chunks. Without a tracer
// the session counts as B's bytes in flight what quic-go took within the
// latest RTT before B's last packet from the peer (signals.go): a segment
// whose packet was lost, and which quic-go is sending again, drops out of
// that count one RTT after it was taken if B hears from the peer since. B
// is killed (both directions) at the first moment it is in exactly that
// state: it carries segments the peer has not acknowledged, for longer
// than a probe timeout, none of them waiting to be taken, and the session's
// estimate of its bytes in flight is 0. The data must then move to A as
// the failure rule says (failure.go): ptoFailed = 2 quic-go probe timeouts
// after B last heard from the peer, each srtt + max(4·rttvar, 1 ms) +
// max_ack_delay and the second twice the first (RFC 9002 §6.2.1), so
// 3 PTOs after the kill at the latest; then A, 10 ms RTT, delivers the
// segments sent again.

var (
	failoverA = emu.LinkConfig{RateBps: 20e6, Delay: 5 * time.Millisecond}
	failoverB = emu.LinkConfig{RateBps: 10e6, Delay: 25 * time.Millisecond}
)

const (
	failoverLossB    = 0.15      // B's downlink loss until the kill
	failoverResponse = 256 << 10 // bytes per response
	failoverRounds   = 60        // responses fetched at most, waiting for the state to kill B in
	failoverDead     = 5 * time.Second
)

// failoverResult is what one run measured.
type failoverResult struct {
	killed   bool          // the state arose and B was killed
	moved    time.Duration // from the kill to the last byte of the response under way
	bound    time.Duration // 4 PTOs of B at the kill (its srtt and rttvar then) + 60 ms for A
	pto      time.Duration
	failures uint64 // the server's path failures
}

// failoverRun runs the fetches until B is in the state described above,
// kills it, and measures how long the response under way takes to
// complete.
func failoverRun(t *testing.T, seed int64) (r failoverResult) {
	synctest.Test(t, func(t *testing.T) {
		lossy := failoverB
		lossy.Loss = failoverLossB
		tb := newTestbedOn(t, seed, nil, true, emu.PathSpec{Up: failoverA, Down: failoverA}, emu.PathSpec{Up: failoverB, Down: lossy})
		defer tb.close()
		for len(tb.srv.Paths()) < 2 {
			time.Sleep(time.Millisecond)
		}
		for range failoverRounds {
			st, err := tb.cli.OpenStream()
			if err != nil {
				t.Fatal(err)
			}
			st.Write([]byte("GET"))
			st.Close()
			peer := accept(t, tb.srv, 5*time.Second)
			readAll(t, peer, 5*time.Second)
			go func() { peer.Write(make([]byte, failoverResponse)); peer.Close() }()
			done := make(chan time.Time, 1)
			go func() {
				st.SetReadDeadline(time.Now().Add(30 * time.Second))
				n, err := io.Copy(io.Discard, st)
				if err != nil || n != failoverResponse {
					t.Errorf("response: %d bytes, %v", n, err)
				}
				done <- time.Now()
			}()
			var killedAt time.Time
			for killedAt.IsZero() {
				if stuck, pto := failoverStuck(tb.srv, tb.cli); stuck {
					killedAt, r.killed, r.pto = time.Now(), true, pto
					r.bound = 4*pto + 60*time.Millisecond
					tb.topo.Links[1].SetDown(true) // what it carries is lost too
					break
				}
				select {
				case <-done:
				case <-time.After(time.Millisecond):
					continue
				}
				break
			}
			if killedAt.IsZero() {
				continue
			}
			end := <-done
			r.moved = end.Sub(killedAt)
			// B's data may have moved at its first PTO (copyAtPTOLocked),
			// before B failed: B must still fail, by the failure rule's 3
			// PTOs, well within a second of the kill.
			time.Sleep(time.Second - r.moved)
			r.failures = tb.srv.Stats().PathFailures
			time.Sleep(failoverDead - time.Second) // B comes back for the close
			tb.topo.Links[1].SetDown(false)
			return
		}
	})
	return r
}

// failoverStuck reports whether the server's path in slot 1 carries a
// segment that the client has not received, with nothing waiting to be
// taken by quic-go, while the session's estimate of its bytes in flight
// is 0 (without a tracer; with one, the estimate it would make): quic-go
// holds the segment (it is sending it again) and the estimate has dropped
// it. It also returns the path's probe timeout. It reads the path's state
// without taking a view (viewLocked updates it).
func failoverStuck(srv, cli *Session) (bool, time.Duration) {
	now := srv.now()
	srv.mu.Lock()
	p := srv.slots[1]
	if p == nil || p.conn == nil || p.failed || p.queued() > 0 || p.segsInFlight == 0 {
		srv.mu.Unlock()
		return false, 0
	}
	st := p.conn.ConnectionStats()
	if st.SmoothedRTT == 0 {
		// No RTT sample yet: B's handshake is still under way (an early
		// path carries earlyWindow segments before it completes), and the
		// bound is made of B's probe timeout, which needs one.
		srv.mu.Unlock()
		return false, 0
	}
	pto := st.SmoothedRTT + max(4*st.MeanDeviation, time.Millisecond) + maxAckDelay
	lastRecv := p.sv.lastRecv
	if p.tr != nil {
		p.tr.mu.Lock()
		lastRecv = p.tr.lastRecv
		p.tr.mu.Unlock()
	}
	seq, found := uint64(0), false
	if p.inflightByTime(now, st.LatestRTT, lastRecv) == 0 {
		bit := uint64(1) << uint(p.slot)
		for _, g := range srv.snd.segs {
			if !g.acked && g.sentOn&bit != 0 {
				seq, found = g.seq, true
				break
			}
		}
	}
	srv.mu.Unlock()
	if !found {
		return false, 0
	}
	cli.mu.Lock()
	defer cli.mu.Unlock()
	return !cli.rcv.has(seq), pto
}

// has reports whether segment seq was received (delivered in order or
// ahead of the next in-order one); Session.mu is held.
func (r *receiver) has(seq uint64) bool {
	if seq < r.next {
		return true
	}
	for _, run := range r.runs.runs {
		if seq >= run.seq && seq < run.end {
			return true
		}
	}
	return false
}

// TestFailoverQuicHoldsSegments: killed in that state, B fails and its
// data reaches the client over A within 4 PTOs of B and 60 ms, with or
// without a tracer (before the fix, without one, the response waited for
// B to come back: 5 s and quic-go's probe backoff). The 2-PTO rule fires 3
// PTOs after B last heard from the peer; what A then needs varies with
// goroutine order (241-371 ms in all, at PTOs of 81-95 ms: 3 PTOs and
// 85 ms at worst), so the bound allows a fourth PTO, still a tenth of the
// bug's 3.7-4.0 s.
func TestFailoverQuicHoldsSegments(t *testing.T) {
	for _, traced := range []bool{false, true} {
		t.Run(fmt.Sprintf("tracer=%v", traced), func(t *testing.T) {
			forceTracer = traced
			defer func() { forceTracer = false }()
			for seed := int64(1); seed <= 3; seed++ {
				r := failoverRun(t, seed)
				if !r.killed {
					t.Fatalf("seed %d: B never carried unacknowledged segments the estimate had dropped in %d responses; the test needs that state", seed, failoverRounds)
				}
				t.Logf("seed %d: data moved %v after the kill (bound %v: B's PTO %v); server path failures %d", seed, r.moved, r.bound, r.pto, r.failures)
				if r.moved > r.bound {
					t.Errorf("seed %d: the response completed %v after B died, want ≤ %v (4 PTOs of B, %v each, and 60 ms)", seed, r.moved, r.bound, r.pto)
				}
				if r.failures == 0 {
					t.Errorf("seed %d: B was never marked potentially failed", seed)
				}
			}
		})
	}
}

// failoverIdleRun fetches one response over A and B, leaves the session
// idle for idle, cuts B, and fetches a second response of failoverResponse
// bytes: B, which sent nothing for idle, is given some of it and sends it
// onto the dead link. It returns the longest time in-order delivery of the
// second response stood still, B's probe timeout when it was cut, and the
// server's path failures.
func failoverIdleRun(t *testing.T, seed int64, idle time.Duration) (stall, pto time.Duration, failures uint64) {
	synctest.Test(t, func(t *testing.T) {
		tb := newTestbedOn(t, seed, nil, true, emu.PathSpec{Up: failoverA, Down: failoverA}, emu.PathSpec{Up: failoverB, Down: failoverB})
		defer tb.close()
		for len(tb.srv.Paths()) < 2 {
			time.Sleep(time.Millisecond)
		}
		fetch := func() (stall time.Duration) {
			st, err := tb.cli.OpenStream()
			if err != nil {
				t.Fatal(err)
			}
			st.Write([]byte("GET"))
			st.Close()
			peer := accept(t, tb.srv, 5*time.Second)
			readAll(t, peer, 5*time.Second)
			go func() { peer.Write(make([]byte, failoverResponse)); peer.Close() }()
			n, stall, err := readStalls(st, failoverResponse, 30*time.Second)
			if n < failoverResponse {
				t.Fatalf("response: %d bytes, then %v", n, err)
			}
			return stall
		}
		fetch()
		time.Sleep(idle)
		tb.srv.mu.Lock()
		if p := tb.srv.slots[1]; p != nil && p.conn != nil {
			st := p.conn.ConnectionStats()
			pto = st.SmoothedRTT + max(4*st.MeanDeviation, time.Millisecond) + maxAckDelay
		}
		tb.srv.mu.Unlock()
		tb.topo.Links[1].SetDown(true)
		cut := time.Now()
		stall = fetch()
		time.Sleep(time.Second - time.Since(cut)) // B fails within a second of the cut, its data moved or not
		failures = tb.srv.Stats().PathFailures
		time.Sleep(failoverDead)
		tb.topo.Links[1].SetDown(false)
	})
	return stall, pto, failures
}

// TestFailoverAfterIdle: a path that sent nothing for 2 s sends onto a
// dead link. Its silence since its last packet from the peer is not
// evidence (no data was outstanding): the probe timeouts count from when
// it was given data again, and the stall of in-order delivery lasts at
// most the failure rule's 3 PTOs of B and 60 ms for A, with or without a
// tracer.
func TestFailoverAfterIdle(t *testing.T) {
	for _, traced := range []bool{false, true} {
		t.Run(fmt.Sprintf("tracer=%v", traced), func(t *testing.T) {
			forceTracer = traced
			defer func() { forceTracer = false }()
			for seed := int64(1); seed <= 3; seed++ {
				stall, pto, failures := failoverIdleRun(t, seed, 2*time.Second)
				bound := 3*pto + 60*time.Millisecond
				t.Logf("seed %d: longest stall %v (bound %v: B's PTO %v); server path failures %d", seed, stall, bound, pto, failures)
				if stall > bound {
					t.Errorf("seed %d: in-order delivery stood still %v, want ≤ %v", seed, stall, bound)
				}
				if failures == 0 {
					t.Errorf("seed %d: B was never marked potentially failed", seed)
				}
			}
		})
	}
}

// RFC 9002 §6.2.4: "A probe packet MAY carry retransmitted unacknowledged
// data when new data is unavailable, when flow control does not permit new
// data to be sent, or to opportunistically reduce loss recovery delay."
// The data B alone carried goes again on A at B's first probe timeout
// (copyAtPTOLocked), not at its failure 3 PTOs after its last packet: the
// response completes within 2 PTOs of B and 60 ms of the kill in at least
// 2 of 3 seeds (84-169 ms at PTOs of 80-106 ms, the first PTO and then
// what it takes the session to see quic-go's probe; under the race
// detector one seed in a few runs still waits for the failure, 254 ms),
// and within 4 PTOs and 60 ms in all. At a444123, which waited for the
// failure, it took 241-371 ms at PTOs of 81-95 ms: no seed within 2 PTOs.
func TestFailoverDataMovesAtFirstPTO(t *testing.T) {
	for _, traced := range []bool{false, true} {
		t.Run(fmt.Sprintf("tracer=%v", traced), func(t *testing.T) {
			forceTracer = traced
			defer func() { forceTracer = false }()
			early := 0
			for seed := int64(1); seed <= 3; seed++ {
				r := failoverRun(t, seed)
				if !r.killed {
					t.Fatalf("seed %d: B never carried unacknowledged segments the estimate had dropped", seed)
				}
				t.Logf("seed %d: data moved %v after the kill (B's PTO %v)", seed, r.moved, r.pto)
				if r.moved <= 2*r.pto+60*time.Millisecond {
					early++
				}
				if r.moved > r.bound {
					t.Errorf("seed %d: the response completed %v after B died, want ≤ %v (4 PTOs of B and 60 ms)", seed, r.moved, r.bound)
				}
			}
			if early < 2 {
				t.Errorf("the response completed within 2 PTOs of B and 60 ms in %d of 3 seeds, want at least 2", early)
			}
		})
	}
}

// readStalls reads up to size bytes from st within timeout and returns how
// many it read, the longest time between two reads that brought data (from
// the call for the first), and the error that ended it early.
func readStalls(st *Stream, size int, timeout time.Duration) (n int, stall time.Duration, err error) {
	st.SetReadDeadline(time.Now().Add(timeout))
	buf := make([]byte, 64<<10)
	last := time.Now()
	for n < size {
		k, err := st.Read(buf)
		if k > 0 {
			stall = max(stall, time.Since(last))
			last = time.Now()
			n += k
		}
		if err != nil {
			return n, stall, err
		}
	}
	return n, stall, nil
}
