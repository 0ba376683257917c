package session

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/certs"
	"github.com/mpqsched/mpqsched/pkg/emu"
)

// testbed is a server Listener and a client Session over emulated paths.
type testbed struct {
	topo *emu.Topology
	ln   *Listener
	cli  *Session
	srv  *Session
	pair *certs.Pair
}

func newTestbed(t *testing.T, npaths int, cfg *Config) *testbed {
	t.Helper()
	link := emu.LinkConfig{RateBps: 50e6, Delay: 5 * time.Millisecond}
	specs := make([]emu.PathSpec, npaths)
	for i := range specs {
		specs[i] = emu.PathSpec{Up: link, Down: link}
	}
	return newTestbedOn(t, 1, cfg, false, specs...)
}

// newTestbedOn builds the emulated paths of specs (seeding the emulator with
// seed) and dials the first; with join, the client joins the others too.
func newTestbedOn(t *testing.T, seed int64, cfg *Config, join bool, specs ...emu.PathSpec) *testbed {
	t.Helper()
	return newTestbedCfgs(t, seed, cfg, cfg, join, specs...)
}

// newTestbedCfgs is newTestbedOn with a config for each end.
func newTestbedCfgs(t *testing.T, seed int64, srvCfg, cliCfg *Config, join bool, specs ...emu.PathSpec) *testbed {
	t.Helper()
	topo, err := emu.NewTopology(seed, specs...)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := certs.SelfSigned("mpqsched.test")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := Listen(topo.Server, pair.Server, srvCfg)
	if err != nil {
		t.Fatal(err)
	}
	cli, err := Dial(context.Background(), topo.Clients[0], topo.Server.LocalAddr(), pair.Client, cliCfg)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ln.Accept(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if join {
		for _, pc := range topo.Clients[1:] {
			if _, err := cli.AddPath(context.Background(), pc, topo.Server.LocalAddr(), PathOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return &testbed{topo: topo, ln: ln, cli: cli, srv: srv, pair: pair}
}

func (tb *testbed) close() {
	tb.cli.CloseWithError(0, "")
	tb.ln.Close()
	tb.topo.Close()
}

// "A join must be authenticated so that nobody else can attach a path to the
// session": a second client that knows the session ID but not the key derived
// from the first path's TLS exporter is refused, and the session keeps one
// path.
func TestForgedJoinRejected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tb := newTestbed(t, 1, nil)
		defer tb.close()
		pc, _, err := tb.topo.AddPath(emu.PathSpec{})
		if err != nil {
			t.Fatal(err)
		}
		// An attacker's session object: same session ID, its own (wrong) key.
		c, _ := (&Config{}).withDefaults()
		evil, err := newSession(c, true, withALPN(tb.pair.Client))
		if err != nil {
			t.Fatal(err)
		}
		evil.id = tb.cli.id
		evil.joinKey = [32]byte{1, 2, 3}
		_, err = evil.AddPath(context.Background(), pc, tb.topo.Server.LocalAddr(), PathOptions{})
		if !errors.Is(err, ErrJoinRejected) {
			t.Fatalf("forged join: err = %v, want ErrJoinRejected", err)
		}
		if n := tb.ln.RejectedJoins(); n != 1 {
			t.Errorf("listener rejected %d joins, want 1", n)
		}
		if n := len(tb.srv.Paths()); n != 1 {
			t.Errorf("server session has %d paths after a forged join, want 1", n)
		}
		evil.CloseWithError(0, "")

		// The genuine client can still join a path with the right key.
		pc2, _, err := tb.topo.AddPath(emu.PathSpec{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tb.cli.AddPath(context.Background(), pc2, tb.topo.Server.LocalAddr(), PathOptions{}); err != nil {
			t.Fatalf("genuine join: %v", err)
		}
		synctest.Wait()
		if n := len(tb.srv.Paths()); n != 2 {
			t.Errorf("server session has %d paths after a genuine join, want 2", n)
		}
	})
}

// The session caps its paths.
func TestPathLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tb := newTestbed(t, 1, &Config{MaxPaths: 2})
		defer tb.close()
		for i := 0; i < 2; i++ {
			pc, _, err := tb.topo.AddPath(emu.PathSpec{})
			if err != nil {
				t.Fatal(err)
			}
			_, err = tb.cli.AddPath(context.Background(), pc, tb.topo.Server.LocalAddr(), PathOptions{})
			if i == 0 && err != nil {
				t.Fatalf("second path: %v", err)
			}
			if i == 1 && !errors.Is(err, ErrTooManyPaths) {
				t.Fatalf("third path: err = %v, want ErrTooManyPaths", err)
			}
		}
	})
}

// The peer may open at most MaxStreams streams; one more is a connection
// error.
// RFC 9000 §4.6: "An endpoint that is unable to open a new stream due to the
// peer's limits SHOULD send a STREAMS_BLOCKED frame" — it waits; reaching
// the limit never ends the session. OpenStream says so at once,
// OpenStreamSync waits until a stream of the peer's is done. (On the
// harness, each end against the scripted peer: the opener sends nothing
// beyond its credit; the granter sends MAX_STREAMS once a stream is done.)
func TestStreamLimit(t *testing.T) {
	// The opener: a Dial side granted 4 streams by its peer.
	synctest.Test(t, func(t *testing.T) {
		params := peerParams
		params.MaxStreams = 4
		tc := newTestClientParams(t, nil, params)
		for i := 0; i < 4; i++ {
			st, err := tc.s.OpenStream()
			if err != nil {
				t.Fatal(err)
			}
			st.Write([]byte("x"))
		}
		if _, err := tc.s.OpenStream(); !errors.Is(err, ErrStreamLimitReached) {
			t.Fatalf("fifth OpenStream: err = %v, want ErrStreamLimitReached", err)
		}
		got := make(chan *Stream, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			st, err := tc.s.OpenStreamSync(ctx)
			if err != nil {
				t.Error(err)
			}
			got <- st
		}()
		for _, f := range without(tc.collect(time.Second)[0]) {
			if d, ok := f.(dataFrame); ok && d.ID >= 16 {
				t.Fatalf("%v beyond the 4 streams granted", f)
			}
		}
		select {
		case <-got:
			t.Fatal("OpenStreamSync returned before the peer granted a stream")
		default:
		}
		// The peer grants one more (RFC 9000 §4.6: "Implementations might
		// choose to increase limits as streams are closed, to keep the
		// number of streams available to peers roughly consistent.")
		tc.ackAll(0)
		tc.writeFrames(0, maxStreamsFrame{Uni: false, Count: 5})
		select {
		case st := <-got:
			if st == nil || st.ID() != 16 { // the fifth client stream (RFC 9000 §2.1: index 4, type 0)
				t.Fatalf("OpenStreamSync gave %v, want stream 16", st)
			}
			st.Write([]byte("fifth"))
			tc.wantRecord("the fifth stream's data", 0, dataFrame{ID: 16, Data: "fifth"})
		case <-time.After(5 * time.Second):
			t.Fatal("OpenStreamSync still waits after the peer's MAX_STREAMS")
		}
		if err := tc.s.Err(); err != nil {
			t.Errorf("session ended: %v", err)
		}
	})
	// The granter: a Listen side with MaxStreams 4 grants one more once the
	// first stream is done both ways, and nothing before.
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, &Config{MaxStreams: 4})
		for id := uint64(0); id < 16; id += 4 {
			tc.writeFrames(0, dataFrame{ID: id, Data: "x"})
		}
		peer, err := tc.s.AcceptStream(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		tc.advance(50 * time.Millisecond)
		tc.drain(0)
		tc.writeFrames(0, finFrame{ID: 0})
		io.ReadAll(peer)
		peer.Close()
		tc.wantRecord("the server ends its side", 0, finFrame{ID: 0})
		tc.wantRecord("both ends finished the first stream: one more", 0, maxStreamsFrame{Uni: false, Count: 5})
		tc.ackAll(0)
		for _, f := range without(tc.collect(100 * time.Millisecond)[0]) {
			t.Errorf("after the MAX_STREAMS: %v", f) // Acks of the peer's segments aside
		}
		tc.wantIdle("one MAX_STREAMS")
		if err := tc.s.Err(); err != nil {
			t.Errorf("session ended: %v", err)
		}
	})
}

var _ net.Addr = (*net.UDPAddr)(nil)

// A Read with nothing to read returns os.ErrDeadlineExceeded at its deadline.
func TestStreamReadDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tb := newTestbed(t, 1, nil)
		defer tb.close()
		st, err := tb.cli.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		st.SetReadDeadline(start.Add(300 * time.Millisecond))
		_, err = st.Read(make([]byte, 10))
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("err = %v, want os.ErrDeadlineExceeded", err)
		}
		if el := time.Since(start); el < 300*time.Millisecond || el > 310*time.Millisecond {
			t.Errorf("Read returned after %v, want 300 ms", el)
		}
	})
}

// With QlogDir set, every path connection of both ends writes a qlog file
// (JSON-SEQ, readable in qvis) with the connection's events.
func TestQlogFiles(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		tb := newTestbed(t, 2, &Config{QlogDir: dir})
		if _, err := tb.cli.AddPath(context.Background(), tb.topo.Clients[1], tb.topo.Server.LocalAddr(), PathOptions{}); err != nil {
			t.Fatal(err)
		}
		st, _ := tb.cli.OpenStream()
		st.Write(make([]byte, 100<<10))
		st.Close()
		in, err := tb.srv.AcceptStream(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := io.Copy(io.Discard, in); n != 100<<10 {
			t.Fatalf("read %d bytes", n)
		}
		tb.cli.Close()
		tb.ln.Close()
		tb.topo.Close()
	})
	files, _ := filepath.Glob(filepath.Join(dir, "*.sqlog"))
	if len(files) != 4 {
		t.Fatalf("%d qlog files, want 4 (2 paths × 2 ends): %v", len(files), files)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte("transport:packet_sent")) || !bytes.Contains(b, []byte("recovery:metrics_updated")) {
			t.Errorf("%s lacks packet_sent or metrics_updated events (%d bytes)", f, len(b))
		}
	}
}

// RFC 9000 §10.2.1: "An endpoint in the closing state sends a packet
// containing a CONNECTION_CLOSE frame in response to any incoming packet
// that it attributes to the connection." The client's final Ack and its
// close are both lost here (its uplink is cut as it closes); the sockets it
// owns stay open while it drains (quic-go keeps answering for three PTOs),
// so the server's next packet draws the close again and the server ends
// cleanly instead of waiting out its idle timeout (30 s) and reporting
// every path gone. (On the harness: the peer plays the server, and sees the
// close, with what it says arrived.)
func TestLostCloseAnsweredWhileDraining(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestClient(t, nil)
		link := emu.LinkConfig{RateBps: 50e6, Delay: 5 * time.Millisecond}
		st := tc.openWritten("GET\n")
		tc.wantRecord("the request", 0, dataFrame{ID: st.ID(), Data: "GET\n"})
		tc.ackAll(0)
		tc.advance(20 * time.Millisecond)
		tc.drain(0)
		// From here nothing the client sends arrives: not its Acks, not
		// its close.
		if err := tc.paths[0].link.Update(emu.LinkConfig{RateBps: 50e6, Delay: 5 * time.Millisecond, Loss: 1}, link); err != nil {
			t.Fatal(err)
		}
		tc.writeFrames(0, dataFrame{ID: st.ID(), Data: strings.Repeat("\x07", 32<<10)}, finFrame{ID: st.ID()})
		if n, err := io.Copy(io.Discard, st); err != nil || n != 32<<10 {
			t.Fatalf("client read %d bytes, err %v; want %d", n, err, 32<<10)
		}
		if err := tc.s.Close(); err != nil {
			t.Fatalf("client Close: %v", err)
		}
		tc.advance(10 * time.Millisecond)
		if fs := tc.drain(0); len(fs) > 0 {
			t.Fatalf("the peer got %v through a link that drops everything", fs)
		}
		if err := tc.paths[0].link.Update(link, link); err != nil {
			t.Fatal(err)
		}
		// The peer, which has heard nothing, asks again (as the server's
		// PTO probe or AckReq would): the client, still draining, answers
		// with its clean close, which says the response arrived.
		restored := time.Now()
		tc.writeFrames(0, ackReqFrame{})
		tc.mu.Lock()
		segs := tc.codec.(*wireV4).seq
		tc.mu.Unlock()
		if c := tc.wantClose("the lost close, answered", 0, uint64(codeNoError)); c.Reason != cleanCloseReason(segs) {
			t.Errorf("the close says %q, want %q", c.Reason, cleanCloseReason(segs))
		}
		if el := time.Since(restored); el > time.Second {
			t.Errorf("the close came %v after the link came back, want within 1 s", el)
		}
	})
}

// Issue 29: "A 9th path is refused with code 4 ("internal", "session: too
// many paths"), where a refusal code is expected." A join past the
// server's MaxPaths is refused like the other limits: the client's AddPath
// returns ErrRefused naming the limit, the server counts it in Refused,
// and the session goes on with its paths.
func TestPathLimitServerRefuses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		link := emu.LinkConfig{RateBps: 50e6, Delay: 5 * time.Millisecond}
		spec := emu.PathSpec{Up: link, Down: link}
		tb := newTestbedCfgs(t, 1, &Config{MaxPaths: 2}, &Config{MaxPaths: 8}, false, spec)
		defer tb.close()
		for i := 0; i < 2; i++ {
			pc, _, err := tb.topo.AddPath(spec)
			if err != nil {
				t.Fatal(err)
			}
			_, err = tb.cli.AddPath(context.Background(), pc, tb.topo.Server.LocalAddr(), PathOptions{})
			if i == 0 && err != nil {
				t.Fatalf("second path: %v", err)
			}
			if i == 1 && (!errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "2 paths")) {
				t.Fatalf("third path: err = %v, want ErrRefused naming the 2-path limit", err)
			}
		}
		synctest.Wait()
		if n := tb.ln.Refused(); n != 1 {
			t.Errorf("the listener counted %d refusals, want 1", n)
		}
		if n := len(tb.srv.Paths()); n != 2 {
			t.Errorf("the server session has %d paths, want 2", n)
		}
		select {
		case <-tb.srv.Done():
			t.Errorf("the session ended: %v", tb.srv.Err())
		default:
		}
	})
}
