// Package streamaware is a stream-aware earliest-completion scheduler after
// SA-ECF (Rabitsch, Hurtig, Brunstrom, "A Stream-Aware Multipath QUIC
// Scheduler for Heterogeneous Paths", EPIQ 2018).
//
// The paper's rule, from its abstract: "SA-ECF schedules the sending of
// stream data so that the completion of individual streams are not delayed
// by slower paths". It is ECF (sched/ecf) applied per stream: the amount of
// data k that decides between the fast path and a slower one is the
// stream's, not the connection's. The paper's per-path formula was not in the
// sources available to us; the estimate below is ours, in ECF's terms.
//
// Rule. For the stream of the next segment, with k its bytes still to send,
// the completion estimate of k bytes on path p, behind what p already holds,
// is
//
//	C_p(k) = (BytesInFlight_p + BytesQueued_p + k) / rate_p + SmoothedRTT_p/2
//	rate_p = CongestionWindow_p / SmoothedRTT_p   (bytes/s)
//
// f is the live path with the lowest C_p(k): the path that alone finishes
// the stream first. If f can send, the segment goes on f. Otherwise q is the
// path that can send with the lowest C_q(MSS), the arrival of this one
// segment on q. If C_q(MSS) < C_f(k) the segment goes on q: it arrives
// before the stream would complete on f, so q adds capacity without delaying
// the stream. Otherwise the scheduler waits for f's window. A small stream
// therefore waits for the fast path even when the slow one has room; a large
// one uses both, and its tail returns to the fast path as k shrinks.
//
// Quantities in this transport:
//   - k = ConnInfo.StreamRemaining + ConnInfo.SegmentSize (the stream's
//     unframed bytes plus the segment being placed). StreamRemaining is a
//     lower bound: bytes framed but not yet sent are not counted. Without a
//     stream (ConnInfo.HasStream false) k = ConnInfo.SendBufferBytes, the
//     connection's unsent data, as ECF uses.
//   - rate_p is the window rate cwnd/SRTT, not PathInfo.DeliveryRate, which
//     is 0 until acknowledgements arrive and lags a growing window.
//   - The paper weights streams by HTTP/2 priority; here the session's
//     stream scheduler already orders streams by RFC 9218 urgency, and this
//     scheduler places the data of the stream it is given.
//
// Other choices: retransmissions (ConnInfo.RetransmitQueued > 0) go on
// minrtt.Pick's path, since lost data holds back every stream behind it; a
// path without an RTT sample is not estimated, and if no path is, the
// segment goes on minrtt.Pick's path; backups are used only when no regular
// path is live (sched.OnlyBackups); a stream's path preference is honoured
// as minRTT honours it. Decide does not allocate.
package streamaware

import (
	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/minrtt"
)

// Name is the registry name.
const Name = "streamaware"

func init() { sched.Register(Name, func() sched.Scheduler { return New() }) }

// Scheduler is the stream-aware scheduler. It has no state.
type Scheduler struct{}

// New returns a stream-aware scheduler.
func New() *Scheduler { return &Scheduler{} }

// Name implements sched.Scheduler.
func (*Scheduler) Name() string { return Name }

// Decide implements sched.Scheduler.
func (*Scheduler) Decide(conn *sched.ConnInfo, paths []sched.PathInfo) sched.Decision {
	if k, _ := conn.PreferredIndex(paths); k >= 0 {
		if !paths[k].SendingAllowed() {
			return sched.Decision{Action: sched.Wait}
		}
		return sched.Decision{Action: sched.SendNext, Paths: sched.Of(k)}
	}
	pick := minrtt.Pick(paths)
	if conn.RetransmitQueued > 0 {
		return send(pick)
	}
	k := StreamBytes(conn)
	backups := sched.OnlyBackups(paths)
	f, cf := -1, 0.0
	for i := range paths {
		p := &paths[i]
		if p.PotentiallyFailed || p.Backup && !backups {
			continue
		}
		if c, ok := Completion(p, k); ok && (f < 0 || c < cf) {
			f, cf = i, c
		}
	}
	if f < 0 {
		return send(pick)
	}
	if paths[f].SendingAllowed() {
		return send(f)
	}
	q, cq := -1, 0.0
	for i := range paths {
		p := &paths[i]
		if !p.SendingAllowed() || p.Backup && !backups {
			continue
		}
		if c, ok := Completion(p, p.MSS); ok && (q < 0 || c < cq) {
			q, cq = i, c
		}
	}
	if q >= 0 && cq < cf {
		return send(q)
	}
	return sched.Decision{Action: sched.Wait}
}

// StreamBytes is k, the stream's bytes still to send as the scheduler counts
// them: StreamRemaining plus one segment, or the connection's unsent bytes
// when the data has no stream.
func StreamBytes(conn *sched.ConnInfo) uint64 {
	if !conn.HasStream {
		return conn.SendBufferBytes
	}
	return conn.StreamRemaining + conn.SegmentSize
}

// Completion is C_p(k) in seconds: the estimated time until k more bytes
// sent on p behind what p holds have arrived. ok is false if p has no RTT
// sample or no window.
func Completion(p *sched.PathInfo, k uint64) (sec float64, ok bool) {
	if p.SmoothedRTT <= 0 || p.CongestionWindow == 0 {
		return 0, false
	}
	rtt := p.SmoothedRTT.Seconds()
	rate := float64(p.CongestionWindow) / rtt
	return float64(p.BytesInFlight+p.BytesQueued+k)/rate + rtt/2, true
}

func send(i int) sched.Decision {
	if i < 0 {
		return sched.Decision{Action: sched.Wait}
	}
	return sched.Decision{Action: sched.SendNext, Paths: sched.Of(i)}
}

var _ sched.Scheduler = (*Scheduler)(nil)
