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
	// The scripted server session: a client's uni stream 2 is accepted by
	// AcceptUniStream, its bidi stream 0 by AcceptStream; the server's own
	// streams get IDs 1 and 3.
	sp := newScriptedPeer(t, nil)
	defer sp.close()
	sp.s.streams.peerParams(wire.Params{MaxStreams: 10, MaxUniStreams: 10, StreamWindow: 64 << 10})
	sp.data(2, []byte("uni"))
	sp.data(0, []byte("bi"))
	if err := sp.send(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	rs, err := sp.s.AcceptUniStream(ctx)
	if err != nil || rs.ID() != 2 {
		t.Fatalf("AcceptUniStream = %v, %v; want stream 2", rs, err)
	}
	bs, err := sp.s.AcceptStream(ctx)
	if err != nil || bs.ID() != 0 {
		t.Fatalf("AcceptStream = %v, %v; want stream 0", bs, err)
	}
	buf := make([]byte, 8)
	if n, _ := rs.Read(buf); string(buf[:n]) != "uni" {
		t.Errorf("uni stream read %q", buf[:n])
	}
	if o, err := sp.s.OpenStream(); err != nil || o.ID() != 1 {
		t.Errorf("OpenStream = %v, %v; want stream 1", o, err)
	}
	if o, err := sp.s.OpenUniStream(); err != nil || o.ID() != 3 {
		t.Errorf("OpenUniStream = %v, %v; want stream 3", o, err)
	}
}

// RFC 9000 §4.6: "An endpoint that receives a frame with a stream ID
// exceeding the limit it has sent MUST treat this as a connection error of
// type STREAM_LIMIT_ERROR", and the limits of the two types are separate
// (initial_max_streams_bidi, initial_max_streams_uni; MAX_STREAMS frames
// of type 0x12 and 0x13). With MaxUniStreams 2 and MaxStreams 4 the peer may
// open 2 unidirectional and 4 bidirectional streams; a third
// unidirectional stream is a protocol error.
func TestUniStreamCreditSeparate(t *testing.T) {
	sp := newScriptedPeer(t, &Config{MaxStreams: 4, MaxUniStreams: 2})
	defer sp.close()
	if p := sp.s.streams.params(); p.MaxStreams != 4 || p.MaxUniStreams != 2 {
		t.Fatalf("announced %+v, want 4 bidirectional and 2 unidirectional streams", p)
	}
	for i := range uint64(4) {
		sp.fin(streamID(i, true, false))
	}
	for i := range uint64(2) {
		sp.fin(streamID(i, true, true))
	}
	if err := sp.send(); err != nil {
		t.Fatalf("streams within both credits: %v", err)
	}
	sp.fin(streamID(2, true, true))
	if err := sp.send(); !errors.Is(err, ErrProtocol) || !errors.Is(err, ErrStreamLimit) {
		t.Fatalf("a third unidirectional stream: err = %v, want a stream-limit protocol error", err)
	}
}

// The uni credit comes back with its own record: RFC 9000 §19.11, "A
// MAX_STREAMS frame of type 0x13 applies to unidirectional streams". The
// application accepts a unidirectional stream and reads it to its end: the
// session frames a RecMaxUniStreams and no RecMaxStreams. And the
// session's own uni credit is the peer's: it opens no unidirectional
// stream until the peer grants one.
func TestUniStreamCreditReturned(t *testing.T) {
	sp := newScriptedPeer(t, &Config{MaxUniStreams: 1})
	defer sp.close()
	sp.s.streams.peerParams(wire.Params{MaxStreams: 10, StreamWindow: 64 << 10}) // no uni credit
	if _, err := sp.s.OpenUniStream(); !errors.Is(err, ErrStreamLimitReached) {
		t.Errorf("OpenUniStream without credit: %v, want ErrStreamLimitReached", err)
	}
	sp.data(2, []byte("hello"))
	sp.fin(2)
	sp.frames(wire.AppendMaxStreams(nil, 1, true)) // the peer grants one
	if err := sp.send(); err != nil {
		t.Fatal(err)
	}
	if n := len(sp.sentFrames().recs); n != 0 {
		t.Errorf("the session framed %d records before the application acted", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	rs, err := sp.s.AcceptUniStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(rs); err != nil || string(b) != "hello" {
		t.Fatalf("read %q, %v", b, err)
	}
	log := sp.sentFrames()
	if got := log.find(frMaxUniStreams); len(got) != 1 || got[0].id != 2 {
		t.Errorf("MAX_STREAMS (uni) records %v, want one raising the limit to 2", got)
	}
	if got := log.find(frMaxStreams); len(got) != 0 {
		t.Errorf("a unidirectional stream returned bidirectional credit: %v", got)
	}
	ws, err := sp.s.OpenUniStream()
	if err != nil || ws.ID() != 3 {
		t.Fatalf("OpenUniStream after the peer's grant = %v, %v; want stream 3", ws, err)
	}
	ws.Write([]byte("up"))
	ws.Close()
	log = sp.sentFrames()
	if d, f := log.find(frData), log.find(frFin); len(d) != 1 || d[0].id != 3 || len(f) != 1 || f[0].id != 3 {
		t.Errorf("sent %v, want data and an end on stream 3", log.recs)
	}
	sp.s.mu.Lock()
	n := sp.s.streams.Len()
	sp.s.mu.Unlock()
	if n != 0 {
		t.Errorf("%d streams kept after both uni streams ended", n)
	}
}

// RFC 9000 §19.8: "An endpoint MUST terminate the connection with error
// STREAM_STATE_ERROR if it receives a STREAM frame for ... a send-only
// stream"; §19.4 (RESET_STREAM for a send-only stream), §19.5 (STOP_SENDING
// for a receive-only stream) and §19.10 (MAX_STREAM_DATA for a
// receive-only stream) say the same. Each is a protocol error here.
func TestUniStreamWrongDirection(t *testing.T) {
	for _, tc := range []struct {
		name string
		rec  []byte
	}{
		{"data on our send-only stream", append(wire.AppendStreamFrameHeader(nil, 3, 0, 1, false), 'x')},
		{"end of our send-only stream", wire.AppendStreamFrameHeader(nil, 3, 0, 0, true)},
		{"reset of our send-only stream", wire.AppendResetStream(nil, 3, 9, 0)},
		{"stop-sending on the peer's uni stream", wire.AppendStopSending(nil, 2, 9)},
		{"max-data on the peer's uni stream", wire.AppendMaxStreamData(nil, 2, 1<<20)},
	} {
		sp := newScriptedPeer(t, nil)
		sp.s.streams.peerParams(wire.Params{MaxStreams: 10, MaxUniStreams: 10, StreamWindow: 64 << 10})
		if _, err := sp.s.OpenUniStream(); err != nil { // stream 3
			t.Fatal(err)
		}
		sp.frames(tc.rec)
		if err := sp.send(); !errors.Is(err, ErrProtocol) {
			t.Errorf("%s: err = %v, want a protocol error", tc.name, err)
		}
		sp.close()
	}
}

// End to end in virtual time: each end opens a unidirectional stream and
// sends 1 MiB on it; the other accepts it with AcceptUniStream and reads
// every byte. With MaxUniStreams 2, the client's third OpenUniStreamSync
// waits until the server has read a stream to its end.
func TestUniStreamsE2E(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tb := newTestbed(t, 1, &Config{MaxUniStreams: 2})
		defer tb.close()
		data := bytes.Repeat([]byte("unidirectional"), 1<<20/14)
		send := func(ws *SendStream) {
			if _, err := ws.Write(data); err != nil {
				t.Errorf("stream %d: %v", ws.ID(), err)
			}
			ws.Close()
		}
		for _, pair := range [][2]*Session{{tb.cli, tb.srv}, {tb.srv, tb.cli}} {
			ws, err := pair[0].OpenUniStream()
			if err != nil {
				t.Fatal(err)
			}
			go send(ws)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			rs, err := pair[1].AcceptUniStream(ctx)
			cancel()
			if err != nil || rs.ID() != ws.ID() {
				t.Fatalf("AcceptUniStream = %v, %v; want stream %d", rs, err, ws.ID())
			}
			rs.SetReadDeadline(time.Now().Add(10 * time.Second))
			if got, err := io.ReadAll(rs); err != nil || !bytes.Equal(got, data) {
				t.Fatalf("read %d bytes, %v; want the %d written", len(got), err, len(data))
			}
		}
		// The client's uni credit: 2, the first stream done and read.
		second, _ := tb.cli.OpenUniStream()
		second.Write([]byte("2"))
		second.Close()
		third := make(chan *SendStream, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			ws, err := tb.cli.OpenUniStreamSync(ctx)
			if err != nil {
				t.Errorf("OpenUniStreamSync: %v", err)
			}
			third <- ws
		}()
		time.Sleep(time.Second)
		select {
		case <-third:
			// The first stream's credit came back once the server read it.
		default:
			t.Fatal("OpenUniStreamSync waits with one stream of credit left")
		}
		fourth := make(chan *SendStream, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			ws, _ := tb.cli.OpenUniStreamSync(ctx)
			fourth <- ws
		}()
		time.Sleep(time.Second)
		select {
		case <-fourth:
			t.Fatal("OpenUniStreamSync beyond the server's MaxUniStreams 2 returned")
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		rs, err := tb.srv.AcceptUniStream(ctx)
		if err != nil {
			t.Fatal(err)
		}
		io.ReadAll(rs)
		select {
		case ws := <-fourth:
			if ws == nil || ws.ID() != streamID(3, true, true) {
				t.Errorf("fourth uni stream %v, want ID %d", ws, streamID(3, true, true))
			}
		case <-time.After(5 * time.Second):
			t.Fatal("OpenUniStreamSync still waits after the server read a stream")
		}
		for name, s := range map[string]*Session{"client": tb.cli, "server": tb.srv} {
			if err := s.Err(); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	})
}
