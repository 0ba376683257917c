package session

import (
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/emu"
)

// Acknowledgements the session asks for and gives (RFC 9000 §13.2, RFC
// 9002 §6.2), beyond harness_rules_test.go's.

// ackReqTimes returns when each AckReq arrived on path 0 after t0, for
// about d of virtual time, failing on any other frame.
func ackReqTimes(tc *testSession, t0 time.Time, d time.Duration) []time.Duration {
	var out []time.Duration
	for time.Since(t0) < d {
		f, at := tc.readFrame(0)
		switch f.(type) {
		case nil:
			continue
		case ackReqFrame:
			out = append(out, at.Sub(t0))
		default:
			tc.t.Fatalf("got %v, want only AckReqs", f)
		}
	}
	return out
}

// RFC 9002 §6.2.1: "When a PTO timer expires, the PTO backoff MUST be
// increased, resulting in the PTO period being set to twice its current
// value." and "The PTO backoff factor is reset when an acknowledgment is
// received". With its data unacknowledged the session asks for an Ack
// (AckReq, its probe) at intervals that double, up to a ceiling; once the
// peer acknowledges, the next data's first probe comes about as soon as
// the first one did.
func TestHarnessAckReqBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, &Config{AckTimeout: time.Minute})
		st, err := tc.s.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		st.Write([]byte("unacknowledged"))
		tc.wantRecord("the data", 0, dataFrame{ID: st.ID(), Data: "unacknowledged"})
		at := ackReqTimes(tc, t0, 4*time.Second)
		tc.drain(0) // an AckReq that arrived as the last one was taken
		if len(at) < 4 {
			t.Fatalf("%d AckReqs in 4 s (%v), want at least 4", len(at), at)
		}
		first := at[0]
		for k := 2; k < len(at); k++ {
			gap, prev := at[k]-at[k-1], at[k-1]-at[k-2]
			if gap < prev {
				t.Errorf("AckReq gaps %v then %v: the backoff shrank (%v)", prev, gap, at)
			}
		}
		if g1, g3 := at[1]-at[0], at[3]-at[2]; g3 < 3*g1 {
			t.Errorf("AckReq gaps %v ... %v: want them to double (%v)", g1, g3, at)
		}
		tc.ackAll(0)
		t1 := time.Now()
		st.Write([]byte("more"))
		tc.wantRecord("the new data", 0, dataFrame{ID: st.ID(), Off: uint64(len("unacknowledged")), Data: "more"})
		// The first probe's delay follows the RTT estimate, which the
		// Ack moved: within twice the first one, far below the last gap.
		again := ackReqTimes(tc, t1, 2*first+10*time.Millisecond)
		if len(again) == 0 || again[0] > 2*first {
			t.Errorf("after an Ack: first AckReq at %v, want within %v (the backoff reset; the last gap was %v)", again, 2*first, at[len(at)-1]-at[len(at)-2])
		}
	})
}

// The session's AckReq asks for an Ack at once ("its last Ack may have
// been lost", recv.go), as QUIC's IMMEDIATE_ACK frame
// (draft-ietf-quic-ack-frequency) does; RFC 9000 §13.2.1 would otherwise
// let the receiver wait: "An endpoint MUST acknowledge all ack-eliciting
// Initial and Handshake packets immediately and all ack-eliciting 0-RTT and
// 1-RTT packets within its advertised max_ack_delay". With an Ack delay of
// a second, the peer's segment is acknowledged after that second; an
// AckReq after it, with nothing new to acknowledge, is answered after one
// round trip, with the same Ack. (An AckReq that arrives while an Ack is
// already due is answered by that Ack, when it is due: recv.go ackReqDue.)
func TestHarnessAckReqAnsweredAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const delay = 5 * time.Millisecond
		const ackDelay = time.Second
		tc := newTestSession(t, &Config{AckDelay: ackDelay}, harnessLink(delay))
		sent := time.Now()
		tc.writeFrames(0, dataFrame{ID: 0, Data: strings.Repeat("q", 100)})
		tc.advance(ackDelay - 10*time.Millisecond)
		first, at := tc.wantAck("the segment, after the Ack delay", 0, 1)
		if rtt := at.Sub(sent); rtt < ackDelay || rtt > ackDelay+2*delay+time.Millisecond {
			t.Errorf("Ack after %v, want the Ack delay (%v) and a round trip", rtt, ackDelay)
		}
		sent = time.Now()
		tc.writeFrames(0, ackReqFrame{})
		again, at := tc.wantAck("the AckReq is answered", 0, 1)
		if rtt := at.Sub(sent); rtt > 2*delay+time.Millisecond {
			t.Errorf("Ack %v after the AckReq, want one round trip (%v), not the Ack delay", rtt, 2*delay)
		}
		if !reflect.DeepEqual(again, first) {
			t.Errorf("%v, then %v with nothing new received", first, again)
		}
		tc.wantIdle("one Ack per request")
	})
}

// RFC 9000 §13.2.1 (cited in §13.1): a segment that arrives twice, as a
// copy on another path would, is acknowledged again: the peer's copy is
// not ignored, and the Ack is the same.
func TestHarnessDuplicateSegmentAcknowledged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil, harnessLink(5*time.Millisecond), harnessLink(5*time.Millisecond))
		segs := tc.cut(dataFrame{ID: 0, Data: "copied"})
		tc.writeFrames(0, segs[0])
		tc.advance(50 * time.Millisecond)
		var first ackFrame
		for p := range 2 {
			for _, f := range tc.drain(p) {
				first = f.(ackFrame) // on whichever path the session likes
			}
		}
		if first.Cum != 1 {
			t.Fatalf("the segment: %v, want an Ack with cum 1", first)
		}
		tc.writeFrames(1, segs[0])
		tc.advance(100 * time.Millisecond)
		var acks int
		for p := range 2 {
			for _, f := range tc.drain(p) {
				a, ok := f.(ackFrame)
				if !ok || a.Cum != 1 {
					t.Errorf("path %d: %v, want only an Ack with cum 1", p, f)
				}
				acks++
			}
		}
		if acks != 1 {
			t.Errorf("%d Acks for the copy, want 1", acks)
		}
		tc.wantIdle("nothing more")
	})
}

// RFC 9000 §13.3: "ACK frames carry the most recent set of acknowledgments
// and the acknowledgment delay from the largest acknowledged packet, as
// described in Section 13.2.1. Delaying the transmission of packets
// containing ACK frames or resending old ACK frames can cause the peer to
// generate an inflated RTT sample or unnecessarily disable ECN." The
// session's Ack of a segment is lost (its direction of the link drops
// everything); the session does not send it again by itself; the peer's
// AckReq draws a fresh one.
func TestHarnessLostAckNotResent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil)
		link := emu.LinkConfig{RateBps: 50e6, Delay: 5 * time.Millisecond}
		lossy := link
		lossy.Loss = 1
		if err := tc.paths[0].link.Update(link, lossy); err != nil { // a: the peer, b: the session
			t.Fatal(err)
		}
		tc.writeFrames(0, dataFrame{ID: 0, Data: "acknowledged into the void"})
		tc.advance(100 * time.Millisecond)
		if err := tc.paths[0].link.Update(link, link); err != nil {
			t.Fatal(err)
		}
		if fs := tc.drain(0); len(fs) > 0 {
			t.Fatalf("the peer got %v through a link that drops everything", fs)
		}
		tc.wantIdle("a lost Ack is not sent again")
		tc.writeFrames(0, ackReqFrame{})
		tc.wantAck("the peer's AckReq draws a fresh Ack", 0, 1)
		tc.wantIdle("one Ack")
	})
}

// RFC 9000 §13.3: "An updated value is sent in a MAX_DATA frame if the
// packet containing the most recently sent MAX_DATA frame is declared
// lost". The session's credit travels in Acks, which are datagrams: when
// its data is all acknowledged but stream data waits for credit (the Ack
// that raised it may have been lost), the session asks for an Ack
// (AckReq), and the peer's answer with more credit lets the rest out.
func TestHarnessCreditWaitAsksForAck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		params := peerParams
		params.MaxData = InitialWindow
		tc := newTestSessionParams(t, &Config{AckTimeout: time.Minute}, params)
		st, err := tc.s.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		go st.Write(make([]byte, 100000))
		fs := tc.collect(time.Second)[0]
		if end := streamEnd(fs, st.ID()); end != InitialWindow {
			t.Fatalf("with the handshake's credit: sent up to %d, want %d", end, InitialWindow)
		}
		tc.ackAll(0) // everything acknowledged, no new credit
		t0 := time.Now()
		if at := ackReqTimes(tc, t0, 2*time.Second); len(at) == 0 {
			t.Fatal("no AckReq in 2 s while stream data waits for credit")
		}
		tc.drain(0)
		tc.writeFrames(0, ackFrame{Cum: 0, MaxData: 100000})
		if end := streamEnd(tc.collect(time.Second)[0], st.ID()); end != 100000 {
			t.Errorf("after the credit came: sent up to %d, want 100,000", end)
		}
	})
}
