package session

import (
	"errors"
	"math"
	"slices"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/mpqsched/mpqsched/pkg/wire"
	"github.com/mpqsched/mpqsched/sched"
)

// Paths that pull: the path writer on quic-go's write limiter.
//
// A path's writer hands quic-go the segments the scheduler gave the path,
// framed, with SendStream.WriteWithLimit and one byte more: a pad that the
// limiter never lets through. quic-go calls the limiter while it builds a
// packet (on its connection's goroutine, with its flow-control accounting
// locked; quic-go v0.65 send_stream.go, popNewStreamFrameForPacket), with
// the bytes the next STREAM frame may carry, and only when its congestion
// window and pacer let it send. So:
//
//   - while the segments last, the limiter lets every byte through and
//     counts it (committed): the session knows exactly what quic-go has
//     taken and what still waits (BytesQueued);
//   - when quic-go asks for more than is left (the pad is reached), it has
//     room for a packet and nothing to put in it: the path pulls. The
//     limiter lets the rest through and marks the path pulled, and
//     WriteWithLimit returns ErrWriteLimitReached without the pad;
//   - the writer, woken by that return, runs the scheduler at once on its
//     own goroutine (decideOnPull; the send pass if the scheduler is busy),
//     which decides what, if anything, the path gets: one goroutine hand-off
//     from quic-go's packer to the decision and back. A scheduler that
//     declines (BLEST and ECF waiting for a faster path) leaves the path
//     idle until its next decision: the path asks again only once it has
//     been given data.
//
// A path whose writer is idle has room (it pulled, or has sent nothing
// yet) and counts as pulled too. The limiter only touches atomics: it never
// takes a lock, never waits and never calls quic-go (TestLimiterNeverBlocks).
//
// Costs: one short packet per batch (the one that carries the batch's tail
// when quic-go could have taken more), and none per ACK: a path that has
// data queued in quic-go needs no wake-up, and one that has none asks.

// pullWriter is what the limiter and the session share of a path's writer.
type pullWriter struct {
	committed atomic.Uint64 // segment frame bytes quic-go took through the limiter since the path opened
	end       atomic.Uint64 // committed at the end of the current write's segments (the writer sets it under Session.mu before each write)
	pulled    atomic.Bool   // quic-go asked for data the path did not have, or the writer is idle, and no data was handed since
	pulls     atomic.Uint64 // times the limiter found the write's segments used up (quic-go asked for more)
	limiter   func(int) int // w.limit, made once
}

// init prepares the writer of a new path.
func (w *pullWriter) init() {
	w.limiter = w.limit
	w.pulled.Store(true) // a new path has room
}

// limit is the write limiter quic-go calls during packetization with the
// bytes the next STREAM frame may carry: it lets through what is left of
// the current write's segments and marks a pull when that is less (quic-go
// then ends the write, which wakes the writer). It must not block or call
// quic-go (SendStream.WriteWithLimit).
func (w *pullWriter) limit(maxBytes int) int {
	c, e := w.committed.Load(), w.end.Load()
	n := uint64(max(maxBytes, 0))
	if left := e - min(c, e); n > left {
		n = left
		w.pulled.Store(true)
		w.pulls.Add(1)
	}
	w.committed.Add(n)
	return int(n)
}

// queued is what the path was handed and quic-go has not taken yet, segment
// frame bytes: the writer's queue and the rest of its current write.
// Session.mu is held.
func (p *path) queued() uint64 {
	e, c := p.pw.end.Load(), p.pw.committed.Load()
	return p.queuedBytes + e - min(c, e)
}

// inflightByAcks is a first estimate of the bytes in flight on p without a
// tracer: segment frames quic-go took and the peer has not acknowledged at
// connection level. It runs late by the peer's acknowledgement delay, and
// early for data acknowledged over a faster path, and it counts packets
// quic-go declared lost until they are acknowledged
// (TestInflightEstimateAgainstQlog measures it); inflightByTime is the one
// the session uses, this one only until its log reaches back one RTT.
// Session.mu is held.
func (p *path) inflightByAcks() uint64 {
	q := p.queued()
	if p.outstanding <= q {
		return 0
	}
	return p.outstanding - q
}

// frameLen is the bytes g takes on a path's data stream.
func frameLen(g *segment) uint64 {
	return uint64(wire.SegmentHeaderLen(g.seq, g.off, int(g.size))) + g.size
}

// maxWriteBatch bounds one write of a path's writer, bytes.
const maxWriteBatch = 32 << 10

// writeLoop hands the segments queued for p to quic-go, up to maxWriteBatch
// bytes per write, through the limiter. It copies each segment into its
// batch under Session.mu, the data from the streams' send buffers
// (appendPayload): the send side's second and last copy. While it has none
// it is idle and the path counts as pulled.
func (s *Session) writeLoop(p *path) {
	w := &p.pw
	var buf []byte
	var ends []int // DatagramData: where each segment frame in buf ends
	for {
		s.mu.Lock()
		for len(p.queue) == 0 && !s.closed && s.slots[p.slot] == p {
			wake := !w.pulled.Swap(true) // idle: the path has room
			s.mu.Unlock()
			if wake {
				poke(s.wake)
			}
			select {
			case <-p.notify:
				s.handoffs.add()
			case <-s.done:
			}
			s.mu.Lock()
		}
		if s.closed || s.slots[p.slot] != p {
			s.mu.Unlock()
			return
		}
		buf, ends = buf[:0], ends[:0]
		now := s.now()
		var n uint64 // frame bytes taken from the queue
		k := 0
		for ; k < len(p.queue) && len(buf) < maxWriteBatch; k++ {
			seg := p.queue[k]
			p.queue[k] = nil
			n += frameLen(seg)
			if seg.acked {
				continue // acknowledged through another path while it waited here
			}
			if p.dg != nil {
				p.dg.sentLocked(seg, now)
			}
			buf = wire.AppendSegmentHeader(buf, seg.seq, seg.off, int(seg.size))
			buf = appendPayload(buf, seg) // the copy from the streams' buffers (framedq.go)
			if p.dg != nil {
				ends = append(ends, len(buf))
			}
		}
		// Slide the rest down so that the array is reused: re-slicing from
		// the front made enqueueLocked reallocate it after every batch. It
		// holds unacknowledged segments only, so at most
		// MaxUnackedBytes/SegmentSize pointers.
		p.queue = slices.Delete(p.queue, 0, k)
		p.queuedBytes -= n
		if len(buf) > 0 {
			w.pulled.Store(false)
			w.end.Store(w.committed.Load() + uint64(len(buf)))
		}
		s.mu.Unlock()
		if len(buf) == 0 {
			continue
		}
		s.tapSegments(p, buf)
		if p.dg != nil {
			if err := s.sendSegmentDatagrams(p, buf, ends); err != nil {
				s.pathGone(p, err)
				return
			}
			continue
		}
		buf = append(buf, 0) // the pad: the limiter never lets it through
		_, err := p.out.WriteWithLimit(buf, w.limiter)
		s.handoffs.add() // it waited for quic-go's packer to take the batch
		if errors.Is(err, quic.ErrWriteLimitReached) {
			s.decideOnPull(p) // the path pulled: every segment byte went
			continue
		}
		if err != nil {
			s.pathGone(p, err)
			return
		}
	}
}

// decideOnPull runs the scheduler for p, whose writer found quic-go asking
// for more than it had, on the writer's goroutine: unless p already has
// segments waiting, or the scheduler is busy (another writer or the send
// loop holds it, maybe with a snapshot from before the pull), in which case
// the send pass decides. A deadline the scheduler asks for (RetryAt, the
// opportunistic reinjection's) is the send pass's to keep, so it is poked
// then too. A scheduler that is not sched.Quick decides on the decider
// instead (decider.go), so that no path's writer waits for it.
func (s *Session) decideOnPull(p *path) {
	if !s.quick {
		s.decideOnPullInline(p)
		return
	}
	if !s.snd.schedMu.TryLock() {
		poke(s.wake)
		return
	}
	now := s.now()
	s.mu.Lock()
	s.pullRoundLocked(p, now)
}

// decideOnPullInline is decideOnPull for a scheduler that is not Quick:
// the round runs on the writer if the scheduler says it is quick now
// (sched.QuickUntil), else on the decider.
func (s *Session) decideOnPullInline(p *path) {
	if s.quickAt == nil {
		poke(s.dec.wake)
		return
	}
	now := s.now()
	s.mu.Lock()
	if !s.tryInlineLocked(now) {
		s.mu.Unlock()
		poke(s.dec.wake)
		return
	}
	s.pullRoundLocked(p, now)
}

// pullRoundLocked runs decideOnPull's round for p at now and releases
// s.mu and schedMu, both held; sender.inline is cleared.
func (s *Session) pullRoundLocked(p *path, now time.Time) {
	var retry time.Time
	if !s.closed && len(p.queue) == 0 {
		s.setRoomWakes(true) // as the send pass does before its scheduler reads the windows
		retry = s.scheduleLocked(now)
	}
	s.snd.inline = false
	observed := s.snd.obsq.takeLocked()
	s.mu.Unlock()
	if observed {
		s.obsDeliver()
	}
	s.snd.schedMu.Unlock()
	if !retry.IsZero() {
		poke(s.wake)
	}
}

// primeBound selects the paths that the pull rule (path.info) lets take a
// segment beyond their estimated window: those whose refill interval, the
// smoothed RTT over the congestion window (s per byte: the time quic-go's
// window takes to free a byte when it is full, its ACK clock), is no longer
// than the bound; a path without an RTT sample or window yet is always
// covered.
//
// Why not every path: a pull says quic-go had room for the packet it was
// building, which then carries the tail of the writer's batch; whether it
// has room for one more depends on its next acknowledgement. A segment a
// path takes beyond its window waits for that, about srtt·mss/cwnd: a
// millisecond on a 50 ms path with a 50 KB window, 70 ms on a path in a
// handoff's lossy phase (300 ms RTT, a 5 KB window), more with its 30%
// loss, and it holds the receive window's left edge while the faster path
// could have sent it within a millisecond (video-handoff, minRTT, 10
// seeds: 2.5 s of rebuffering against 0.2 s before the pull writer; with
// the tracer's exact bytes in flight and the rule on every path 1.4 s,
// without the rule 0.15 s; TestPullRuleSparesSlowPath). The rule
// is there to keep a path asking (with no per-ACK wake-up, a path whose
// estimate showed no room stayed idle until the next Ack: 8 Mbit/s instead
// of 24 on prs-rtt-ratio-4): the path that refills soonest keeps asking
// (a decision at each of its pulls), and each decision reads every other
// path's estimate afresh, so the others take data when it shows room.
//
// The bound is never below the fastest path's one-way delay (half the
// shortest smoothed RTT) per segment: a path whose segment beyond its
// window would wait no longer than that (srtt·mss/cwnd ≤ srtt_min/2) is
// covered too. Such a wait is below the time any path needs to deliver
// the segment. Without this floor rtt10x-256k's 100 ms path (srtt 107-134
// ms, a window of 100-170 segments: a wait of 0.7-1.0 ms, against the 10
// ms path's one-way delay of 7-16 ms with its queue) was left out, as the
// 10 ms path refills sooner (0.26-0.54 ms a segment): minRTT lost 19.6 →
// 18.7 Mbit/s, ECF 20.8 → 18.8 and prs-rtt-ratio-4's minRTT 24.3 → 22.2
// (5 and 3 seeds, runs alternated). A path in a handoff's lossy phase
// (300 ms, a 5 KB window: a 70 ms wait, against the other path's 25 ms)
// stays out (TestPrimeBoundFloor). The floor is a physical scale, not a
// fitted constant: it is the only one tried.
type primeBound float64

// primeAll covers every path.
const primeAll = primeBound(math.MaxFloat64)

// primeBoundLocked is the shortest refill interval among s's paths without
// a tracer that are neither potentially failed (nor being joined again,
// probe.go) nor backups, carry data (segments unacknowledged or waiting for
// quic-go) and have an RTT sample and a window, or half the shortest
// smoothed RTT among them over the segment size if longer (primeAll if
// no path qualifies); Session.mu is held.
func (s *Session) primeBoundLocked() primeBound {
	b := primeAll
	var minRTT time.Duration
	for _, p := range s.slots {
		if p == nil || p.tr != nil || p.outLocked() || p.backup || p.peerBackup || p.segsInFlight == 0 && p.queued() == 0 {
			continue // a path that carries nothing asks for nothing either
		}
		cwnd, srtt := p.cwndLocked()
		if srtt > 0 && cwnd > 0 {
			b = min(b, refill(srtt, cwnd))
			if minRTT == 0 || srtt < minRTT {
				minRTT = srtt
			}
		}
	}
	return b.floored(minRTT, s.snd.segSize)
}

// floored is b, or if longer the refill interval at which a segment of mss
// bytes beyond a window waits half of minRTT, the shortest smoothed RTT
// (primeBound's floor); primeAll stays primeAll.
func (b primeBound) floored(minRTT time.Duration, mss uint64) primeBound {
	if b == primeAll {
		return b
	}
	return max(b, refill(minRTT/2, mss))
}

// covers reports whether a path of smoothed RTT srtt and congestion window
// cwnd (bytes) refills no slower than b.
func (b primeBound) covers(srtt time.Duration, cwnd uint64) bool {
	return srtt == 0 || cwnd == 0 || refill(srtt, cwnd) <= b
}

// refill is the refill interval of a path, s per byte.
func refill(srtt time.Duration, cwnd uint64) primeBound {
	return primeBound(srtt.Seconds() / float64(cwnd))
}

// primeRetryLocked is when to ask the scheduler again after it waited at
// now with snapshot snap (of the paths in slots), if a path the pull rule
// did not cover (prime) showed no room and no path has data waiting for
// quic-go (whose pull is a decision anyway): one refill interval of a
// segment (srtt·mss/cwnd) after now for the soonest such path, or when its
// estimate goes stale (quietLocked) if later; zero if none.
// Without a tracer nothing else need wake the scheduler when that path's
// window frees: its next pull comes only once it has data, and the other
// paths may be idle (PRS waits when only a lossier path has room; without
// this its transfer in TestEverySchedulerLossy20MB stopped halfway until
// the run's deadline in 2 of 3 runs). Session.mu is held.
func (s *Session) primeRetryLocked(now time.Time, prime primeBound, snap []sched.PathInfo, slots []int) (at time.Time) {
	for i := range snap {
		if snap[i].BytesQueued > 0 {
			return time.Time{} // that path pulls when quic-go takes its data
		}
	}
	for i := range snap {
		p := s.slots[slots[i]]
		pi := &snap[i]
		if p == nil || p.tr != nil || pi.PotentiallyFailed || pi.SendingAllowed() || !p.pw.pulled.Load() ||
			pi.SmoothedRTT == 0 || pi.CongestionWindow == 0 || prime.covers(pi.SmoothedRTT, pi.CongestionWindow) {
			continue
		}
		wait := time.Duration(float64(pi.SmoothedRTT) * float64(pi.MSS) / float64(pi.CongestionWindow))
		if p.segsInFlight == 0 {
			wait = max(wait, p.sv.lastRecv.Add(pi.SmoothedRTT).Sub(now)) // when quietLocked holds
		}
		at = sooner(at, now.Add(max(wait, time.Millisecond)))
	}
	return at
}

// quietLocked reports whether the peer acknowledged every segment p carried
// and p heard nothing from it for an RTT (view v at now): its estimate of
// bytes in flight, which keeps what p took in the RTT before it last heard
// from the peer, is stale. Session.mu is held.
func (p *path) quietLocked(now time.Time, v linkView) bool {
	return p.segsInFlight == 0 && !v.lastRecv.IsZero() && now.Sub(v.lastRecv) > v.srtt
}
