package session

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quic-go/quic-go"
)

// Application datagrams (RFC 9221 over the session's paths), as the
// scripted peer of harness_test.go receives them.

// RFC 9221 §5: DATAGRAM frames "are not retransmitted upon loss detection"
// and the session numbers its application datagrams so that the receiver
// can discard copies (datagram.go). Three SendDatagrams arrive as three
// datagrams numbered 0, 1, 2 with the application's bytes; the peer never
// acknowledges them, and the session sends them no second time.
func TestHarnessDatagramsNumberedNotRetransmitted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil)
		for k := range 3 {
			if err := tc.s.SendDatagram(fmt.Appendf(nil, "dgram %d", k)); err != nil {
				t.Fatal(err)
			}
		}
		for k := range 3 {
			tc.wantFrame("the application's datagram", 0, appDatagramFrame{Seq: uint64(k), Data: fmt.Sprintf("dgram %d", k)})
		}
		tc.wantIdle("no retransmission, no AckReq for datagrams")
		if st := tc.s.Stats().Datagrams; st.Sent != 3 || st.Copies != 0 {
			t.Errorf("stats %+v, want 3 sent, no copies", st)
		}
	})
}

// RFC 9221 §3: "An endpoint MUST NOT send DATAGRAM frames that are larger
// than the max_datagram_frame_size value it has received from its peer."
// A datagram of MaxDatagramSize bytes goes out whole; one byte more is
// refused (DatagramTooLargeError) and sends nothing.
func TestHarnessDatagramTooLargeSendsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil)
		limit := tc.s.MaxDatagramSize()
		var tooLarge *quic.DatagramTooLargeError
		if err := tc.s.SendDatagram(make([]byte, limit+1)); !errors.As(err, &tooLarge) {
			t.Fatalf("a datagram of %d bytes: %v, want DatagramTooLargeError", limit+1, err)
		}
		tc.wantIdle("a refused datagram sends nothing")
		full := strings.Repeat("m", limit)
		if err := tc.s.SendDatagram([]byte(full)); err != nil {
			t.Fatal(err)
		}
		tc.wantFrame("MaxDatagramSize bytes go out whole", 0, appDatagramFrame{Seq: 0, Data: full})
		tc.wantIdle("one datagram")
	})
}

// Issue 19: "The scheduler chooses the datagram's path (extend the sched
// interface, default the fastest live path)." With minRTT, which does not
// choose, the session's datagrams go on the path of the lower RTT, none on
// the other.
func TestHarnessDatagramsOnFastestPath(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const slow, fast = 0, 1
		tc := newTestSession(t, nil, harnessLink(30*time.Millisecond), harnessLink(5*time.Millisecond))
		for k := range 10 {
			if err := tc.s.SendDatagram(fmt.Appendf(nil, "%d", k)); err != nil {
				t.Fatal(err)
			}
		}
		got := tc.collect(200 * time.Millisecond)
		if len(got[slow]) != 0 {
			t.Errorf("slow path: %v, want nothing", got[slow])
		}
		if len(got[fast]) != 10 {
			t.Errorf("fast path: %d datagrams (%v), want 10", len(got[fast]), got[fast])
		}
	})
}

// Issue 19: "a redundant scheduler may copy a datagram to several paths,
// and the receiver discards duplicates." The copies carry the same
// sequence number, which is what lets the receiver discard them.
func TestHarnessRedundantDatagramCopiesShareSeq(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, &Config{Scheduler: "redundant"}, harnessLink(5*time.Millisecond), harnessLink(15*time.Millisecond))
		if err := tc.s.SendDatagram([]byte("both ways")); err != nil {
			t.Fatal(err)
		}
		for p := range 2 {
			tc.wantFrame("a copy on each path, one sequence number", p, appDatagramFrame{Seq: 0, Data: "both ways"})
		}
		tc.wantIdle("one copy per path")
	})
}
