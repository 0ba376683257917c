package session

import (
	"errors"
	"time"

	"github.com/quic-go/quic-go"
)

// Segments in QUIC datagrams (Config.DatagramData), the second of issue
// 30's two transports. On a path's reliable QUIC stream, quic-go sends a
// lost packet again on the same path, out of the scheduler's sight, and
// every later segment of that path waits for it. In datagrams, a lost
// segment is the session's to find and to send again: each path detects
// the loss of the segments it carried on the session's own Acks, as RFC
// 9002 §6.1 does with packets, and a lost segment goes back to the
// sender's retransmission queue, where the next decision for any path
// takes it first (sched.ConnInfo.RetransmitQueued). quic-go still does
// congestion control, pacing and encryption: a DATAGRAM frame is
// ack-eliciting and counts in flight, and is never retransmitted.
//
// A segment datagram is the segment's frame as on the stream
// (wire.AppendSegmentHeader, type wire.TypeSegment), alone in the
// datagram; the receiver processes it as one from the stream, and
// duplicates cost only their bytes (recv.go).

// MaxDatagramSegment is the largest SegmentSize that Config.DatagramData
// allows, bytes: a segment of it and its header (at most 19 bytes) fit in
// a DATAGRAM frame of a 1280-byte QUIC packet, the smallest that quic-go
// sends (it takes 1243 bytes of datagram then; ../shared/FACTS.md).
const MaxDatagramSegment = DefaultSegmentSize

// RFC 9002 §6.1.2: "kTimeThreshold: Maximum reordering in time before time
// threshold loss detection considers a packet lost. Specified as an RTT
// multiplier. The recommended value is 9/8." and §6.1.2's kGranularity.
//
// §6.1.1: "kPacketThreshold: Maximum reordering in packets before packet
// threshold loss detection considers a packet lost. The value
// recommended in Section 6.1.1 is 3."
const (
	dgPacketThreshold  = 3
	dgTimeThresholdNum = 9
	dgTimeThresholdDen = 8
	dgGranularity      = time.Millisecond
)

// dgSent is a segment a datagram path carried, in the order the path was
// handed them.
type dgSent struct {
	seq    uint64
	idx    uint64 // the path's count of segments taken before it
	sentAt time.Time
}

// dgLoss is a datagram path's loss detection, guarded by Session.mu. Its
// log holds one entry per segment handed to the path and neither
// acknowledged nor declared lost when it reaches the log's front: at most
// the sender's unacknowledged segments (Config.MaxUnacked over the segment
// size), each once per time it was handed to this path.
type dgLoss struct {
	sent         []dgSent  // in the order handed to the path; sent[head:] are live
	head         int       // first live entry
	taken        uint64    // segments the path's writer took
	largestAcked uint64    // 1 + the idx of the latest-taken first transmission of this path that the peer acknowledged (0: none)
	lastAckAt    time.Time // when the peer last acknowledged a segment this path carried
	suspectSince time.Time // when the tail rule declared a loss with nothing acknowledged for a probe timeout (zero: not suspect)
	lost         uint64    // segments declared lost on this path
	ptoCount     int       // tail losses since the peer last acknowledged a segment of this path: the probe timeout's backoff exponent
}

// dgMaxPTOBackoff caps dgLoss.ptoCount's doubling: 2^16 probe timeouts of a
// millisecond or more outlast Config.AckTimeout's default (a minute), which
// ends a session its peer does not acknowledge, so the cap only keeps the
// shift from overflowing.
const dgMaxPTOBackoff = 16

// sentLocked logs segment g taken by the path's writer at now.
func (d *dgLoss) sentLocked(g *segment, now time.Time) {
	g.dgSentAt, g.dgIdx = now, d.taken
	if d.head > 0 && d.head >= len(d.sent)/2 { // slide down rather than grow
		n := copy(d.sent, d.sent[d.head:])
		d.sent, d.head = d.sent[:n], 0
	}
	d.sent = append(d.sent, dgSent{seq: g.seq, idx: d.taken, sentAt: now})
	d.taken++
}

// ackedLocked notes at now that the peer acknowledged segment g, which
// the path carried. Only a first transmission moves largestAcked: the
// path takes new segments in sequence order, so one acknowledged proves
// that every segment the path took before it was either received or is
// missing from the Ack's ranges for good, since an Ack lists its lowest
// runs first (segRuns.appendRanges). A retransmission has a lower
// sequence number than segments taken before it, which an Ack with its
// ranges cut at wire.MaxAckRanges may leave out though they arrived.
func (d *dgLoss) ackedLocked(g *segment, now time.Time) {
	d.lastAckAt, d.suspectSince, d.ptoCount = now, time.Time{}, 0
	if !g.resent && g.dgIdx >= d.largestAcked {
		d.largestAcked = g.dgIdx + 1
	}
}

// dgLossLocked runs every datagram path's loss detection at now and
// returns when to run it next (zero: on the next Ack or send only);
// Session.mu is held.
func (s *Session) dgLossLocked(now time.Time) (next time.Time) {
	if !s.cfg.DatagramData {
		return
	}
	for _, p := range s.slots {
		if p != nil && p.dg != nil {
			next = sooner(next, s.detectLostLocked(p, now))
		}
	}
	return next
}

// detectLostLocked declares lost the segments of datagram path p that RFC
// 9002 §6.1 would: "The packet is unacknowledged, in flight, and was sent
// prior to an acknowledged packet", and either "The packet was sent
// kPacketThreshold packets before an acknowledged packet", counted in the
// segments the path took, or "Sufficient time has passed since the packet
// was sent", kTimeThreshold × max(smoothed_rtt, latest_rtt).
// A segment with nothing acknowledged after it (the tail) is declared lost
// once the path has had no acknowledgement for a probe timeout (§6.2.1:
// smoothed_rtt + max(4·rttvar, kGranularity) + max_ack_delay: probeTimeout), where RFC
// 9002 would send a probe: here the retransmission is the probe, on the
// path the scheduler picks. That departs from §6.2 ("A PTO timer
// expiration event does not indicate packet loss and MUST NOT cause prior
// unacknowledged packets to be marked as lost") on purpose: the session's
// bytes in flight are what let the scheduler give a path more, and a path
// whose whole tail was lost, with nothing declared lost, never showed room
// again (TestDatagramDataLossyPathsComplete); and with several paths the
// tail is better sent on one that answers. Each such tail loss doubles
// the probe timeout until the peer acknowledges a segment of the path
// again (§6.2.1: "When a PTO timer expires, the PTO backoff MUST be
// increased, resulting in the PTO period being set to twice its current
// value"; dgLoss.ptoCount). It returns when the front segment would
// become lost.
func (s *Session) detectLostLocked(p *path, now time.Time) time.Time {
	d := p.dg
	sn := &s.snd
	bit := uint64(1) << uint(p.slot)
	v := p.viewLocked(now)
	rtt := max(v.srtt, v.latestRTT)
	if rtt == 0 {
		rtt = initialRTT
	}
	thr := max(rtt*dgTimeThresholdNum/dgTimeThresholdDen, dgGranularity)
	pto := probeTimeout(v.srtt, v.rttVar) << min(d.ptoCount, dgMaxPTOBackoff)
	tail := false // a segment was declared lost by the tail rule: one more backoff
	for ; d.head < len(d.sent); d.head++ {
		e := d.sent[d.head]
		g := sn.get(e.seq)
		if g == nil || g.acked || g.sentOn&bit == 0 || g.dgSentAt.After(e.sentAt) {
			continue // acknowledged, lost already, or handed again later: a later entry
		}
		age := now.Sub(e.sentAt)
		early := e.idx < d.largestAcked
		reordered := e.idx+dgPacketThreshold < d.largestAcked
		silent := now.Sub(d.lastAckAt) >= pto && age >= pto
		if !reordered && !(early && age >= thr) && !silent {
			due := max2(e.sentAt, d.lastAckAt).Add(pto)
			if early {
				due = sooner(due, e.sentAt.Add(thr))
			}
			d.backOff(tail)
			return due
		}
		if silent && !reordered && !early {
			tail = true
			if d.suspectSince.IsZero() {
				d.suspectSince = now
			}
		}
		s.dgLostLocked(p, g, now)
	}
	d.sent, d.head = d.sent[:0], 0
	d.backOff(tail)
	return time.Time{}
}

// backOff doubles the probe timeout after a tail loss (detectLostLocked).
func (d *dgLoss) backOff(tail bool) {
	if tail {
		d.ptoCount++
	}
}

// dgLostLocked declares segment g lost on datagram path p: p no longer
// carries it, and unless another path does, it goes back to the
// retransmission queue, for a path the scheduler picks.
func (s *Session) dgLostLocked(p *path, g *segment, now time.Time) {
	sn := &s.snd
	g.sentOn &^= 1 << uint(p.slot)
	p.segsInFlight--
	p.outstanding -= min(frameLen(g), p.outstanding)
	p.dg.lost++
	s.stats.dgLost++
	if s.obs != nil {
		s.obsLostLocked(now, p.id, g.seq) // delivered by the send pass (obsqueue.go)
	}
	if g.sentOn == 0 && !g.inRetrans {
		g.inRetrans = true
		sn.retrans = append(sn.retrans, g.seq)
	}
}

// suspectLocked reports whether the path is suspect at v: its tail was
// declared lost with nothing acknowledged for a probe timeout, and no
// packet came from the peer on the path since (quic-go's acknowledgement
// of its own probes is one). A suspect path shows potentially failed to
// the scheduler (path.info): the losses freed its bytes in flight, and
// without this a path that went dark took the retransmissions of its own
// lost segments, and then new ones, until the failure detection of
// failure.go.
func (d *dgLoss) suspectLocked(v linkView) bool {
	if d.suspectSince.IsZero() {
		return false
	}
	if v.lastRecv.After(d.suspectSince) {
		d.suspectSince = time.Time{}
		return false
	}
	return true
}

// sendSegmentDatagrams sends the segment frames in buf, which end at ends,
// one per datagram on p, and advances the writer's committed bytes as each
// is queued. It blocks while quic-go queues 32 datagrams; Session.mu is
// not held. It returns the first error other than a datagram too large
// (which cannot happen for a segment within MaxDatagramSegment).
func (s *Session) sendSegmentDatagrams(p *path, buf []byte, ends []int) error {
	start := 0
	for _, end := range ends {
		err := p.sendDatagram(buf[start:end])
		p.pw.committed.Add(uint64(end - start))
		var tooLarge *quic.DatagramTooLargeError
		if err != nil && !errors.As(err, &tooLarge) {
			return err
		}
		start = end
	}
	return nil
}
