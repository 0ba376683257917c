package redundant

import (
	"math/rand/v2"
	"time"

	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/schedtest"
)

// fakeTransport serves decisions the way sched.Action documents them (and
// pkg/session serves them), over paths that acknowledge each segment a fixed
// number of steps after sending it. Time advances in steps of one
// millisecond. Paths are indexed as in the []sched.PathInfo snapshot.
type fakeTransport struct {
	now     time.Time
	paths   []sched.PathInfo
	delay   []int // steps from sending to acknowledgement, per path
	flight  [][]flightSeg
	total   uint64 // segments the application has to send
	segs    []fakeSeg
	base    int      // every segment below it is acknowledged
	retrans []uint64 // segments to send again, oldest first
}

type flightSeg struct {
	seq uint64
	due int // step at which the acknowledgement arrives
}

type fakeSeg struct {
	carried sched.PathSet // paths that carried the segment
	acked   bool
}

func newFakeTransport(total uint64, rtts []int, cwnds []uint64) *fakeTransport {
	t := &fakeTransport{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), total: total, delay: rtts}
	for i := range rtts {
		p := schedtest.Path(sched.PathID(i+1), time.Duration(rtts[i])*time.Millisecond, cwnds[i], 0)
		t.paths = append(t.paths, p)
	}
	t.flight = make([][]flightSeg, len(rtts))
	return t
}

// hasWork mirrors the session: a decision is asked for only while a
// retransmission or never-sent data waits.
func (t *fakeTransport) hasWork() bool {
	return len(t.retrans) > 0 || uint64(len(t.segs)) < t.total
}

func (t *fakeTransport) conn() sched.ConnInfo {
	c := schedtest.Conn(t.now, t.total-uint64(len(t.segs)))
	c.NextSeq = uint64(len(t.segs))
	c.RetransmitQueued = uint64(len(t.retrans))
	for q := t.base; q < len(t.segs); q++ {
		if !t.segs[q].acked {
			c.UnackedSegments++
			c.InFlightBytes += schedtest.MSS
		}
	}
	return c
}

// oldestUncarried is the unacknowledged segment path i has not carried with
// the lowest sequence number, or -1.
func (t *fakeTransport) oldestUncarried(i int) int {
	for q := t.base; q < len(t.segs); q++ {
		if !t.segs[q].acked && !t.segs[q].carried.Has(i) {
			return q
		}
	}
	return -1
}

// hasNext reports whether next(i) would find a segment.
func (t *fakeTransport) hasNext(i int) bool {
	for _, q := range t.retrans {
		if !t.segs[q].carried.Has(i) {
			return true
		}
	}
	return uint64(len(t.segs)) < t.total
}

// next is what a path sends when it has nothing to copy: the oldest queued
// retransmission it has not carried, else a new segment (-1: none).
func (t *fakeTransport) next(i int) int {
	for k, q := range t.retrans {
		if !t.segs[q].carried.Has(i) {
			t.retrans = append(t.retrans[:k], t.retrans[k+1:]...)
			return int(q)
		}
	}
	if uint64(len(t.segs)) < t.total {
		t.segs = append(t.segs, fakeSeg{})
		return len(t.segs) - 1
	}
	return -1
}

// apply serves d at step and returns, per path index, the segment it sent
// (-1: none) and whether, at its turn, there was a segment it could send
// (one it has not carried, or new data).
func (t *fakeTransport) apply(d sched.Decision, step int) (sent []int, avail []bool) {
	sent = make([]int, len(t.paths))
	avail = make([]bool, len(t.paths))
	shared := -1 // the segment of a SendNext that marks several paths
	for i := range sent {
		sent[i] = -1
		avail[i] = t.oldestUncarried(i) >= 0 || t.hasNext(i)
		if d.Action == sched.Wait || !d.Paths.Has(i) || !t.paths[i].SendingAllowed() {
			continue
		}
		q := -1
		switch d.Action {
		case sched.SendCopy:
			if d.Seq == sched.OldestUncarried {
				q = t.oldestUncarried(i)
			} else if d.Seq < uint64(len(t.segs)) && !t.segs[d.Seq].acked && !t.segs[d.Seq].carried.Has(i) {
				q = int(d.Seq)
			}
			if q < 0 {
				q = t.next(i)
			}
		case sched.SendNext, sched.SendSeq: // SendSeq is not used here; serve it as SendNext
			// Several marks share one segment, as in the session.
			if shared >= 0 && !t.segs[shared].acked && !t.segs[shared].carried.Has(i) {
				q = shared
			} else {
				q = t.next(i)
				shared = q
			}
		}
		if q < 0 {
			continue
		}
		t.segs[q].carried = t.segs[q].carried.Add(i)
		t.flight[i] = append(t.flight[i], flightSeg{seq: uint64(q), due: step + t.delay[i]})
		t.paths[i].BytesInFlight += schedtest.MSS
		t.paths[i].SegmentsInFlight++
		sent[i] = q
	}
	return sent, avail
}

// advance delivers the acknowledgements due at step on live paths and
// returns the segments acknowledged for the first time.
func (t *fakeTransport) advance(step int) (acked []uint64) {
	t.now = t.now.Add(time.Millisecond)
	for i := range t.paths {
		if t.paths[i].PotentiallyFailed {
			continue // a failed path delivers nothing
		}
		k := 0
		for ; k < len(t.flight[i]) && t.flight[i][k].due <= step; k++ {
			q := t.flight[i][k].seq
			t.paths[i].BytesInFlight -= schedtest.MSS
			t.paths[i].SegmentsInFlight--
			if !t.segs[q].acked {
				t.segs[q].acked = true
				acked = append(acked, q)
			}
		}
		t.flight[i] = t.flight[i][k:]
	}
	for t.base < len(t.segs) && t.segs[t.base].acked {
		t.base++
	}
	return acked
}

// setFailed marks path i potentially failed or live again. A failing path's
// segments that no live path carries are queued for retransmission, as the
// session's reinjection does; a path that comes back delivers what it held,
// as a reliable QUIC stream does.
func (t *fakeTransport) setFailed(i int, failed bool) {
	t.paths[i].PotentiallyFailed = failed
	if !failed {
		return
	}
	var live sched.PathSet
	for j := range t.paths {
		if !t.paths[j].PotentiallyFailed {
			live = live.Add(j)
		}
	}
	for _, f := range t.flight[i] {
		g := &t.segs[f.seq]
		if !g.acked && g.carried&live == 0 && !queued(t.retrans, f.seq) {
			t.retrans = append(t.retrans, f.seq)
		}
	}
}

func queued(list []uint64, q uint64) bool {
	for _, x := range list {
		if x == q {
			return true
		}
	}
	return false
}

// randomRun drives a fake transport with a few paths of seeded random RTTs,
// windows, roles and failures.
func randomRun(rng *rand.Rand) *fakeTransport {
	n := 2 + rng.IntN(3)
	rtts := make([]int, n)
	cwnds := make([]uint64, n)
	for i := range rtts {
		rtts[i] = 5 + rng.IntN(60)
		cwnds[i] = 2 + uint64(rng.IntN(30))
	}
	t := newFakeTransport(400+uint64(rng.IntN(400)), rtts, cwnds)
	for i := 1; i < n; i++ {
		t.paths[i].Backup = rng.IntN(4) == 0
	}
	return t
}
