// Package fprs is the Fast Path Reservation Scheduler of Kubde and Sawarkar
// (fprs.txt, "Proposed Work": Path Sorting Module, Sequencing Module and
// Sequencing Logic, Fig. 4 and the allotment table of Fig. 5).
//
// FPRS sends data out of order so that it arrives in order. The fastest path
// takes the lowest unsent segments; when it is out of window room, a slower
// path that has room is given later segments, and the segments in between are
// reserved for the fast path, which will have sent them by the time the slow
// path's segments arrive.
//
// Path sorting module. Usable paths (not potentially failed, with an RTT
// sample) are sorted by the estimated arrival time of a segment handed to them
// now, ties to the lower smoothed RTT and then the lower path ID:
//
//	T_k = srtt_k                              if path k has window room
//	T_k = srtt_k · (1 + pending_k / cwnd_k)   otherwise
//
// with pending_k = BytesInFlight + BytesQueued and cwnd_k in bytes, T in
// seconds. The paper prints "Arrival time of Path k = (Cwnd_k − Pending
// Packets_k) · Srtt_k", which is the free window times the RTT: it grows with
// the room a path has and is 0 for a full path, so read literally it would
// rank a path with no room first and prefer a slow path with little room over
// an idle fast one. That is evidently not an arrival time; the formula above
// is the intent (a path with room delivers a new segment one srtt later; a
// full one must first drain its pending data at cwnd per srtt), and it gives
// the paper's order in its example (equal windows, nothing in flight: by RTT).
// See TestArrivalTimeSlip.
//
// The fast path P_1 is the first path in that order, whether or not it has
// room ("the selected path P_j with the lowest arrival time among the N
// available paths"). If it has room it sends the next segment (SendNext: the
// transport sends queued retransmissions first, then the lowest unsent
// sequence number, i.e. the reserved range), so lost data is re-sent "as soon
// as the quickest path becomes available".
//
// Sequencing module. If P_1 has no room, the paths that have room are slow
// paths, taken in arrival-time order: the first that still has an unfinished
// allotment, or can be given one, takes the segment. A slow path k is given
// an allotment of
//
//	n = ⌊space_k / MSS_k⌋ segments
//
// (the paper's "free space in congestion window") after reserving on P_1 the
// segments P_1 will send before k's data arrives. Following the paper's slot
// model ("The path r_j will appear rtt_i/rtt_j times for that interval, and
// each time it will send the packets equal to available space in its
// congestion window"; the appearance now is the window P_1 already has in
// flight), P_1 needs
//
//	need = (⌊srtt_k / srtt_1⌋ − 1) · ⌊cwnd_1 / MSS_1⌋ segments
//
// ahead of k's allotment. Segments already reserved and still unsent count
// towards it, so only need − reserved more are reserved. The allotment is the
// range [top + R, top + R + n), where top is the first sequence number not yet
// sent, reserved or allotted, and R the new reservation; the slow path sends
// it one segment per decision with SendSeq, and the skipped range is left to
// P_1's SendNext. This reproduces the allotment table of Fig. 5
// (TestFig5Allotment).
//
// Slips in the paper, implemented as intended:
//   - the arrival time (above, TestArrivalTimeSlip);
//   - Fig. 4 line 4 prints "Mj=rttj/rttj", which is always 1; the text ("The
//     path r_j will appear rtt_i/rtt_j times", "reserved on fast paths
//     according to the ratio of RTTs") means the slow path's RTT over the fast
//     path's, as in need above;
//   - the Fig. 5 table restarts one window too low from its 13th slot (it
//     gives 106–110 to P2 and to P1, and 151–155 to P3 and to P2); the test
//     checks the periodic continuation of the first 12 slots instead
//     (TestFig5Periodic).
//
// Choices where the paper is open:
//   - N paths: reservations are made on P_1 only, as in the paper's Sequencing
//     Logic and its table (P3 does not reserve for P2 there: P3's 46–50 and
//     P2's 51–55 are both due at 30 ms). Paths between P_1 and a slower path do
//     not reserve for each other.
//   - Only data that exists is reserved or allotted: the sequence space ends at
//     NextSeq + ⌈SendBufferBytes/SegmentSize⌉ + (segments already sent above
//     NextSeq), and at NextSeq + ⌊PeerWindow/SegmentSize⌋ (the peer window
//     counted from the lowest unsent segment, which is conservative whichever
//     way the transport counts it). A reservation is cut to what fits and the
//     allotment gets what remains; if nothing remains, the slow path waits:
//     P_1 will deliver the rest no later than the slow path could.
//   - A slow path finishes its allotment before it gets a new one. If P_1
//     catches up and sends part of an allotment first (its SendNext takes the
//     lowest unsent segment), the slow path continues after it.
//   - Backup paths take part only when no non-backup path has room (as
//     PathInfo.Backup says); FPRS then runs over the backup paths. A path
//     without an RTT sample cannot be sequenced; it takes the next segment
//     (SendNext) only when no measured path of its class has room, so that new
//     paths get probed.
//
// State: the frontier top and a ring of the last 128 allotments, fixed size;
// Decide does not allocate. The ring overflows only if 128 allotments lie
// above the lowest unsent segment (a fast path that stopped sending); the
// oldest is then forgotten, its segments count as reserved for P_1 (so later
// reservations may come out short) and the data bound shrinks. Time is not
// read: the model is in RTT ratios.
package fprs

import (
	"math"

	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/minrtt"
)

// Name is the registry name.
const Name = "fprs"

func init() { sched.Register(Name, func() sched.Scheduler { return New() }) }

// ringSize is the number of allotments remembered.
const ringSize = 128

// allotment is a range of segments given to a slow path.
type allotment struct {
	path  sched.PathID // the slow path
	start uint64       // first segment of the allotment
	next  uint64       // first segment not sent yet; [start, next) are sent
	end   uint64       // one past the last segment
}

// Scheduler is the FPRS scheduler; one instance serves one connection.
type Scheduler struct {
	top   uint64                  // first sequence number not sent, reserved or allotted
	ring  [ringSize]allotment     // allotments in creation order, so in sequence order
	head  int                     // index of the oldest allotment in ring
	n     int                     // number of allotments in ring
	size  uint64                  // Σ (end − start) over the ring, segments
	sent  uint64                  // Σ (next − start) over the ring, segments
	order [sched.MaxPaths]int     // path indexes sorted by arrival time (scratch)
	at    [sched.MaxPaths]float64 // arrival time of paths[order[j]], seconds (scratch)
}

// New returns an FPRS scheduler.
func New() *Scheduler { return &Scheduler{} }

// Name implements sched.Scheduler.
func (*Scheduler) Name() string { return Name }

// Quick implements sched.Quick: its calls are arithmetic on the paths and
// a few fields, so the transport may make them with its locks held.
func (*Scheduler) Quick() bool { return true }

// Decide implements sched.Scheduler.
func (s *Scheduler) Decide(conn *sched.ConnInfo, paths []sched.PathInfo) sched.Decision {
	if len(paths) > sched.MaxPaths {
		paths = paths[:sched.MaxPaths]
	}
	backup := sched.OnlyBackups(paths)
	s.sync(conn.NextSeq)

	m := s.sort(paths, backup)
	if m == 0 || !anyRoom(paths, s.order[:m]) {
		// No measured path can send: probe an unmeasured one, if any.
		for i := range paths {
			p := &paths[i]
			if p.Backup == backup && p.SmoothedRTT <= 0 && p.SendingAllowed() {
				return send(i)
			}
		}
		return sched.Decision{Action: sched.Wait}
	}
	fast := s.order[0]
	if paths[fast].SendingAllowed() {
		return send(fast)
	}
	// P_1 is full: the slow paths with room, fastest arrival first, continue
	// their allotment or get a new one.
	for _, k := range s.order[1:m] {
		if !paths[k].SendingAllowed() {
			continue
		}
		if a := s.active(paths[k].ID); a != nil {
			return s.sendSeq(a, k)
		}
		if a := s.allot(conn, &paths[fast], &paths[k]); a != nil {
			return s.sendSeq(a, k)
		}
	}
	return sched.Decision{Action: sched.Wait}
}

func send(i int) sched.Decision { return sched.Decision{Action: sched.SendNext, Paths: sched.Of(i)} }

// sendSeq sends the next segment of allotment a on path index k.
func (s *Scheduler) sendSeq(a *allotment, k int) sched.Decision {
	d := sched.Decision{Action: sched.SendSeq, Paths: sched.Of(k), Seq: a.next}
	a.next++
	s.sent++
	return d
}

// ArrivalTime is the path-sorting estimate in seconds (see the package doc):
// srtt with window room, else srtt·(1 + pending/cwnd); +Inf without a window.
func ArrivalTime(p *sched.PathInfo) float64 {
	srtt := p.SmoothedRTT.Seconds()
	if p.SendingAllowed() {
		return srtt
	}
	if p.CongestionWindow == 0 {
		return math.Inf(1)
	}
	return srtt * (1 + float64(p.BytesInFlight+p.BytesQueued)/float64(p.CongestionWindow))
}

// sort fills s.order with the usable measured paths of the class, by arrival
// time (ties to minrtt.Faster), and returns how many there are.
func (s *Scheduler) sort(paths []sched.PathInfo, backup bool) int {
	m := 0
	for i := range paths {
		p := &paths[i]
		if p.Backup != backup || p.PotentiallyFailed || p.SmoothedRTT <= 0 {
			continue
		}
		t := ArrivalTime(p)
		j := m
		for ; j > 0; j-- { // insertion sort: shift later paths right
			q := &paths[s.order[j-1]]
			if s.at[j-1] < t || s.at[j-1] == t && minrtt.Faster(q, p) {
				break
			}
			s.order[j], s.at[j] = s.order[j-1], s.at[j-1]
		}
		s.order[j], s.at[j] = i, t
		m++
	}
	return m
}

func anyRoom(paths []sched.PathInfo, idx []int) bool {
	for _, i := range idx {
		if paths[i].SendingAllowed() {
			return true
		}
	}
	return false
}

// sync moves the frontier past the transport's lowest unsent segment and
// forgets allotments that lie wholly below it.
func (s *Scheduler) sync(nextSeq uint64) {
	s.top = max(s.top, nextSeq)
	for s.n > 0 && s.ring[s.head].end <= nextSeq {
		s.drop()
	}
	// Allotments are disjoint and in sequence order, so at most the oldest
	// remaining one straddles nextSeq; the segments of it below nextSeq were
	// sent by the fast path's SendNext.
	if s.n > 0 {
		if a := &s.ring[s.head]; a.next < nextSeq {
			s.sent += nextSeq - a.next
			a.next = nextSeq
		}
	}
}

// drop forgets the oldest allotment.
func (s *Scheduler) drop() {
	a := &s.ring[s.head]
	s.size -= a.end - a.start
	s.sent -= a.next - a.start
	s.head = (s.head + 1) % ringSize
	s.n--
}

// above returns how many segments at or above nextSeq the ring's allotments
// hold, and how many of those are sent; only the oldest allotment can start
// below nextSeq (see sync).
func (s *Scheduler) above(nextSeq uint64) (allotted, sent uint64) {
	allotted, sent = s.size, s.sent
	if s.n > 0 {
		if a := &s.ring[s.head]; a.start < nextSeq {
			allotted -= nextSeq - a.start
			sent -= nextSeq - a.start
		}
	}
	return allotted, sent
}

// active returns the unfinished allotment of the path, or nil. A path gets a
// new allotment only when its previous one is finished, so only its newest
// allotment can be unfinished.
func (s *Scheduler) active(id sched.PathID) *allotment {
	for j := s.n - 1; j >= 0; j-- {
		if a := &s.ring[(s.head+j)%ringSize]; a.path == id {
			if a.next < a.end {
				return a
			}
			return nil
		}
	}
	return nil
}

// allot reserves segments on the fast path f for slow path k and gives k its
// allotment, or returns nil if no segment is left for k.
func (s *Scheduler) allot(conn *sched.ConnInfo, f, k *sched.PathInfo) *allotment {
	seg := conn.SegmentSize
	if seg == 0 {
		seg = max(f.MSS, 1)
	}
	next := conn.NextSeq
	allotted, sentAhead := s.above(next) // segments ≥ NextSeq allotted to, and sent by, slow paths
	limit := min(next+(conn.SendBufferBytes+seg-1)/seg+sentAhead, next+conn.PeerWindow/seg)
	if limit <= s.top {
		return nil
	}
	room := limit - s.top

	var need uint64
	if w := uint64(k.SmoothedRTT / f.SmoothedRTT); w > 1 && f.MSS > 0 {
		need = (w - 1) * (f.CongestionWindow / f.MSS)
	}
	reserved := (s.top - next) - min(allotted, s.top-next)
	r := min(need-min(need, reserved), room)

	n := uint64(0)
	if k.MSS > 0 {
		n = min(k.Space()/k.MSS, room-r)
	}
	if n == 0 {
		return nil
	}
	if s.n == ringSize {
		s.drop()
	}
	a := &s.ring[(s.head+s.n)%ringSize]
	*a = allotment{path: k.ID, start: s.top + r, next: s.top + r, end: s.top + r + n}
	s.n++
	s.size += n
	s.top = a.end
	return a
}

var _ sched.Scheduler = (*Scheduler)(nil)
