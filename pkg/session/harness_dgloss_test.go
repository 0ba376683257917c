package session

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/wire"
)

// Loss detection of the datagram transport (Config.DatagramData,
// dgdata.go), checked on what the session sends: each path detects the loss
// of the segments it carried on the peer's Acks as RFC 9002 §6.1 does with
// packets, and sends a lost segment again.

// dgLossDelay is the one-way delay of these tests' path: an RTT of 100 ms,
// so that the packet threshold, the time threshold (9/8 of the RTT) and the
// probe timeout fall tens of milliseconds apart.
const dgLossDelay = 50 * time.Millisecond

// dgLossSegments opens a stream on a DatagramData session and writes five
// segments' worth on it, and returns them as the peer got them (their
// sequence numbers 0-4) and when the first one left the session.
func dgLossSegments(t *testing.T) (*testSession, []segmentFrame, time.Time) {
	tc := newTestSession(t, &Config{DatagramData: true}, harnessLink(dgLossDelay))
	sent := time.Now()
	tc.openWritten(strings.Repeat("x", 5*1200))
	var segs []segmentFrame
	for _, f := range tc.collect(dgLossDelay + 5*time.Millisecond)[0] {
		if g, ok := f.(segmentFrame); ok {
			segs = append(segs, g)
		}
	}
	if len(segs) != 5 {
		t.Fatalf("got %d segments, want 5: %v", len(segs), segs)
	}
	for i, g := range segs {
		if g.Seq != uint64(i) {
			t.Fatalf("segment %d has sequence number %d", i, g.Seq)
		}
	}
	return tc, segs, sent
}

// nextSegment returns the next segment the session sends on path 0, past
// the frames of the segments before it and any AckReq, and when it
// arrived.
func nextSegment(tc *testSession, expectation string) (segmentFrame, time.Time) {
	tc.t.Helper()
	for {
		f, at := tc.readFrame(0)
		switch f := f.(type) {
		case nil:
			tc.t.Fatalf("%s: path 0 is idle", expectation)
		case segmentFrame:
			return f, at
		case dataFrame, ackReqFrame:
		default:
			tc.t.Fatalf("%s: got %v, want a segment", expectation, f)
		}
	}
}

// wantSegment0Again asserts that the next segment the session sends on
// path 0 is seg0 (dgLossSegments' first) with stream 1's data from offset
// 0, and returns when it arrived.
func wantSegment0Again(tc *testSession, seg0 segmentFrame, expectation string) time.Time {
	tc.t.Helper()
	g, at := nextSegment(tc, expectation)
	if g != seg0 {
		tc.t.Fatalf("%s: got %v, want segment 0 again (%v)", expectation, g, seg0)
	}
	if d, _ := wantFrameType[dataFrame](tc, "segment 0's data", 0); d.ID != 1 || d.Off != 0 {
		tc.t.Fatalf("segment 0 carries %v, want stream 1's data from offset 0", d)
	}
	return at
}

// RFC 9002 §6.1: "The packet is unacknowledged, in flight, and was sent
// prior to an acknowledged packet" and "The packet was sent
// kPacketThreshold packets before an acknowledged packet", where §6.1.1:
// "The RECOMMENDED initial value for the packet reordering threshold
// (kPacketThreshold) is 3". Segments 1-4 acknowledged, segment 0 not: it is
// lost as the Ack arrives, and sent again at once, before the time
// threshold (9/8 of the RTT after it was sent) would declare it lost.
func TestHarnessDatagramLossByPacketThreshold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc, segs, sent := dgLossSegments(t)
		acked := time.Now()
		tc.writeFrames(0, ackFrame{Cum: 0, Ranges: []wire.Range{{Start: 1, End: 5}}})
		at := wantSegment0Again(tc, segs[0], "segment 0, lost by the packet threshold")
		if lo, hi := acked.Add(2*dgLossDelay), acked.Add(2*dgLossDelay+5*time.Millisecond); at.Before(lo) || at.After(hi) {
			t.Errorf("segment 0 came again %v after the Ack left the peer, want %v-%v (an RTT)", at.Sub(acked), lo.Sub(acked), hi.Sub(acked))
		}
		if thr := sent.Add(9 * 2 * dgLossDelay / 8).Add(dgLossDelay); !at.Before(thr) {
			t.Errorf("segment 0 came again %v after it was first sent, not before the time threshold would have sent it (%v)", at.Sub(sent), thr.Sub(sent))
		}
		tc.writeFrames(0, ackFrame{Cum: 5})
		tc.wantIdle("every segment acknowledged: nothing is sent again")
	})
}

// RFC 9002 §6.1.2: "Once a later packet within the same packet number space
// has been acknowledged, an endpoint SHOULD declare an earlier packet lost
// if it was sent a threshold amount of time in the past", "kTimeThreshold
// × max(smoothed_rtt, latest_rtt)", with "The RECOMMENDED time threshold
// (kTimeThreshold), expressed as an RTT multiplier, is 9/8". Only segment
// 1 acknowledged: segment 0 is one packet before it, under the packet
// threshold, and is sent again 9/8 of an RTT after it was first sent, not
// as the Ack arrives; segments 2-4, sent after the acknowledged one, are
// not sent again.
func TestHarnessDatagramLossByTimeThreshold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc, segs, sent := dgLossSegments(t)
		tc.writeFrames(0, ackFrame{Cum: 0, Ranges: []wire.Range{{Start: 1, End: 2}}})
		at := wantSegment0Again(tc, segs[0], "segment 0, lost by the time threshold")
		// It left the session 9/8 of an RTT after its first transmission
		// and arrives a one-way delay later; the RTT is quic-go's estimate,
		// at least 2·dgLossDelay.
		lo := sent.Add(9 * 2 * dgLossDelay / 8).Add(dgLossDelay)
		if hi := lo.Add(15 * time.Millisecond); at.Before(lo) || at.After(hi) {
			t.Errorf("segment 0 came again %v after it was first sent, want %v-%v", at.Sub(sent), lo.Sub(sent), hi.Sub(sent))
		}
		tc.writeFrames(0, ackFrame{Cum: 5})
		tc.wantIdle("every segment acknowledged: nothing is sent again")
	})
}

// RFC 9002 §6.2.1: "When a PTO timer expires, the PTO backoff MUST be
// increased, resulting in the PTO period being set to twice its current
// value." With no Ack at all, the path's tail is sent again at each probe
// timeout (the retransmission is the probe: dgdata.go), each timeout twice
// the one before. A round also waits for the path, suspect after its tail
// was lost, to be heard from again (dgLoss.suspectLocked: here the QUIC
// acknowledgement of an AckReq, which the session sends at most a second
// apart), so the rounds come at the doubled timeouts rounded up to that:
// what the test checks is that the gaps keep growing, where without the
// backoff they stay at two seconds until AckTimeout ends the session.
func TestHarnessDatagramProbeTimeoutBacksOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc, _, sent := dgLossSegments(t)
		var rounds []time.Time // when segment 0 came again
		for len(rounds) < 7 && time.Since(sent) < DefaultAckTimeout {
			f, at := tc.readFrame(0) // nil after a second of nothing: the session's AckReqs back off to that
			if g, ok := f.(segmentFrame); ok && g.Seq == 0 {
				rounds = append(rounds, at)
			}
		}
		if len(rounds) < 7 {
			t.Fatalf("segment 0 came again %d times in %v, want 7", len(rounds), time.Since(sent))
		}
		var gaps []time.Duration
		for i := 1; i < len(rounds); i++ {
			gaps = append(gaps, rounds[i].Sub(rounds[i-1]))
		}
		t.Logf("segment 0 sent again %v after it was first sent, then after %v", rounds[0].Sub(sent), gaps)
		for i := 1; i < len(gaps); i++ {
			if gaps[i] <= gaps[i-1] {
				t.Errorf("the gap before round %d (%v) is no longer than the one before it (%v)", i+2, gaps[i], gaps[i-1])
			}
		}
		if last, third := gaps[len(gaps)-1], gaps[1]; last < 2*third {
			t.Errorf("the gap before the last round (%v) is under twice the gap before the third (%v): four doublings of the timeout lie between them", last, third)
		}
	})
}

// Issue 30: "Data declared lost on a path, or stuck on a failed one, is
// framed again and offered to the scheduler like new data, on any path"
// (in RFC 10069's model a path's packet numbers are its own, a frame's
// data is not tied to the path that lost it). A segment the slow path carried is declared lost (three segments the slow
// path took after it are acknowledged: RFC 9002 §6.1.1's packet threshold,
// counted per path), and minRTT sends it again on the fast path, which has
// room once the same Ack freed it.
func TestHarnessDatagramLossSentAgainOnTheOtherPath(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const fast, slow = 0, 1
		tc := newTestSession(t, &Config{DatagramData: true}, harnessLink(5*time.Millisecond), harnessLink(dgLossDelay))
		tc.openWritten(strings.Repeat("x", 200_000))
		on := map[uint64]int{} // segment → the path it came on
		var slowSegs []uint64
		maxSeq := uint64(0)
		fs := tc.collect(dgLossDelay + 5*time.Millisecond)
		for p := range fs {
			for _, f := range fs[p] {
				if g, ok := f.(segmentFrame); ok {
					on[g.Seq] = p
					maxSeq = max(maxSeq, g.Seq)
					if p == slow {
						slowSegs = append(slowSegs, g.Seq)
					}
				}
			}
		}
		if len(slowSegs) < 4 {
			t.Fatalf("the slow path carried %d segments (%v), want 4 or more: the test tests nothing", len(slowSegs), slowSegs)
		}
		lost := slowSegs[0]
		acked := time.Now()
		tc.writeFrames(fast, ackFrame{Cum: lost, MaxData: 1 << 22, Ranges: []wire.Range{{Start: lost + 1, End: maxSeq + 1}}})
		for {
			f, at := tc.readFrame(fast)
			if f == nil {
				t.Fatalf("segment %d (lost on the slow path) never came again on the fast path", lost)
			}
			g, ok := f.(segmentFrame)
			if !ok || g.Seq != lost {
				continue
			}
			if hi := acked.Add(2*5*time.Millisecond + 5*time.Millisecond); at.After(hi) {
				t.Errorf("segment %d came again on the fast path %v after the Ack, want within %v", lost, at.Sub(acked), hi.Sub(acked))
			}
			break
		}
		for _, f := range tc.drain(slow) {
			if g, ok := f.(segmentFrame); ok && g.Seq == lost {
				t.Errorf("segment %d was sent again on the slow path too", lost)
			}
		}
	})
}

// RFC 9000 §13.2.1: "In order to assist loss detection at the sender, an
// endpoint SHOULD generate and send an ACK frame without delay when it
// receives an ack-eliciting packet either: when the received packet has a
// packet number less than another ack-eliciting packet that has been
// received, or when the packet has a packet number larger than the
// highest-numbered ack-eliciting packet that has been received and there
// are missing packets between that packet and this packet." The session as
// the receiver of a peer that sends its segments in datagrams
// (Config.DatagramData), where a missing one may be lost: a segment after a
// gap, and the one that fills it, are each acknowledged at once; an
// in-order one waits for AckDelay.
func TestHarnessDatagramSegmentsOutOfOrderAckedAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const delay = 5 * time.Millisecond
		const ackDelay = 20 * time.Millisecond
		tc := newTestSession(t, &Config{AckDelay: ackDelay}, harnessLink(delay))
		segs := tc.cut(
			dataFrame{ID: 0, Data: strings.Repeat("a", 100)},
			dataFrame{ID: 0, Data: strings.Repeat("b", 100)},
			dataFrame{ID: 0, Data: strings.Repeat("c", 100)},
		)
		rtt := 2 * delay
		sent := time.Now()
		tc.writeFrames(0, dgSegment(segs[0]))
		if _, at := tc.wantAck("segment 0, in order", 0, 1); at.Sub(sent) < rtt+ackDelay {
			t.Errorf("the Ack of an in-order segment came %v after it left, want AckDelay (%v) or more past the RTT", at.Sub(sent), ackDelay)
		}
		sent = time.Now()
		tc.writeFrames(0, dgSegment(segs[2])) // segment 1 missing
		a, at := wantFrameType[ackFrame](tc, "a segment after a gap", 0)
		if want := []wire.Range{{Start: 2, End: 3}}; a.Cum != 1 || len(a.Ranges) != 1 || a.Ranges[0] != want[0] {
			t.Errorf("got %v, want cum 1 and ranges %v", a, want)
		}
		if limit := rtt + time.Millisecond; at.Sub(sent) > limit {
			t.Errorf("the Ack of a segment after a gap came %v after it left, want at most %v (without delay)", at.Sub(sent), limit)
		}
		sent = time.Now()
		tc.writeFrames(0, dgSegment(segs[1])) // fills the gap
		if _, at := tc.wantAck("the segment that fills the gap", 0, 3); at.Sub(sent) > rtt+time.Millisecond {
			t.Errorf("the Ack of the segment below one received came %v after it left, want at most %v (without delay)", at.Sub(sent), rtt+time.Millisecond)
		}
		st, err := tc.s.AcceptStream(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if got, want := string(tc.readAll(st, 300)), strings.Repeat("a", 100)+strings.Repeat("b", 100)+strings.Repeat("c", 100); got != want {
			t.Errorf("the stream read %q…, want a, b, c", got[:10])
		}
		tc.wantIdle("nothing more")
	})
}
