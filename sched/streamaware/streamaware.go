// Package streamaware is SA-ECF, the Stream-Aware Earliest Completion First
// scheduler (Rabitsch, Hurtig, Brunstrom, "A Stream-Aware Multipath QUIC
// Scheduler for Heterogeneous Paths", EPIQ 2018).
//
// The paper's abstract: "SA-ECF schedules the sending of stream data so that
// the completion of individual streams are not delayed by slower paths,
// while providing a fair allocation of the aggregated bandwidth based on
// stream priority information from HTTP/2". The paper's text was not
// available here; its rule is taken from the scheduler's code as carried in
// public forks of the authors' MPQUIC (quic-go) implementation
// (scheduler.go, selectPathStreamAwareEarliestCompletionFirst):
//
//  1. The best path is the live path with the lowest smoothed RTT; the
//     second best the lowest-RTT path that can send. If the best path can
//     send (or a retransmission is due), it takes the data, and "best path
//     always sends next stream in turn".
//  2. Otherwise the streams are visited in the stream scheduler's
//     (priority) order. For each, k is "bytes until completion" of that
//     stream, capped by the total queued data ("to cope with streams that
//     are about to finish"), and ECF's two tests run with the stream's own
//     waiting bit: the first stream that should not wait for the best path
//     is sent on the second best path; a stream that should wait is marked
//     waiting and skipped. If every stream waits, nothing is sent.
//
// So SA-ECF is ECF (sched/ecf, whose Test it uses) with k and the waiting
// bit per stream, plus the choice of WHICH stream goes on the slow path.
// The fork's first test caps k at cwnd_f ("xBest := queueSize; if queueSize
// > cwndBest { xBest = cwndBest }", under the comment "if queueSize <
// cwndBest"): an evident slip for the floor ECF applies (k raised to
// cwnd_f); the floor is implemented, as sched/ecf does.
//
// In this transport the session's framer, not the scheduler, picks which
// stream's data a segment carries (RFC 9218 urgency order, non-incremental
// streams one at a time), and ConnInfo describes the stream of the next
// segment only. Step 2 is mapped onto that:
//   - The stream of the next segment is the first stream in order. k =
//     min(SendBufferBytes, StreamRemaining + SegmentSize), in packets
//     (StreamRemaining does not count the at most one segment already
//     framed). Its waiting bit is kept in a table of the last
//     waitSlots stream IDs.
//   - If it should wait, the data behind it — the later streams, taken as
//     one, k = the rest of the queue — is the next candidate, with a
//     waiting bit of its own. If that should not wait, the segment after the
//     waiting stream's goes on the second best path by SendSeq, leaving the
//     waiting stream's segments (cut and reserved) for the best path; later
//     decisions continue past the last segment given away. For a
//     non-incremental stream, whose bytes precede every later stream's in
//     the connection byte stream, that segment is the one after all its
//     bytes; for an incremental one, which the framer serves one record at
//     a time round-robin with the others of its urgency, it is the next
//     segment, the next stream's record (its later records may then follow
//     on the second path: the scheduler cannot tell whose a segment is). The reservation is at most maxReserve bytes, within
//     the peer's window, and leaves a full segment of queued data beyond it
//     (so the segment exists: the session would otherwise send the next
//     segment, the waiting stream's, instead); else the scheduler waits.
//   - Without a stream (control data) the connection's queue is one stream.
//
// Other choices: a path without an RTT sample, or no best path, falls back
// to minrtt.Pick; backups only when no regular path is live; a stream's path
// preference is honoured as minRTT honours it. Decide does not allocate; the
// state is a fixed-size table.
package streamaware

import (
	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/ecf"
	"github.com/mpqsched/mpqsched/sched/minrtt"
)

// Name is the registry name.
const Name = "streamaware"

func init() { sched.Register(Name, func() sched.Scheduler { return New() }) }

// waitSlots is how many streams' waiting bits the scheduler remembers; a
// stream not in the table starts with its bit clear.
const waitSlots = 16

// maxReserve bounds the bytes a SendSeq may cut ahead of the next segment
// (the session cuts at most 1 MiB for a reservation).
const maxReserve = 1 << 20

// Scheduler is an SA-ECF scheduler for one connection. Not safe for
// concurrent use (the transport serializes Decide).
type Scheduler struct {
	ids     [waitSlots]uint64 // stream IDs with a waiting bit
	on      [waitSlots]bool   // their waiting bits
	used    int               // slots filled
	next    int               // slot to replace when full
	behind  bool              // waiting bit of the data behind a waiting stream
	conn    bool              // waiting bit of data without a stream
	skipped bool              // a SendSeq gave away segments behind lastStream's
	lastSID uint64            // the stream whose segments were skipped
	lastSeq uint64            // the last segment given to the second path
}

// New returns an SA-ECF scheduler.
func New() *Scheduler { return &Scheduler{} }

// Name implements sched.Scheduler.
func (*Scheduler) Name() string { return Name }

// Quick implements sched.Quick: its calls are arithmetic on the paths and
// a few fields, so the transport may make them with its locks held.
func (*Scheduler) Quick() bool { return true }

// Decide implements sched.Scheduler.
func (s *Scheduler) Decide(conn *sched.ConnInfo, paths []sched.PathInfo) sched.Decision {
	if k, _ := conn.PreferredIndex(paths); k >= 0 {
		if !paths[k].SendingAllowed() {
			return sched.Decision{Action: sched.Wait}
		}
		return send(k)
	}
	i, f := minrtt.PickAndFaster(paths)
	if i < 0 {
		return sched.Decision{Action: sched.Wait}
	}
	if f < 0 || conn.RetransmitQueued > 0 {
		s.skipped = false
		return send(i)
	}
	pf, ps := &paths[f], &paths[i]
	if !ecf.Testable(pf, ps) {
		return send(i)
	}
	seg := conn.SegmentSize
	if seg == 0 {
		seg = pf.MSS
	}
	queue := conn.SendBufferBytes
	if !conn.HasStream {
		w, bit := ecf.Test(float64(queue)/float64(seg), pf, ps, s.conn, true)
		s.conn = bit
		if w {
			return sched.Decision{Action: sched.Wait}
		}
		return send(i)
	}
	kb := min(queue, conn.StreamRemaining+seg)
	slot := s.slot(conn.StreamID)
	w, bit := ecf.Test(float64(kb)/float64(seg), pf, ps, s.on[slot], true)
	s.on[slot] = bit
	if !w {
		s.skipped = false
		return send(i)
	}
	// The stream waits for the best path: SA-ECF tries the next stream.
	if queue <= kb {
		return sched.Decision{Action: sched.Wait}
	}
	skip := (kb + seg - 1) / seg // a non-incremental stream's bytes come first
	if conn.Incremental {
		skip = 1 // round-robin: the next segment holds the next stream's record
	}
	seq := conn.NextSeq + skip
	if s.skipped && s.lastSID == conn.StreamID && s.lastSeq >= conn.NextSeq {
		seq = max(seq, s.lastSeq+1)
	}
	need := (seq - conn.NextSeq + 1) * seg
	if need > maxReserve || need > conn.PeerWindow || need+seg > queue {
		return sched.Decision{Action: sched.Wait}
	}
	w, s.behind = ecf.Test(float64(queue-kb)/float64(seg), pf, ps, s.behind, true)
	if w {
		return sched.Decision{Action: sched.Wait}
	}
	s.skipped, s.lastSID, s.lastSeq = true, conn.StreamID, seq
	return sched.Decision{Action: sched.SendSeq, Paths: sched.Of(i), Seq: seq}
}

// slot returns the table slot of stream id, taking one (its bit clear) if
// the stream has none.
func (s *Scheduler) slot(id uint64) int {
	for k := range s.used {
		if s.ids[k] == id {
			return k
		}
	}
	k := s.next
	if s.used < waitSlots {
		k = s.used
		s.used++
	} else {
		s.next = (s.next + 1) % waitSlots
	}
	s.ids[k], s.on[k] = id, false
	return k
}

// Waiting reports stream id's waiting bit (false if it has none).
func (s *Scheduler) Waiting(id uint64) bool {
	for k := range s.used {
		if s.ids[k] == id {
			return s.on[k]
		}
	}
	return false
}

func send(i int) sched.Decision { return sched.Decision{Action: sched.SendNext, Paths: sched.Of(i)} }

var _ sched.Scheduler = (*Scheduler)(nil)
