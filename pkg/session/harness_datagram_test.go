package session

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/quic-go/quic-go"

	"github.com/mpqsched/mpqsched/pkg/wire"
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
// and quic-go's Conn.SendDatagram: "If the payload is too large to be sent
// at the current time, a DatagramTooLargeError is returned." The session's
// limit is the smallest of its paths' less its header: one byte more is
// refused with that limit and sends nothing; MaxDatagramSize bytes go out
// whole; after Close the error is the close's. (Moved from
// datagram_e2e_test.go onto the harness: the peer sees what goes out.)
func TestDatagramTooLarge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestClient(t, nil)
		limit := tc.s.MaxDatagramSize()
		// quic-go starts with 1280-byte packets (it takes 1243 bytes of
		// DATAGRAM payload) and path MTU discovery goes up to 1452-byte
		// packets.
		if limit < 1243-wire.MaxAppDatagramHeaderLen || limit > 1452 {
			t.Fatalf("MaxDatagramSize = %d, want in [%d, 1452]", limit, 1243-wire.MaxAppDatagramHeaderLen)
		}
		var e *quic.DatagramTooLargeError
		if err := tc.s.SendDatagram(make([]byte, limit+1)); !errors.As(err, &e) || e.MaxDatagramPayloadSize != int64(limit) {
			t.Fatalf("%d bytes: err = %v, want a DatagramTooLargeError with the limit %d", limit+1, err, limit)
		}
		tc.wantIdle("a refused datagram sends nothing")
		full := strings.Repeat("m", limit)
		if err := tc.s.SendDatagram([]byte(full)); err != nil {
			t.Fatal(err)
		}
		tc.wantFrame("MaxDatagramSize bytes go out whole", 0, appDatagramFrame{Seq: 0, Data: full})
		tc.wantIdle("one datagram")
		if st := tc.s.Stats().Datagrams; st.Sent != 1 {
			t.Errorf("stats %+v, want 1 sent: the refused one is not counted", st)
		}
		tc.s.CloseWithError(0, "")
		if err := tc.s.SendDatagram([]byte("x")); !errors.Is(err, &ApplicationError{}) {
			t.Errorf("after close: err = %v, want the local close, *ApplicationError code 0", err)
		}
		if n := tc.s.MaxDatagramSize(); n != 0 {
			t.Errorf("after close: MaxDatagramSize = %d, want 0", n)
		}
	})
}
