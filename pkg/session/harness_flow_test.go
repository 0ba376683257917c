package session

import (
	"context"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// Flow control and stream credit (RFC 9000 §4), as the session sends them
// and as it obeys the peer's, seen by the scripted peer of harness_test.go.

// streamEnd is the end of the stream data of id among fs: the highest
// offset plus length of its STREAM frames.
func streamEnd(fs []frame, id uint64) uint64 {
	var end uint64
	data, _ := streamData(fs, id)
	for _, d := range data {
		end = max(end, d.Off+uint64(len(d.Data)))
	}
	return end
}

// RFC 9000 §4.6: "Endpoints MUST NOT exceed the limit set by their peer."
// (Version 4 has no STREAMS_BLOCKED frame.) The peer's Accept grants
// the Dial side 2 bidirectional streams: a third OpenStream fails and
// nothing is sent for stream 8; the peer's MAX_STREAMS 3 lets
// OpenStreamSync through, and its data goes out.
func TestHarnessOpenStreamWaitsForPeerCredit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		params := peerParams
		params.MaxStreams = 2
		tc := newTestClientParams(t, nil, params)
		for range 2 {
			st, err := tc.s.OpenStream()
			if err != nil {
				t.Fatal(err)
			}
			st.Write([]byte("within credit"))
		}
		if _, err := tc.s.OpenStream(); !errors.Is(err, ErrStreamLimitReached) {
			t.Fatalf("third OpenStream: %v, want ErrStreamLimitReached", err)
		}
		opened := make(chan *Stream, 1)
		go func() {
			st, err := tc.s.OpenStreamSync(context.Background())
			if err != nil {
				t.Error(err)
			}
			st.Write([]byte("third"))
			opened <- st
		}()
		fs := tc.collect(100 * time.Millisecond)[0]
		for _, id := range []uint64{0, 4} {
			if streamEnd(fs, id) != uint64(len("within credit")) {
				t.Errorf("stream %d: sent up to %d, want its %d bytes", id, streamEnd(fs, id), len("within credit"))
			}
		}
		if data, fins := streamData(fs, 8); len(data) > 0 || fins > 0 {
			t.Fatalf("frames for stream 8 beyond the peer's limit of 2: %v", data)
		}
		tc.ackAll(0)
		tc.writeFrames(0, maxStreamsFrame{Uni: false, Count: 3})
		tc.wantRecord("MAX_STREAMS 3: the third stream's data", 0, dataFrame{ID: 8, Data: "third"})
		if st := <-opened; st.ID() != 8 {
			t.Errorf("OpenStreamSync opened stream %d, want 8", st.ID())
		}
	})
}

// RFC 9000 §4.1: "A sender MUST ignore any MAX_STREAM_DATA or MAX_DATA
// frames that do not increase flow control limits." The peer grants a
// stream 1000 bytes, raises it to 3000, then sends a stale 2000: the
// session still sends up to 3000, and up to 4000 when the peer says so.
func TestHarnessMaxStreamDataNeverLowers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		params := peerParams
		params.StreamWindow = 1000
		tc := newTestClientParams(t, nil, params)
		st, err := tc.s.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		st.Write(make([]byte, 5000))
		if end := streamEnd(tc.collect(time.Second)[0], st.ID()); end != 1000 {
			t.Fatalf("initial limit 1000: sent up to %d", end)
		}
		tc.ackAll(0)
		tc.writeFrames(0, maxDataFrame{ID: st.ID(), Limit: 3000}, maxDataFrame{ID: st.ID(), Limit: 2000})
		if end := streamEnd(tc.collect(time.Second)[0], st.ID()); end != 3000 {
			t.Errorf("MAX_STREAM_DATA 3000 then a stale 2000: sent up to %d, want 3000", end)
		}
		tc.ackAll(0)
		tc.writeFrames(0, maxDataFrame{ID: st.ID(), Limit: 4000})
		if end := streamEnd(tc.collect(time.Second)[0], st.ID()); end != 4000 {
			t.Errorf("MAX_STREAM_DATA 4000: sent up to %d", end)
		}
	})
}

// RFC 9000 §4.1, as above, for the connection limit: "A sender MUST ignore
// any MAX_DATA or MAX_STREAM_DATA frames that do not increase flow control
// limits." The peer grants 100,000 bytes in its handshake, then 200,000 in
// an Ack and a stale 120,000 in a later one (reordered): the session sends
// the stream's bytes up to 200,000 exactly.
func TestHarnessConnectionLimitNeverLowers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		params := peerParams
		params.MaxData = 100000
		tc := newTestSessionParams(t, nil, params)
		st, err := tc.s.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		go st.Write(make([]byte, 300000))
		if end := streamEnd(tc.collect(time.Second)[0], st.ID()); end != 100000 {
			t.Fatalf("the handshake's 100,000 bytes of credit: sent up to %d", end)
		}
		tc.ackAll(0)
		tc.writeFrames(0, ackFrame{Cum: 0, MaxData: 200000})
		tc.advance(time.Millisecond)
		tc.writeFrames(0, ackFrame{Cum: 0, MaxData: 120000})
		if end := streamEnd(tc.collect(time.Second)[0], st.ID()); end != 200000 {
			t.Errorf("MAX_DATA 200,000 then a stale 120,000: sent up to %d, want 200,000", end)
		}
	})
}

// RFC 9000 §4.1: "A sender MUST NOT send data in excess of either limit."
// Each stream has its own limit: a stream stopped at its peer's stream
// limit holds nobody else, and a second stream's data goes out in full.
func TestHarnessStreamLimitHoldsOnlyItsStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		params := peerParams
		params.StreamWindow = 1000
		tc := newTestClientParams(t, nil, params)
		a, err := tc.s.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		b, err := tc.s.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		a.Write(make([]byte, 5000))
		b.Write(make([]byte, 800))
		b.Close()
		fs := tc.collect(time.Second)[0]
		if end := streamEnd(fs, a.ID()); end != 1000 {
			t.Errorf("stream %d: sent up to %d, want its limit, 1000", a.ID(), end)
		}
		if end, _ := streamData(fs, b.ID()); streamEnd(fs, b.ID()) != 800 {
			t.Errorf("stream %d: sent up to %d (%v), want all 800 bytes", b.ID(), streamEnd(fs, b.ID()), end)
		}
		if _, fins := streamData(fs, b.ID()); fins != 1 {
			t.Errorf("stream %d: %d FINs, want 1", b.ID(), fins)
		}
	})
}

// RFC 9000 §4.6: "Implementations might choose to increase limits as
// streams are closed, to keep the number of streams available to peers
// roughly consistent." and §4.2's reason for not sending MAX_DATA on every
// change, which holds for MAX_STREAMS too: "Control frames contribute to
// connection overhead." With MaxStreams 16 the credit goes back in
// steps of 2 (an eighth): one finished stream sends no MAX_STREAMS, the
// second sends MAX_STREAMS 18.
func TestHarnessStreamCreditBatched(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, &Config{MaxStreams: 16})
		tc.writeFrames(0, dataFrame{ID: 0, Data: "a"}, finFrame{ID: 0}, dataFrame{ID: 4, Data: "b"}, finFrame{ID: 4})
		tc.wantAck("the two requests", 0, 1)
		for k := range 2 {
			st, err := tc.s.AcceptStream(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			io.ReadAll(st)
			st.Close()
			tc.wantRecord("the stream's FIN", 0, finFrame{ID: st.ID()})
			if k == 0 {
				tc.ackAll(0)
				tc.wantIdle("one stream of 16 done: no MAX_STREAMS yet")
			}
		}
		tc.wantFrame("two done: MAX_STREAMS 18", 0, maxStreamsFrame{Uni: false, Count: 18})
		tc.ackAll(0)
		tc.wantIdle("one MAX_STREAMS")
	})
}

// RFC 9000 §4.6, as above, for unidirectional streams, whose credit is
// separate: once the application read a peer's uni stream to its end, the
// session sends MAX_STREAMS (uni) 5 of a limit of 4, and no bidirectional
// credit.
func TestHarnessUniStreamCreditAfterRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, &Config{MaxUniStreams: 4})
		tc.writeFrames(0, dataFrame{ID: 2, Data: "push"}, finFrame{ID: 2})
		rs, err := tc.s.AcceptUniStream(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		tc.wantAck("the uni stream is acknowledged", 0, 1)
		if b, err := io.ReadAll(rs); err != nil || string(b) != "push" {
			t.Fatalf("read %q, %v", b, err)
		}
		tc.wantRecord("read to its end: one more uni stream", 0, maxStreamsFrame{Uni: true, Count: 5})
		tc.ackAll(0)
		tc.wantIdle("one MAX_STREAMS")
	})
}

// RFC 9000 §4.6 and quic-go's rule, which the session follows: a peer
// stream's credit comes back once the application accepted it and both its
// sides are done. Four streams reset by the peer before the application
// accepts any return no credit; accepted, they return four.
func TestHarnessNoStreamCreditBeforeAccept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, &Config{MaxStreams: 4})
		for id := uint64(0); id < 16; id += 4 {
			tc.writeFrames(0, dataFrame{ID: id, Data: "req"}, resetFrame{ID: id, Code: 1}, stopFrame{ID: id, Code: 2})
		}
		tc.advance(50 * time.Millisecond)
		for _, f := range without(tc.drain(0)) {
			if _, ok := f.(maxStreamsFrame); ok {
				t.Fatalf("%v before the application accepted any stream", f)
			}
		}
		tc.ackAll(0)
		tc.advance(50 * time.Millisecond)
		tc.drain(0)
		for range 4 {
			st, err := tc.s.AcceptStream(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			io.ReadAll(st)
		}
		var limit uint64
		for _, f := range without(tc.collect(100 * time.Millisecond)[0]) {
			if m, ok := f.(maxStreamsFrame); ok && !m.Uni {
				limit = max(limit, m.Count)
			}
		}
		if limit != 8 {
			t.Errorf("after accepting 4 done streams: MAX_STREAMS %d, want 8", limit)
		}
	})
}

// RFC 9000 §4.5: "The receiver MUST use the final size of the stream to
// account for all bytes sent on the stream in its connection-level flow
// controller." and §3.2: "the receiving part of the stream ... can discard
// any data that it already received". 20,000 unread bytes of a stream the
// peer resets go back to the connection's credit: the Ack of the reset
// raises it by as much (wire.Ack.MaxData, RFC 9000's MAX_DATA), where the
// Acks before announced the handshake's credit.
func TestHarnessResetReturnsConnectionCredit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, &Config{RecvWindow: InitialWindow})
		tc.writeFrames(0, dataFrame{ID: 0, Data: strings.Repeat("u", 20000)})
		tc.advance(50 * time.Millisecond)
		for _, f := range tc.drain(0) {
			if a, ok := f.(ackFrame); !ok || a.MaxData != InitialWindow {
				t.Fatalf("%v with nothing read, want Acks of the handshake's credit, %d", f, InitialWindow)
			}
		}
		st, err := tc.s.AcceptStream(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		tc.writeFrames(0, resetFrame{ID: 0, Code: 1})
		a, _ := wantFrameType[ackFrame](tc, "the reset is acknowledged", 0)
		if want := uint64(InitialWindow + 20000); a.MaxData != want {
			t.Errorf("after a reset that discards 20,000 unread bytes: MaxData %d, want %d", a.MaxData, want)
		}
		if _, err := st.Read(make([]byte, 1)); err == nil {
			t.Error("Read after the peer's reset succeeded")
		}
	})
}

// RFC 9000 §4.1: "A receiver MUST close the connection with an error of
// type FLOW_CONTROL_ERROR if the sender violates the advertised connection
// or stream data limits". Two streams each within their window, together
// past the connection window of 64 KiB.
func TestHarnessConnectionWindowViolationCloses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, &Config{RecvWindow: InitialWindow})
		chunk := strings.Repeat("v", 40000)
		tc.writeFrames(0, dataFrame{ID: 0, Data: chunk}, dataFrame{ID: 4, Data: chunk})
		tc.wantClose("80,000 bytes against a 65,536-byte connection window", 0, uint64(codeFlowControl))
		if err := tc.s.Err(); !errors.Is(err, ErrFlowControl) {
			t.Errorf("session error %v, want ErrFlowControl", err)
		}
	})
}

// RFC 9000 §4.6 ("Implementations might choose to increase limits as
// streams are closed") for a stream the peer reset: a peer uni stream that
// the application accepts and whose reset it reads is done, and its credit
// comes back as for one read to its end: MAX_STREAMS (uni) 5 of 4.
func TestHarnessUniStreamCreditAfterPeerReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, &Config{MaxUniStreams: 4})
		tc.writeFrames(0, dataFrame{ID: 2, Data: "partial"}, resetFrame{ID: 2, Code: 3})
		rs, err := tc.s.AcceptUniStream(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var se *StreamError
		if _, err := io.ReadAll(rs); !errors.As(err, &se) || se.ErrorCode != 3 {
			t.Fatalf("Read: %v, want the peer's reset (code 3)", err)
		}
		var got []frame
		for _, f := range without(tc.collect(100 * time.Millisecond)[0]) {
			if _, ok := f.(ackReqFrame); !ok { // the MAX_STREAMS awaits its Ack
				got = append(got, f)
			}
		}
		if want := []frame{maxStreamsFrame{Uni: true, Count: 5}}; !reflect.DeepEqual(got, want) {
			t.Errorf("the session sent %v, want %v (and no STOP_SENDING for a reset stream)", got, want)
		}
		tc.ackAll(0)
		tc.wantIdle("one MAX_STREAMS")
	})
}

// RFC 9000 §2.1 and §3: a unidirectional stream has one part. CancelRead on
// the peer's uni stream sends STOP_SENDING, and no RESET_STREAM (there is
// no sending part to reset).
func TestHarnessCancelReadOnUniStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil)
		tc.writeFrames(0, dataFrame{ID: 2, Data: "unwanted"})
		rs, err := tc.s.AcceptUniStream(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		tc.wantAck("the data", 0, 1)
		rs.CancelRead(9)
		tc.wantRecord("CancelRead(9): STOP_SENDING 9", 0, stopFrame{ID: 2, Code: 9})
		tc.ackAll(0)
		tc.wantIdle("no RESET_STREAM on a receive-only stream")
	})
}

// RFC 9000 §4.1: "A receiver [...] sends MAX_STREAM_DATA or MAX_DATA
// frames [...] to advertise larger limits", as the application consumes
// data, and §2.2's per-stream order: credit for bytes the application read
// goes back whatever else is missing. The peer's first segment (stream 0)
// never arrives, as on a path that went dark; 120 KB of stream 4 behind it
// arrive and are read. The session's Acks must raise the connection limit
// (wire.Ack.MaxData) by what was read: at least the window plus 120,000 −
// 49,152 bytes (a quarter of the window may wait for the next Ack). At 1b6fa1b (version 3) the limit was the in-sequence offset plus
// the window less the bytes held, so it stayed at the window (196,608)
// until the missing segment came.
func TestHarnessGapKeepsReadCredit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const window = 192 << 10
		tc := newTestSession(t, &Config{RecvWindow: window, MaxStreamWindow: 128 << 10, StreamWindow: 128 << 10})
		fs := []frame{dataFrame{ID: 0, Data: strings.Repeat("a", 1000)}}
		for range 120 {
			fs = append(fs, dataFrame{ID: 4, Data: strings.Repeat("b", 1000)})
		}
		segs := tc.cut(fs...)
		for _, g := range segs[1:] { // segment 0, stream 0's, never arrives
			tc.writeFrames(0, g)
		}
		got := make(chan int, 1)
		go func() {
			n := 0
			for range 2 { // stream 0 exists too: stream 4 opened it (RFC 9000 §3.2)
				st, err := tc.s.AcceptStream(context.Background())
				if err != nil {
					break
				}
				if st.ID() == 4 {
					b, _ := io.ReadAll(io.LimitReader(st, 120000))
					n = len(b)
				}
			}
			got <- n
		}()
		var limit uint64
		for range 40 {
			tc.advance(5 * time.Millisecond)
			for _, f := range tc.drain(0) {
				if a, ok := f.(ackFrame); ok {
					limit = max(limit, a.MaxData)
				}
			}
		}
		if n := <-got; n != 120000 {
			t.Fatalf("read %d bytes of stream 4, want 120000", n)
		}
		if want := uint64(window + 120000 - window/4); limit < want {
			t.Errorf("with segment 0 missing and 120,000 bytes behind it read: MAX_DATA %d, want at least %d", limit, want)
		}
	})
}

// RFC 9000 §19.11: "Loss or reordering can cause an endpoint to receive a
// MAX_STREAMS frame with a lower stream limit than was previously
// received. MAX_STREAMS frames that do not increase the stream limit MUST
// be ignored." The peer grants 1 stream, raises it to 3, then sends a
// stale 2: the session still opens the third stream (ID 8) and sends its
// data.
func TestHarnessMaxStreamsNeverLowers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		params := peerParams
		params.MaxStreams = 1
		tc := newTestClientParams(t, nil, params)
		st, err := tc.s.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		st.Write([]byte("first"))
		tc.wantRecord("the first stream's data", 0, dataFrame{ID: 0, Data: "first"})
		tc.writeFrames(0, maxStreamsFrame{Uni: false, Count: 3}, maxStreamsFrame{Uni: false, Count: 2})
		tc.advance(10 * time.Millisecond)
		for i, want := range []uint64{4, 8} {
			st, err := tc.s.OpenStream()
			if err != nil {
				t.Fatalf("stream %d of the 3 granted: %v (the stale MAX_STREAMS 2 lowered the limit)", i+2, err)
			}
			if st.ID() != want {
				t.Fatalf("opened stream %d, want %d", st.ID(), want)
			}
			st.Write([]byte("more"))
		}
		tc.wantRecord("the second stream's data", 0, dataFrame{ID: 4, Data: "more"})
		tc.wantRecord("the third stream's data, within the limit of 3", 0, dataFrame{ID: 8, Data: "more"})
		if _, err := tc.s.OpenStream(); !errors.Is(err, ErrStreamLimitReached) {
			t.Fatalf("a fourth OpenStream: %v, want ErrStreamLimitReached", err)
		}
	})
}

// RFC 9000 §4.6: "Only streams with a stream ID less than (max_streams *
// 4 + initial_stream_id_for_type) can be opened". Three OpenStreamSyncs
// wait at the peer's limit of 1: the one whose context expires after 50
// ms returns then with its context's error; MAX_STREAMS 3 wakes both of
// the others at once, and each stream's data goes out; a fourth waiter
// returns when the session ends. Nothing for a stream beyond the limit is
// sent before.
func TestHarnessOpenStreamSyncWaiters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		params := peerParams
		params.MaxStreams = 1
		tc := newTestClientParams(t, nil, params)
		if _, err := tc.s.OpenStream(); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		timedOut := make(chan time.Duration, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			if _, err := tc.s.OpenStreamSync(ctx); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("OpenStreamSync with a 50 ms context: %v, want context.DeadlineExceeded", err)
			}
			timedOut <- time.Since(start)
		}()
		opened := make(chan uint64, 2)
		for _, data := range []string{"one", "two"} {
			go func() {
				st, err := tc.s.OpenStreamSync(context.Background())
				if err != nil {
					t.Error(err)
					opened <- 0
					return
				}
				st.Write([]byte(data))
				opened <- st.ID()
			}()
		}
		fs := tc.collect(100 * time.Millisecond)[0]
		if el := <-timedOut; el != 50*time.Millisecond {
			t.Errorf("the waiter with a 50 ms context returned after %v", el)
		}
		for _, id := range []uint64{4, 8} {
			if data, fins := streamData(fs, id); len(data) > 0 || fins > 0 {
				t.Fatalf("frames for stream %d beyond the peer's limit of 1: %v", id, data)
			}
		}
		select {
		case id := <-opened:
			t.Fatalf("stream %d opened beyond the peer's limit", id)
		default:
		}
		tc.writeFrames(0, maxStreamsFrame{Uni: false, Count: 3})
		got := map[uint64]bool{<-opened: true, <-opened: true}
		if !got[4] || !got[8] {
			t.Fatalf("MAX_STREAMS 3 opened streams %v, want 4 and 8", got)
		}
		fs = tc.collect(100 * time.Millisecond)[0]
		for _, id := range []uint64{4, 8} {
			if data, _ := streamData(fs, id); len(data) == 0 {
				t.Errorf("no data sent on stream %d after MAX_STREAMS", id)
			}
		}
		ended := make(chan error, 1)
		go func() {
			_, err := tc.s.OpenStreamSync(context.Background())
			ended <- err
		}()
		synctest.Wait()
		tc.s.CloseWithError(0, "done")
		if err := <-ended; err == nil {
			t.Error("OpenStreamSync waiting when the session ended returned no error")
		}
	})
}
