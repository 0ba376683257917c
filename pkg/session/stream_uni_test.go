package session

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/wire"
)

// RFC 9000 §2.1, Table 1: stream ID types by their two low bits: 0x00
// client-initiated bidirectional, 0x01 server-initiated bidirectional, 0x02
// client-initiated unidirectional, 0x03 server-initiated unidirectional.
// "The stream space for each type begins at the minimum value (0x00 through
// 0x03, respectively); successive streams of each type are created with
// numerically increasing stream IDs."
func TestStreamIDTypes(t *testing.T) {
	for _, tc := range []struct {
		i           uint64
		client, uni bool
		want        uint64
	}{
		{0, true, false, 0x00}, {0, false, false, 0x01}, {0, true, true, 0x02}, {0, false, true, 0x03},
		{1, true, false, 0x04}, {1, false, false, 0x05}, {1, true, true, 0x06}, {5, false, true, 23},
	} {
		if got := streamID(tc.i, tc.client, tc.uni); got != tc.want {
			t.Errorf("streamID(%d, client %v, uni %v) = %d, want %d", tc.i, tc.client, tc.uni, got, tc.want)
		}
	}
	// On the wire, with the harness's peer as the client: its uni stream 2
	// is accepted by AcceptUniStream, its bidi stream 0 by AcceptStream, one
	// segment acknowledged; the server's own streams get IDs 1 and 3, and
	// their frames carry them.
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil)
		tc.writeFrames(0, dataFrame{ID: 2, Data: "uni"}, dataFrame{ID: 0, Data: "bi"})
		ctx := context.Background()
		rs, err := tc.s.AcceptUniStream(ctx)
		if err != nil || rs.ID() != 2 {
			t.Fatalf("AcceptUniStream = %v, %v; want stream 2", rs, err)
		}
		bs, err := tc.s.AcceptStream(ctx)
		if err != nil || bs.ID() != 0 {
			t.Fatalf("AcceptStream = %v, %v; want stream 0", bs, err)
		}
		tc.wantAck("the peer's streams are acknowledged", 0, 1)
		buf := make([]byte, 8)
		if n, _ := rs.Read(buf); string(buf[:n]) != "uni" {
			t.Errorf("uni stream read %q", buf[:n])
		}
		o, err := tc.s.OpenStream()
		if err != nil || o.ID() != 1 {
			t.Fatalf("OpenStream = %v, %v; want stream 1", o, err)
		}
		u, err := tc.s.OpenUniStream()
		if err != nil || u.ID() != 3 {
			t.Fatalf("OpenUniStream = %v, %v; want stream 3", u, err)
		}
		o.Write([]byte("b"))
		u.Write([]byte("u"))
		tc.wantRecord("stream 1's frame", 0, dataFrame{ID: 1, Data: "b"})
		tc.wantRecord("stream 3's frame", 0, dataFrame{ID: 3, Data: "u"})
	})
}

// RFC 9000 §4.6: "An endpoint that receives a frame with a stream ID
// exceeding the limit it has sent MUST treat this as a connection error of
// type STREAM_LIMIT_ERROR", and the limits of the two types are separate
// (initial_max_streams_bidi, initial_max_streams_uni; MAX_STREAMS frames
// of type 0x12 and 0x13). With MaxUniStreams 2 and MaxStreams 4 the peer may
// open 2 unidirectional and 4 bidirectional streams; a third
// unidirectional stream is a protocol error.
func TestUniStreamCreditSeparate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, &Config{MaxStreams: 4, MaxUniStreams: 2})
		if p := tc.s.streams.params(); p.MaxStreams != 4 || p.MaxUniStreams != 2 {
			t.Fatalf("announced %+v, want 4 bidirectional and 2 unidirectional streams", p)
		}
		var fins []frame
		for i := range uint64(4) {
			fins = append(fins, finFrame{ID: streamID(i, true, false)})
		}
		for i := range uint64(2) {
			fins = append(fins, finFrame{ID: streamID(i, true, true)})
		}
		tc.writeFrames(0, fins...)
		tc.wantAck("streams within both credits are acknowledged", 0, 1)
		tc.writeFrames(0, finFrame{ID: streamID(2, true, true)})
		tc.wantClose("a third unidirectional stream closes the connection", 0, uint64(codeProtocol))
		if err := tc.s.Err(); !errors.Is(err, ErrProtocol) || !errors.Is(err, ErrStreamLimit) {
			t.Fatalf("a third unidirectional stream: err = %v, want a stream-limit protocol error", err)
		}
	})
}

// The uni credit comes back with its own record: RFC 9000 §19.11, "A
// MAX_STREAMS frame of type 0x13 applies to unidirectional streams". The
// application accepts a unidirectional stream and reads it to its end: the
// session frames a RecMaxUniStreams and no RecMaxStreams. And the
// session's own uni credit is the peer's: it opens no unidirectional
// stream until the peer grants one.
func TestUniStreamCreditReturned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSessionParams(t, &Config{MaxUniStreams: 1}, wire.Params{MaxStreams: 10, StreamWindow: 64 << 10, MaxData: 1 << 20}) // no uni credit
		if _, err := tc.s.OpenUniStream(); !errors.Is(err, ErrStreamLimitReached) {
			t.Errorf("OpenUniStream without credit: %v, want ErrStreamLimitReached", err)
		}
		tc.writeFrames(0, dataFrame{ID: 2, Data: "hello"}, finFrame{ID: 2}, maxStreamsFrame{Uni: true, Count: 1}) // the peer grants one
		tc.wantAck("the peer's segment is acknowledged", 0, 1)
		tc.wantIdle("the session sends nothing before the application acts")
		rs, err := tc.s.AcceptUniStream(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if b, err := io.ReadAll(rs); err != nil || string(b) != "hello" {
			t.Fatalf("read %q, %v", b, err)
		}
		wantFrameType[segmentFrame](tc, "read to its end: a segment", 0)
		tc.wantFrame("one MAX_STREAMS (uni) raising the limit to 2, no bidirectional credit", 0, maxStreamsFrame{Uni: true, Count: 2})
		tc.ackAll(0)
		tc.wantIdle("one MAX_STREAMS")
		ws, err := tc.s.OpenUniStream()
		if err != nil || ws.ID() != 3 {
			t.Fatalf("OpenUniStream after the peer's grant = %v, %v; want stream 3", ws, err)
		}
		ws.Write([]byte("up"))
		ws.Close()
		wantFrameType[segmentFrame](tc, "the session's uni stream: a segment", 0)
		tc.wantFrame("its data", 0, dataFrame{ID: 3, Data: "up"})
		tc.wantFrame("and its end", 0, finFrame{ID: 3})
		tc.ackAll(0)
		tc.wantIdle("nothing more")
		tc.s.mu.Lock()
		n := tc.s.streams.Len()
		tc.s.mu.Unlock()
		if n != 0 {
			t.Errorf("%d streams kept after both uni streams ended", n)
		}
	})
}

// RFC 9000 §19.8: "An endpoint MUST terminate the connection with error
// STREAM_STATE_ERROR if it receives a STREAM frame for ... a send-only
// stream"; §19.4: "An endpoint that receives a RESET_STREAM frame for a
// send-only stream MUST terminate the connection with error
// STREAM_STATE_ERROR."; §19.5: "An endpoint that receives a STOP_SENDING
// frame for a receive-only stream MUST terminate the connection with error
// STREAM_STATE_ERROR."; §19.10: "An endpoint that receives a
// MAX_STREAM_DATA frame for a receive-only stream MUST terminate the
// connection with error STREAM_STATE_ERROR." Each is a protocol error
// here: the peer sees its path closed with codeProtocol, and then nothing.
// (On the harness; it drove the receive side directly before.)
func TestUniStreamWrongDirection(t *testing.T) {
	for _, c := range []struct {
		name string
		f    frame
	}{
		{"data on our send-only stream", dataFrame{ID: 3, Data: "x"}},
		{"end of our send-only stream", finFrame{ID: 3}},
		{"reset of our send-only stream", resetFrame{ID: 3, Code: 9}},
		{"stop-sending on the peer's uni stream", stopFrame{ID: 2, Code: 9}},
		{"max-data on the peer's uni stream", maxDataFrame{ID: 2, Limit: 1 << 20}},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tc := newTestSession(t, nil)
				ss, err := tc.s.OpenUniStream() // stream 3
				if err != nil {
					t.Fatal(err)
				}
				ss.Write([]byte("out"))
				tc.wantRecord("the session's uni stream", 0, dataFrame{ID: 3, Data: "out"})
				tc.writeFrames(0, dataFrame{ID: 2, Data: "in"}) // the peer's uni stream
				if _, err := tc.s.AcceptUniStream(context.Background()); err != nil {
					t.Fatal(err)
				}
				tc.writeFrames(0, c.f)
				wantProtocolClose(tc, c.name)
			})
		})
	}
}

// Each end opens a unidirectional stream and sends 1 MiB on it; the other
// accepts it with AcceptUniStream and reads every byte. With MaxUniStreams
// 2, the client's third OpenUniStreamSync waits until the server has read a
// stream to its end. (On the harness, each end in turn: the sender's
// frames, the receiver's MAX_STREAMS.)
func TestUniStreamsE2E(t *testing.T) {
	data := bytes.Repeat([]byte("unidirectional"), 1<<20/14)
	// The sender: a client granted 2 uni streams sends 1 MiB on its first,
	// every byte once and in order, then the FIN; its third and fourth
	// OpenUniStreamSync wait for the peer's MAX_STREAMS (uni).
	synctest.Test(t, func(t *testing.T) {
		params := peerParams
		params.MaxUniStreams = 2
		tc := newTestClientParams(t, nil, params)
		ws, err := tc.s.OpenUniStream()
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			if _, err := ws.Write(data); err != nil {
				t.Errorf("stream %d: %v", ws.ID(), err)
			}
			ws.Close()
		}()
		var got bytes.Buffer
		fins := 0
		for range 500 {
			for _, f := range tc.collect(10 * time.Millisecond)[0] {
				switch f := f.(type) {
				case dataFrame:
					if f.ID != ws.ID() || f.Off != uint64(got.Len()) {
						t.Fatalf("%v after %d bytes of stream %d", f, got.Len(), ws.ID())
					}
					got.WriteString(f.Data)
				case finFrame:
					fins++
				}
			}
			tc.mu.Lock()
			cum := tc.nextSeg
			tc.mu.Unlock()
			tc.writeFrames(0, ackFrame{Cum: cum})
			if fins > 0 {
				break
			}
		}
		if !bytes.Equal(got.Bytes(), data) || fins != 1 {
			t.Fatalf("the peer got %d bytes and %d FINs, want the %d written and one", got.Len(), fins, len(data))
		}
		second, _ := tc.s.OpenUniStream()
		second.Write([]byte("2"))
		second.Close()
		tc.wantRecord("the second uni stream", 0, dataFrame{ID: second.ID(), Data: "2"})
		next := func() chan *SendStream {
			c := make(chan *SendStream, 1)
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				ws, _ := tc.s.OpenUniStreamSync(ctx)
				c <- ws
			}()
			return c
		}
		for k, want := range []uint64{streamID(2, true, true), streamID(3, true, true)} {
			c := next()
			tc.advance(time.Second)
			select {
			case <-c:
				t.Fatalf("OpenUniStreamSync beyond the peer's %d uni streams returned", 2+k)
			default:
			}
			tc.writeFrames(0, maxStreamsFrame{Uni: true, Count: uint64(3 + k)})
			select {
			case ws := <-c:
				if ws == nil || ws.ID() != want {
					t.Errorf("uni stream %v, want ID %d", ws, want)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("OpenUniStreamSync still waits after the peer's MAX_STREAMS")
			}
		}
		if err := tc.s.Err(); err != nil {
			t.Errorf("client: %v", err)
		}
	})
	// The receiver: a server with MaxUniStreams 2 accepts the peer's uni
	// streams with AcceptUniStream, reads every byte, and returns each
	// one's credit (MAX_STREAMS uni 3, then 4) once read to its end.
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, &Config{MaxUniStreams: 2})
		small := data[:400_000] // within the session's stream window: the peer does not wait for credit
		tc.writeFrames(0, dataFrame{ID: 2, Data: string(small)}, finFrame{ID: 2})
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		rs, err := tc.s.AcceptUniStream(ctx)
		if err != nil || rs.ID() != 2 {
			t.Fatalf("AcceptUniStream = %v, %v; want stream 2", rs, err)
		}
		rs.SetReadDeadline(time.Now().Add(10 * time.Second))
		if got, err := io.ReadAll(rs); err != nil || !bytes.Equal(got, small) {
			t.Fatalf("read %d bytes, %v; want the %d written", len(got), err, len(small))
		}
		// (MAX_STREAM_DATA may come first: the application read as the
		// data arrived, before the FIN.)
		wantPast := func(expectation string, want frame) {
			t.Helper()
			for {
				f, _ := tc.readFrame(0)
				switch f.(type) {
				case segmentFrame, ackFrame, maxDataFrame:
					continue
				}
				if f != want {
					t.Fatalf("%s: got %v, want %v", expectation, f, want)
				}
				return
			}
		}
		wantPast("the first uni stream read: its credit back", maxStreamsFrame{Uni: true, Count: 3})
		tc.writeFrames(0, dataFrame{ID: 6, Data: "2"}, finFrame{ID: 6})
		rs, err = tc.s.AcceptUniStream(ctx)
		if err != nil || rs.ID() != 6 {
			t.Fatalf("AcceptUniStream = %v, %v; want stream 6", rs, err)
		}
		io.ReadAll(rs)
		wantPast("the second one read", maxStreamsFrame{Uni: true, Count: 4})
		if err := tc.s.Err(); err != nil {
			t.Errorf("server: %v", err)
		}
	})
}
