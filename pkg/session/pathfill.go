package session

import (
	"time"

	"github.com/mpqsched/mpqsched/sched"
)

// Which stream's bytes fill a new segment for a path.
//
// The scheduler picks the path a segment goes on; the session picks the
// frames it carries, as a QUIC sender picks the streams whose frames fill
// a packet (RFC 9000 §2.3: "a sender [...] uses [...] prioritization
// information to decide which streams to send data on"). In priority order
// alone, a scheduler that puts a segment on a slower path (minRTT does
// when the fastest path's window is full) would put an urgent request's
// response there, behind the slow path's queue, while the bulk transfer
// beside it took the fast path's next turn: the rpc scenarios' loaded p99
// was 2× the best single path's.
//
// So, when a path other than the fastest one takes a new segment and
// several streams are ready, a stream whose own unsent bytes would reach
// the peer sooner by waiting for the fastest path (ECF's test, Lim et al.
// CoNEXT 2017, applied to the stream's bytes instead of the connection's)
// is passed over for this segment, in priority order, as long as another
// stream is left to fill it. The last stream left may, with one exception:
// when it is the only stream ready but another stream holds bytes it cannot
// send now (a download held by its credit beside the requests), and the
// fastest path has bytes in flight, the chosen path takes no stream data
// this turn (aloneWaitsLocked); the fastest path's Acks ask the scheduler
// again. A session with one stream frames exactly as the scheduler chose,
// so single transfers are untouched. A passed-over stream keeps its place
// and is framed first on the fastest path's next turn.
//
// Bounds: at most maxPassOver streams are looked at per segment.

// maxPassOver bounds the streams passed over for one segment.
const maxPassOver = 8

// fillForLocked frames up to one segment for the path at snapshot index i
// (or, with i < 0, for no path in particular), passing over the streams
// that should wait for a faster path. s.mu is held.
func (s *Session) fillForLocked(i int) {
	sn := &s.snd
	ss := &s.streams
	target := int(sn.segSize)
	if sn.pend.Len() >= target || ss.ready.Len() == 0 || i < 0 || i >= len(sn.snap) {
		s.fillLocked(target)
		return
	}
	f := fastestPath(sn.snap, sn.heard)
	if f < 0 || f == i {
		s.fillLocked(target)
		return
	}
	if ss.ready.Len() == 1 {
		if s.aloneWaitsLocked(ss.ready.Front(), f, i) {
			s.stats.passedOver++ // the path takes no stream data this turn
			return
		}
		s.fillLocked(target)
		return
	}
	var held [maxPassOver]*Stream
	n := 0
	for {
		st := ss.ready.Front()
		if !s.ratherWaitsLocked(st, f, i) {
			break // st fills the segment
		}
		if ss.ready.Len() == 1 || n == len(held) {
			// Every stream looked at would rather wait: the one with the
			// most bytes to send, whose completion depends least on one
			// segment's delay, fills the segment.
			j := -1
			for k, h := range held[:n] {
				if h.send.unframed() > st.send.unframed() && (j < 0 || h.send.unframed() > held[j].send.unframed()) {
					j = k
				}
			}
			if j >= 0 {
				b := held[j]
				n = copy(held[j:n], held[j+1:n]) + j
				b.inReady = true
				ss.ready.pushFront(b)
			}
			break
		}
		ss.popReady(false)
		held[n] = st
		n++
	}
	if n > 0 && ss.ready.Front().prio.pref != sched.NoPreference {
		// The scheduler chose the path for the stream ConnInfo described
		// (the first one held); a stream with a path preference of its own
		// goes only where the scheduler chose for it.
		s.restoreHeld(held[:n])
		n = 0
	}
	s.fillLocked(target)
	if n == 0 {
		return
	}
	s.restoreHeld(held[:n])
	s.stats.passedOver += uint64(n)
	if sn.pend.Len() == 0 {
		s.fillLocked(target) // nothing else could be framed: the rule never leaves the path empty
	}
}

// aloneWaitsLocked reports whether st, the only stream ready, should leave
// the slower path at snapshot index i empty and wait for the fastest path
// f: its bytes arrive sooner that way (waitForFaster), another stream holds
// unsent bytes it cannot send now (its own credit or a pinned path holds
// them: the session carries a mix of streams, not one transfer), and f has
// bytes in flight or queued, whose acknowledgement asks the scheduler
// again. With one stream in the session the scheduler's choice stands, so
// a single transfer is framed as the scheduler's paper assumes.
func (s *Session) aloneWaitsLocked(st *Stream, f, i int) bool {
	fast := &s.snd.snap[f]
	return s.streams.queued > uint64(st.send.unframed()) &&
		fast.BytesInFlight+fast.BytesQueued > 0 && s.ratherWaitsLocked(st, f, i)
}

// ratherWaitsLocked reports whether st's unsent bytes reach the peer sooner
// by waiting for the fastest path f than on the slower path at snapshot
// index i (waitForFaster); a stream with nothing to send or with a path
// preference of its own never waits.
func (s *Session) ratherWaitsLocked(st *Stream, f, i int) bool {
	sn := &s.snd
	return st.send.sendable() && st.prio.pref == sched.NoPreference &&
		waitForFaster(&sn.snap[f], &sn.snap[i], uint64(st.send.unframed()))
}

// restoreHeld puts the streams fillForLocked held back at the front of the
// ready queue, in their order, so that the next segment frames them first.
func (s *Session) restoreHeld(held []*Stream) {
	ss := &s.streams
	for k := len(held) - 1; k >= 0; k-- {
		st := held[k]
		if !st.prio.parked && st.send.sendable() {
			st.inReady = true
			ss.ready.pushFront(st)
		}
	}
}

// fastestPath returns the snapshot index of the path with the lowest
// smoothed RTT among those that heard from the peer within a probe timeout
// (bit j of heard), or −1 if none has an RTT sample. A path that went
// quiet is no longer fast, whatever its last RTT: a stream waiting for it
// would wait until it is declared failed.
func fastestPath(snap []sched.PathInfo, heard uint64) int {
	f := -1
	for j := range snap {
		p := &snap[j]
		if p.PotentiallyFailed || p.SmoothedRTT <= 0 || heard&(1<<uint(j)) == 0 {
			continue
		}
		if f < 0 || p.SmoothedRTT < snap[f].SmoothedRTT {
			f = j
		}
	}
	return f
}

// waitForFaster reports whether k bytes of one stream reach the peer sooner by
// waiting for the fast path than by leaving now on the slow path, which
// has room. On fast, they wait until its window has drained what is in
// flight and queued ahead of them (a window drains in one smoothed RTT),
// then take half a smoothed RTT; on slow, half its smoothed RTT.
func waitForFaster(fast, slow *sched.PathInfo, k uint64) bool {
	sf, ss := fast.SmoothedRTT, slow.SmoothedRTT
	if sf <= 0 || ss <= sf {
		return false
	}
	cw := max(fast.CongestionWindow, fast.MSS, 1)
	var wait time.Duration
	if backlog := fast.BytesInFlight + fast.BytesQueued + k; backlog > cw {
		wait = time.Duration(float64(sf) * float64(backlog-cw) / float64(cw))
	}
	return wait+sf/2 < ss/2
}
