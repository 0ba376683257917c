package session

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/wire"
)

// appDatagram is the peer's application datagram seq carrying "d<seq>".
func appDatagram(seq uint64) []byte {
	return wire.AppendAppDatagram(nil, seq, fmt.Appendf(nil, "d%d", seq))
}

// received drains what ReceiveDatagram has queued now, without waiting.
func (sp *scriptedPeer) received() []string {
	var got []string
	for q := sp.s.dgram.recvQueue(); len(q) > 0; {
		b, err := sp.s.ReceiveDatagram(context.Background())
		if err != nil {
			sp.t.Fatal(err)
		}
		got = append(got, string(b))
	}
	return got
}

// Issue 19 (What to build, 4): "a redundant scheduler may copy a datagram
// to several paths, and the receiver discards duplicates." RFC 9221 §5:
// "DATAGRAM frames ... are not retransmitted", so copies are the sender's
// doing; the application sees each sequence number once.
func TestDatagramDuplicatesDiscarded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil)
		send := func(seqs ...uint64) {
			for _, seq := range seqs {
				tc.writeFrames(0, appDatagramFrame{Seq: seq, Data: fmt.Sprintf("d%d", seq)})
			}
			tc.advance(20 * time.Millisecond)
		}
		send(0, 1, 0, 3, 1, 2, 3, 3)
		if got, want := fmt.Sprint(receivedDatagrams(t, tc.s)), "[d0 d1 d3 d2]"; got != want {
			t.Errorf("delivered %s, want %s (arrival order, each once)", got, want)
		}
		st := tc.s.Stats().Datagrams
		if st.Received != 4 || st.Duplicates != 4 {
			t.Errorf("stats %+v, want 4 received and 4 duplicates", st)
		}
		// Older than the window: discarded whether delivered or not, so a
		// copy arriving that late cannot be delivered twice.
		send(3 + DatagramWindow)
		send(2, 3, 4) // 2 and 3 delivered, 4 never
		if got, want := fmt.Sprint(receivedDatagrams(t, tc.s)), fmt.Sprintf("[d%d d4]", 3+DatagramWindow); got != want {
			t.Errorf("delivered %s, want %s", got, want)
		}
		if st := tc.s.Stats().Datagrams; st.Late != 2 || st.Duplicates != 4 {
			t.Errorf("stats %+v, want 2 late (seqs 2 and 3) and still 4 duplicates", st)
		}
		// RFC 9000 §13.2.1: "An endpoint MUST NOT send a non-ack-eliciting
		// packet in response to a non-ack-eliciting packet": datagrams,
		// copies or not, are not acknowledged.
		tc.wantIdle("the session answers no datagram")
	})
}

// receivedDatagrams drains what s's ReceiveDatagram has queued now,
// without waiting.
func receivedDatagrams(t *testing.T, s *Session) []string {
	var got []string
	for q := s.dgram.recvQueue(); len(q) > 0; {
		b, err := s.ReceiveDatagram(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(b))
	}
	return got
}

// Issue 19: "SendDatagram and ReceiveDatagram, with size limits and a
// bounded queue"; the session's rule: "Every buffer/map/queue ... a peer
// can cause has a bound independent of what the peer announces". A peer
// that sends 1000 datagrams nobody reads gets DatagramQueueLen queued; the
// rest are dropped and counted. A dropped datagram was not delivered, so a
// later copy of it still is.
func TestDatagramQueueBounded(t *testing.T) {
	sp := newScriptedPeer(t, nil)
	defer sp.close()
	for seq := range uint64(1000) {
		if err := sp.datagram(appDatagram(seq)); err != nil {
			t.Fatal(err)
		}
	}
	st := sp.s.Stats().Datagrams
	if st.Received != DatagramQueueLen || st.Dropped != 1000-DatagramQueueLen {
		t.Errorf("stats %+v, want %d received and %d dropped", st, DatagramQueueLen, 1000-DatagramQueueLen)
	}
	got := sp.received()
	if len(got) != DatagramQueueLen || got[0] != "d0" || got[DatagramQueueLen-1] != fmt.Sprintf("d%d", DatagramQueueLen-1) {
		t.Fatalf("delivered %d datagrams (%v ...), want d0 … d%d", len(got), got[:min(len(got), 3)], DatagramQueueLen-1)
	}
	if err := sp.datagram(appDatagram(500)); err != nil { // a copy of a dropped one
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(sp.received()), "[d500]"; got != want {
		t.Errorf("after a copy of dropped datagram 500: delivered %s, want %s", got, want)
	}
}

// "Bad input never panics: a hostile peer gets a connection error." An
// application datagram whose sequence number is cut short is a protocol
// violation, as RFC 9221 §4 treats a malformed DATAGRAM frame
// ("FRAME_ENCODING_ERROR").
func TestDatagramMalformedIsConnectionError(t *testing.T) {
	for _, b := range [][]byte{
		{wire.TypeAppDatagram},
		{wire.TypeAppDatagram, 0x40},
		{wire.TypeAppDatagram, 0xc0, 1, 2},
	} {
		t.Run(fmt.Sprintf("%x", b), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tc := newTestSession(t, nil)
				tc.sendRawDatagram(0, b)
				tc.wantClose("a malformed datagram closes the connection", 0, uint64(codeProtocol))
				if err := tc.s.Err(); !errors.Is(err, ErrProtocol) {
					t.Errorf("err = %v, want ErrProtocol", err)
				}
				if st := tc.s.Stats().Datagrams; st.Received != 0 {
					t.Errorf("%d datagrams delivered", st.Received)
				}
			})
		})
	}
}

// ReceiveDatagram waits for a datagram, returns ctx's cause when it is done,
// and after the session ends returns what was queued, then the close error.
func TestReceiveDatagramWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil)
		cause := errors.New("gave up")
		ctx, cancel := context.WithCancelCause(context.Background())
		got := make(chan error, 1)
		go func() { _, err := tc.s.ReceiveDatagram(ctx); got <- err }()
		synctest.Wait()
		if len(got) != 0 {
			t.Fatal("ReceiveDatagram returned with nothing queued")
		}
		cancel(cause)
		synctest.Wait()
		if len(got) != 1 {
			t.Fatal("ReceiveDatagram ignored its context")
		}
		if err := <-got; err != cause {
			t.Errorf("cancelled: err = %v, want the cause %v", err, cause)
		}
		go func() {
			b, err := tc.s.ReceiveDatagram(context.Background())
			if err == nil && string(b) != "d7" {
				err = fmt.Errorf("got %q, want d7", b)
			}
			got <- err
		}()
		synctest.Wait()
		tc.writeFrames(0, appDatagramFrame{Seq: 7, Data: "d7"})
		if err := <-got; err != nil {
			t.Errorf("waiting receiver: %v", err)
		}
		tc.writeFrames(0, appDatagramFrame{Seq: 8, Data: "d8"})
		tc.advance(20 * time.Millisecond)
		tc.s.CloseWithError(0, "")
		wantFrameType[closeFrame](tc, "the close reaches the peer", 0)
		if b, err := tc.s.ReceiveDatagram(context.Background()); err != nil || string(b) != "d8" {
			t.Errorf("after close: got %q, %v; want the queued d8", b, err)
		}
		if _, err := tc.s.ReceiveDatagram(context.Background()); !errors.Is(err, &ApplicationError{}) {
			t.Errorf("after close, queue empty: err = %v, want the local close, *ApplicationError code 0", err)
		}
	})
}

// FuzzDatagramReceive drives the datagram receive side with arbitrary
// sequences of application datagrams (sequence numbers from raw bytes, or
// near a moving base, so with copies and jumps) and reads now and then.
// Whatever arrives: no panic; a malformed one is a protocol error; at most
// DatagramQueueLen wait; no sequence number is delivered twice; and every
// well-formed datagram is counted once as received, duplicate, late or
// dropped.
func FuzzDatagramReceive(f *testing.F) {
	f.Add([]byte{0, 1, 0, 1, 2, 0, 1, 0})
	f.Add([]byte{1, 3, wire.TypeAppDatagram, 0x40, 1, 0, 255, 3, 0, 0})
	f.Add([]byte{0, 200, 0, 200, 2, 0, 0, 9, 3, 0})
	f.Fuzz(func(t *testing.T, script []byte) {
		sp := newScriptedPeer(t, nil) // not closed: it runs no goroutine, and closing costs the fuzzer most of its time
		next := func() int {
			if len(script) == 0 {
				return 0
			}
			b := script[0]
			script = script[1:]
			return int(b)
		}
		delivered := map[string]bool{}
		var wellFormed uint64
		base := uint64(0)
		for len(script) > 0 {
			var b []byte
			switch next() % 4 {
			case 0: // a well-formed datagram near base
				b = appDatagram(base + uint64(next()))
			case 1: // raw bytes after the type; if they decode, payload "d<seq>"
				n := min(next(), len(script))
				b = append([]byte{wire.TypeAppDatagram}, script[:n]...)
				script = script[n:]
				if seq, _, err := wire.ParseAppDatagram(b); err == nil {
					b = appDatagram(seq) // so that a payload names its sequence number
				}
			case 2: // the window moves on
				base += uint64(next()) << uint(next()%40)
				continue
			case 3: // the application reads
				for _, d := range sp.received() {
					if delivered[d] {
						t.Fatalf("%s delivered twice", d)
					}
					delivered[d] = true
				}
				continue
			}
			_, _, perr := wire.ParseAppDatagram(b)
			err := sp.datagram(b)
			if perr == nil {
				if err != nil {
					t.Fatalf("well-formed %x: %v", b, err)
				}
				wellFormed++
			} else if !errors.Is(err, ErrProtocol) {
				t.Fatalf("%x: err = %v, want ErrProtocol", b, err)
			} else {
				return // a connection error ends the session
			}
			if n := len(sp.s.dgram.recvQueue()); n > DatagramQueueLen {
				t.Fatalf("%d datagrams queued, bound %d", n, DatagramQueueLen)
			}
			st := sp.s.Stats().Datagrams
			if got := st.Received + st.Duplicates + st.Late + st.Dropped; got != wellFormed {
				t.Fatalf("stats %+v count %d datagrams, %d arrived", st, got, wellFormed)
			}
		}
		for _, d := range sp.received() {
			if delivered[d] {
				t.Fatalf("%s delivered twice", d)
			}
		}
	})
}
