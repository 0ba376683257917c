package session

import (
	"time"

	"github.com/mpqsched/mpqsched/sched"
)

// Streams pinned to a path that cannot take their data wait alone (issue
// 30: "two bulk streams, each on its own path").
//
// Segments leave in sequence order, so a segment whose stream is pinned
// (Stream.SetPathPreference with pin) to a path without room would make the
// scheduler wait, and every other stream's data framed after it would wait
// too. Since protocol version 4 the peer processes segments in any order,
// so the session sets such a segment aside instead: the stream is parked
// (out of the framer's ready queue: no more of its data is framed) and its
// unsent segments are deferred (skipped by nextUnsent and ConnInfo). At the
// start of each scheduling round the scheduler is asked once more about
// each parked stream's first deferred segment; when it sends it, the
// stream's other deferred segments follow, and once none is left the
// stream is framed again.
//
// Bounds: a stream is parked at most once (one entry in deferredStreams);
// its deferred segments are those cut before it was parked, at most the
// peer's window. A round asks about each parked stream once.

// deferredStreams lists the parked streams, oldest first, with their
// deferred segments.
type deferredStream struct {
	st   *Stream
	segs []*segment // unsent segments of st, in sequence order
}

// parkLocked parks the stream of the next new segment, which the scheduler
// just declined because the stream is pinned to a path without room, and
// defers that segment (cutting it from pend if needed) and any other unsent
// one of the stream. It reports whether it parked anything: if so the
// round goes on with the segments after it. Session.mu is held.
func (s *Session) parkLocked() bool {
	sn := &s.snd
	ci := &sn.ci
	if ci.Preference != sched.PinPath || ci.RetransmitQueued > 0 || !ci.HasStream {
		return false
	}
	g := sn.get(ci.NextSeq)
	if g == nil {
		if sn.pend.Len() == 0 {
			s.fillLocked(int(sn.segSize)) // the stream ConnInfo described is framed first
		}
		if g = sn.cut(); g == nil {
			return false
		}
	}
	st := g.stream
	if st == nil || st.prio.parked || g.sent || g.deferred {
		return false
	}
	st.prio.parked = true
	if st.inReady {
		s.streams.ready.remove(st)
		st.inReady = false
	}
	ds := deferredStream{st: st}
	for q := g.seq; q < sn.nextSeq; q++ {
		if h := sn.get(q); h != nil && !h.sent && !h.deferred && h.stream == st {
			h.deferred = true
			ds.segs = append(ds.segs, h)
		}
	}
	sn.deferred = append(sn.deferred, ds)
	return true
}

// offerDeferredLocked asks the scheduler, once per parked stream, about its
// first deferred segment, and sends what it is told to. It returns false if
// the round must end (the session closed, or no path is left). s.mu and
// schedMu are held, as in scheduleLocked.
func (s *Session) offerDeferredLocked(now time.Time) bool {
	sn := &s.snd
	for i := 0; i < len(sn.deferred); i++ {
		ds := &sn.deferred[i]
		g := ds.segs[0]
		if g.acked || g.sent {
			s.undeferLocked(i, 1)
			i-- // ask again about the stream's next deferred segment, or the next stream's now at i
			continue
		}
		sn.ci = s.connInfoLocked(now)
		sn.ci.NextSeq = g.seq
		streamInfoFor(&sn.ci, ds.st)
		d, r := s.askLocked(now, false)
		switch {
		case r == roundEnd:
			return false
		case r == roundAgain, d.Action == sched.Wait:
			continue
		}
		if d.Action == sched.SendNext {
			d.Action, d.Seq = sched.SendSeq, g.seq
		}
		g.deferred = false
		if s.applyLocked(d, now) == 0 || !g.sent {
			g.deferred = true
			continue
		}
		st := ds.st
		k := 1
		for k < len(ds.segs) && ds.segs[k].sent { // the scheduler may have taken more
			k++
		}
		s.undeferLocked(i, k)
		if i < len(sn.deferred) && sn.deferred[i].st == st {
			continue // more of this stream waits: the next round asks again
		}
		i-- // the stream left the list: the next one is at i now
	}
	return true
}

// undeferLocked drops the first k deferred segments of parked stream i;
// the stream leaves the parked list, and is framed again, when none is
// left. Session.mu is held.
func (s *Session) undeferLocked(i, k int) {
	sn := &s.snd
	ds := &sn.deferred[i]
	for _, g := range ds.segs[:k] {
		g.deferred = false
	}
	ds.segs = ds.segs[k:]
	if len(ds.segs) > 0 {
		return
	}
	st := ds.st
	sn.deferred = append(sn.deferred[:i], sn.deferred[i+1:]...)
	st.prio.parked = false
	s.streams.markReady(st)
}

// pinnedLiveLocked reports whether g's stream is pinned to a path
// (Stream.SetPathPreference with pin: "only on that path while it is
// live") that is present and not failed. Such a segment is not copied to
// other paths, neither at a probe timeout (copyAtPTOLocked) nor by
// opportunistic reinjection; it moves when its path fails. It applies to
// the segment's first new record's stream, as the scheduler's preference
// does. Session.mu is held.
func (s *Session) pinnedLiveLocked(g *segment) bool {
	st := g.stream
	if st == nil || st.prio.pref != sched.PinPath {
		return false
	}
	for _, p := range s.slots {
		if p != nil && p.id == st.prio.path {
			return !p.failed
		}
	}
	return false
}
