package session

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/mpqsched/mpqsched/pkg/certs"
	"github.com/mpqsched/mpqsched/pkg/emu"
	"github.com/mpqsched/mpqsched/pkg/wire"
)

// testSession is a session under test (the Listen side; newTestClient: the
// Dial side) and a scripted peer that talks to it, after
// golang.org/x/net/quic's testConn. The peer is a real quic-go endpoint per
// path, over the emulator, inside a synctest bubble: it sends what the test
// writes (writeFrames) and decodes every session frame the session sends on
// each path, on the path's data stream and in QUIC datagrams (frameCodec),
// so that a test states what must go out (wantFrame, wantAck) and what
// must not (wantIdle).
//
// Frames are seen where the peer receives them, after the path's one-way
// delay, each with its arrival time, so a want lets virtual time run (up to
// harnessWait) for the next frame to arrive, where x/net/quic's wants the
// frame sent at once. The peer's quic-go acknowledges QUIC packets as any
// endpoint does; it never sends a session frame the test did not write. In
// particular it sends no connection-level Ack: the test does, with
// writeFrames(path, ackFrame{...}).
//
// The API at a glance:
//   - newTestSession, newTestClient (…Params: with other limits granted by
//     the peer): the session and its peer, paths up, readers running;
//     tc.opening is what the session sent as it opened, tc.hello the Hello
//     of a Dial side.
//   - writeFrames(path, frames...) as the peer; cut(records...) makes the
//     peer's segments to send later, in any order (wire v3); writeRaw and
//     sendRawDatagram bypass the codec, for malformed input.
//   - wantFrame(expectation, path, frame), wantFrameType[T], wantAck(
//     expectation, path, cum), wantRecord (past segment headers and Acks),
//     wantClose, wantIdle(expectation); readFrame and drain for the rest.
//   - advance(d) lets virtual time run; packetsFromSession counts the UDP
//     packets that reached the peer.
//
// The session's application side is tc.s, used directly by the test.
type testSession struct {
	t     *testing.T
	s     *Session // the session under test
	ln    *Listener
	topo  *emu.Topology
	paths []*peerPath
	codec frameCodec

	mu      sync.Mutex    // guards every peerPath's got and codec (reader goroutines)
	arrived chan struct{} // signalled when a frame arrives, capacity 1
	closed  bool
	opening []pathFrame // what the session sent as it opened, before newTestSession returned
	nextSeg uint64      // one past the highest segment sequence number the peer saw, on any path (ackAll)

	dial   bool            // the session under test is the Dial side (newTestClient)
	hello  wire.Hello      // the session's Hello (Dial side)
	peerTr *quic.Transport // the peer's listening transport (Dial side)
	peerLn *quic.Listener  // the peer's listener (Dial side)
}

// peerPath is the peer's end of one path.
type peerPath struct {
	slot  int             // index in testSession.paths
	id    uint32          // the path's ID, from the session's Accept
	tr    *quic.Transport // the peer's transport for this path (Listen side)
	conn  *quic.Conn
	out   *quic.SendStream // the peer's data stream
	in    *bufio.Reader    // the session's data stream, after its Accept
	link  *emu.Link
	got   []gotFrame // received, not yet taken by a want
	err   error      // the first decoding error, if any
	wg    sync.WaitGroup
	delay time.Duration // one-way delay of the link
}

// gotFrame is a frame the peer received, and when.
type gotFrame struct {
	f  frame
	at time.Time
}

// Harness defaults.
const (
	// harnessWait is how long wantFrame lets virtual time run for a frame
	// to arrive.
	harnessWait = time.Second
	// harnessIdle is how long wantIdle lets virtual time run: past every
	// timer of an idle session (AckDelay, the failure timeout, probes,
	// reports) and well within quic-go's 30 s idle timeout.
	harnessIdle = 5 * time.Second
)

var harnessCerts = sync.OnceValues(func() (*certs.Pair, error) { return certs.SelfSigned("mpqsched.test") })

// harnessLink is a path of the harness: 50 Mbit/s and the given one-way
// delay each way.
func harnessLink(delay time.Duration) emu.PathSpec {
	l := emu.LinkConfig{RateBps: 50e6, Delay: delay}
	return emu.PathSpec{Up: l, Down: l}
}

// peerParams are the stream limits the peer grants the session: 100
// streams of each kind with 1 MiB stream windows, and 16 MiB of connection
// credit (MAX_DATA frames raise it).
var peerParams = wire.Params{MaxStreams: 100, StreamWindow: 1 << 20, MaxUniStreams: 100, MaxData: 1 << 24}

// newTestSession must run inside a synctest bubble. It listens with cfg
// (nil: defaults, but with receiver reports off, so that the frames a test
// sees are the ones the rule in question sends), connects the peer over the
// first path and joins the others, and returns once the session has
// accepted them all. With no specs it makes one path of 5 ms one-way delay.
// The peer grants the session peerParams. Everything closes when the test
// ends.
func newTestSession(t *testing.T, cfg *Config, specs ...emu.PathSpec) *testSession {
	t.Helper()
	return newTestSessionParams(t, cfg, peerParams, specs...)
}

// newTestSessionParams is newTestSession with the peer granting params.
func newTestSessionParams(t *testing.T, cfg *Config, params wire.Params, specs ...emu.PathSpec) *testSession {
	t.Helper()
	tc, c, pair := newHarness(t, cfg, specs)
	var err error
	if tc.ln, err = Listen(tc.topo.Server, pair.Server, &c); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var key [32]byte
	var acc *wire.Accept
	for i, pp := range tc.paths {
		pp.tr = &quic.Transport{Conn: tc.topo.Clients[i]}
		if pp.conn, err = pp.tr.Dial(ctx, tc.topo.Server.LocalAddr(), withALPN(pair.Client), &quic.Config{EnableDatagrams: true}); err != nil {
			t.Fatalf("path %d: %v", i, err)
		}
		var f any = wire.Hello{Params: params}
		if i > 0 {
			j := &wire.Join{SessionID: acc.SessionID}
			rand.Read(j.Nonce[:])
			b, err := exportBinding(pp.conn)
			if err != nil {
				t.Fatal(err)
			}
			j.MAC = joinMAC(key[:], j.SessionID, j.Nonce, b)
			f = j
		}
		if pp.out, err = pp.conn.OpenUniStream(); err != nil {
			t.Fatal(err)
		}
		if _, err := pp.out.Write(wire.AppendHandshake(nil, f)); err != nil {
			t.Fatal(err)
		}
		in, err := pp.conn.AcceptUniStream(ctx)
		if err != nil {
			t.Fatalf("path %d: handshake: %v", i, err)
		}
		pp.in = bufio.NewReader(in)
		h, err := wire.ReadHandshake(pp.in)
		if err != nil {
			t.Fatalf("path %d: handshake: %v", i, err)
		}
		a, ok := h.(*wire.Accept)
		if !ok {
			t.Fatalf("path %d: got %T, want an Accept", i, h)
		}
		pp.id = a.PathID
		if i == 0 {
			acc = a
			if key, err = exportJoinKey(pp.conn); err != nil {
				t.Fatal(err)
			}
			if tc.s, err = tc.ln.Accept(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	for len(tc.s.Paths()) < len(tc.paths) { // the session attaches a joined path after sending its Accept
		time.Sleep(time.Millisecond)
	}
	tc.started()
	return tc
}

// newTestClient is newTestSession for the Dial side: the session under
// test dials the peer, a quic-go listener that answers its Hello and Joins
// with Accepts (path IDs 0, 1, ...; the Joins' MACs are not checked) and
// grants it peerParams. tc.hello is the session's Hello.
func newTestClient(t *testing.T, cfg *Config, specs ...emu.PathSpec) *testSession {
	t.Helper()
	return newTestClientParams(t, cfg, peerParams, specs...)
}

// newTestClientParams is newTestClient with the peer granting params.
func newTestClientParams(t *testing.T, cfg *Config, params wire.Params, specs ...emu.PathSpec) *testSession {
	t.Helper()
	return newTestClientPath(t, cfg, params, PathOptions{}, specs...)
}

// newTestClientPath is newTestClientParams with the session dialling its
// first path with opts (DialPath).
func newTestClientPath(t *testing.T, cfg *Config, params wire.Params, opts PathOptions, specs ...emu.PathSpec) *testSession {
	t.Helper()
	tc, c, pair := newHarness(t, cfg, specs)
	tc.dial = true
	ptr := &quic.Transport{Conn: tc.topo.Server}
	tc.peerTr = ptr
	ln, err := ptr.Listen(withALPN(pair.Server), &quic.Config{EnableDatagrams: true})
	if err != nil {
		t.Fatal(err)
	}
	tc.peerLn = ln
	ctx := context.Background()
	var id [wire.SessionIDLen]byte
	rand.Read(id[:])
	for i, pp := range tc.paths {
		done := make(chan error, 1)
		if i == 0 {
			go func() {
				s, err := DialPath(ctx, tc.topo.Clients[0], tc.topo.Server.LocalAddr(), pair.Client, &c, opts)
				tc.s = s
				done <- err
			}()
		} else {
			go func() {
				_, err := tc.s.AddPath(ctx, tc.topo.Clients[i], tc.topo.Server.LocalAddr(), PathOptions{})
				done <- err
			}()
		}
		if pp.conn, err = ln.Accept(ctx); err != nil {
			t.Fatalf("path %d: %v", i, err)
		}
		in, err := pp.conn.AcceptUniStream(ctx)
		if err != nil {
			t.Fatalf("path %d: handshake: %v", i, err)
		}
		pp.in = bufio.NewReader(in)
		h, err := wire.ReadHandshake(pp.in)
		if err != nil {
			t.Fatalf("path %d: handshake: %v", i, err)
		}
		switch h := h.(type) {
		case wire.Hello:
			if i == 0 {
				tc.hello = h
				break
			}
			t.Fatalf("path %d: got a Hello, want a Join", i)
		case *wire.Join:
			if i > 0 && h.SessionID == id {
				break
			}
			t.Fatalf("path %d: got %+v", i, h)
		default:
			t.Fatalf("path %d: got %T", i, h)
		}
		if pp.out, err = pp.conn.OpenUniStream(); err != nil {
			t.Fatal(err)
		}
		if _, err := pp.out.Write(wire.AppendHandshake(nil, &wire.Accept{SessionID: id, PathID: uint32(i), Params: params})); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatalf("path %d: %v", i, err)
		}
		pp.id = uint32(i)
	}
	tc.started()
	return tc
}

// newHarness makes the network of specs (one path of 5 ms one-way delay
// if none), the peer's paths and the session's config.
func newHarness(t *testing.T, cfg *Config, specs []emu.PathSpec) (*testSession, Config, *certs.Pair) {
	t.Helper()
	var c Config
	if cfg != nil {
		c = *cfg
	}
	if c.ReportInterval == 0 {
		c.ReportInterval = -1
	}
	if len(specs) == 0 {
		specs = []emu.PathSpec{harnessLink(5 * time.Millisecond)}
	}
	pair, err := harnessCerts()
	if err != nil {
		t.Fatal(err)
	}
	topo, err := emu.NewTopology(1, specs...)
	if err != nil {
		t.Fatal(err)
	}
	tc := &testSession{t: t, topo: topo, codec: newWireV4(), arrived: make(chan struct{}, 1)}
	t.Cleanup(tc.close)
	for i, spec := range specs {
		tc.paths = append(tc.paths, &peerPath{slot: i, link: topo.Links[i], delay: max(spec.Up.Delay, spec.Down.Delay)})
	}
	return tc, c, pair
}

// started starts the peer's readers once every path is up, and keeps what
// the session sends as it opens (the Ack that announces its window) in
// tc.opening, so that a test starts from quiet paths.
func (tc *testSession) started() {
	var maxDelay time.Duration
	for _, pp := range tc.paths {
		tc.startReaders(pp)
		maxDelay = max(maxDelay, pp.delay)
	}
	tc.advance(maxDelay + time.Millisecond)
	for i := range tc.paths {
		for _, f := range tc.drain(i) {
			tc.opening = append(tc.opening, pathFrame{i, f})
		}
	}
}

// pathFrame is a frame and the path it came on.
type pathFrame struct {
	path int
	f    frame
}

// startReaders starts the goroutines that decode what the session sends on
// pp: its data stream, its datagrams, and the connection's close.
func (tc *testSession) startReaders(pp *peerPath) {
	pp.wg.Add(2)
	go func() {
		defer pp.wg.Done()
		buf := make([]byte, 64<<10)
		for {
			n, err := pp.in.Read(buf)
			if n > 0 {
				tc.mu.Lock()
				fs, derr := tc.codec.streamRead(pp.slot, buf[:n])
				tc.addLocked(pp, derr, fs...)
				tc.mu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		defer pp.wg.Done()
		for {
			b, err := pp.conn.ReceiveDatagram(context.Background())
			if err != nil {
				return
			}
			tc.mu.Lock()
			fs, derr := tc.codec.datagramRead(pp.slot, b)
			if derr == nil {
				tc.addLocked(pp, nil, fs...)
			} else {
				tc.addLocked(pp, derr)
			}
			tc.mu.Unlock()
		}
	}()
	go func() {
		<-pp.conn.Context().Done()
		pp.wg.Wait() // the close comes after everything that came before it
		var ae *quic.ApplicationError
		if err := context.Cause(pp.conn.Context()); errors.As(err, &ae) && ae.Remote {
			tc.mu.Lock()
			tc.addLocked(pp, nil, closeFrame{Code: uint64(ae.ErrorCode), Reason: ae.ErrorMessage})
			tc.mu.Unlock()
		}
	}()
}

// addLocked records frames that arrived on pp now.
func (tc *testSession) addLocked(pp *peerPath, err error, fs ...frame) {
	if err != nil && pp.err == nil {
		pp.err = fmt.Errorf("path %d: the peer could not decode what the session sent: %w", pp.slot, err)
	}
	now := time.Now()
	for _, f := range fs {
		pp.got = append(pp.got, gotFrame{f, now})
		if sf, ok := f.(segmentFrame); ok {
			tc.nextSeg = max(tc.nextSeg, sf.Seq+1)
		}
	}
	select {
	case tc.arrived <- struct{}{}:
	default:
	}
}

// close ends the session, the peer and the network (at the test's end).
func (tc *testSession) close() {
	if tc.closed {
		return
	}
	tc.closed = true
	if tc.s != nil {
		tc.s.CloseWithError(0, "")
	}
	for _, pp := range tc.paths {
		if pp.conn != nil {
			pp.conn.CloseWithError(0, "")
		}
		if pp.tr != nil {
			pp.tr.Close()
		}
	}
	if tc.ln != nil {
		tc.ln.Close()
	}
	if tc.peerLn != nil {
		tc.peerLn.Close()
		tc.peerTr.Close()
	}
	tc.topo.Close()
	for _, pp := range tc.paths {
		pp.wg.Wait()
	}
}

// advance lets virtual time run for d, and everything due happen.
func (tc *testSession) advance(d time.Duration) {
	time.Sleep(d)
	synctest.Wait()
}

// writeFrames sends frames as the peer on path: the records among them in
// one segment (more if they are too long for one) on the path's data
// stream, the datagram frames as QUIC datagrams, in that order.
func (tc *testSession) writeFrames(path int, fs ...frame) {
	tc.t.Helper()
	pp := tc.paths[path]
	tc.mu.Lock()
	stream, dgrams, err := tc.codec.encode(fs)
	tc.mu.Unlock()
	if err != nil {
		tc.t.Fatal(err)
	}
	if len(stream) > 0 {
		if _, err := pp.out.Write(stream); err != nil {
			tc.t.Fatalf("path %d: writing %v: %v", path, fs, err)
		}
	}
	for _, d := range dgrams {
		if err := pp.conn.SendDatagram(d); err != nil {
			tc.t.Fatalf("path %d: sending a datagram: %v", path, err)
		}
	}
}

// readFrame returns the next frame the session sent on path, letting
// virtual time run up to harnessWait for one to arrive, or a nil frame.
func (tc *testSession) readFrame(path int) (frame, time.Time) {
	tc.t.Helper()
	limit := time.NewTimer(harnessWait)
	defer limit.Stop()
	pp := tc.paths[path]
	for {
		synctest.Wait()
		tc.mu.Lock()
		if pp.err != nil {
			tc.mu.Unlock()
			tc.t.Fatal(pp.err)
		}
		if len(pp.got) > 0 {
			g := pp.got[0]
			pp.got = pp.got[1:]
			tc.mu.Unlock()
			return g.f, g.at
		}
		tc.mu.Unlock()
		select {
		case <-tc.arrived:
		case <-limit.C:
			return nil, time.Time{}
		}
	}
}

// wantFrame asserts that the next frame the session sends on path is want
// (within harnessWait), and returns when it arrived.
func (tc *testSession) wantFrame(expectation string, path int, want frame) time.Time {
	tc.t.Helper()
	got, at := tc.readFrame(path)
	if got == nil {
		tc.t.Fatalf("%s:\npath %d is idle\nwant frame: %v", expectation, path, want)
	}
	if !reflect.DeepEqual(got, want) {
		tc.t.Fatalf("%s:\npath %d: got frame:  %v\nwant frame: %v", expectation, path, got, want)
	}
	return at
}

// wantFrameType asserts that the next frame the session sends on path is a
// T, and returns it and when it arrived.
func wantFrameType[T frame](tc *testSession, expectation string, path int) (T, time.Time) {
	tc.t.Helper()
	got, at := tc.readFrame(path)
	f, ok := got.(T)
	if !ok {
		var want T
		if got == nil {
			tc.t.Fatalf("%s:\npath %d is idle\nwant a frame of type %T", expectation, path, want)
		}
		tc.t.Fatalf("%s:\npath %d: got frame: %v\nwant a frame of type %T", expectation, path, got, want)
	}
	return f, at
}

// wantAck asserts that the next frame on path is an Ack of every segment
// below cum (and no others), and returns it (for its Limit) and when it
// arrived.
func (tc *testSession) wantAck(expectation string, path int, cum uint64) (ackFrame, time.Time) {
	tc.t.Helper()
	a, at := wantFrameType[ackFrame](tc, expectation, path)
	if a.Cum != cum || a.Ranges != nil {
		tc.t.Fatalf("%s:\npath %d: got %v\nwant an Ack with cum %d and no ranges", expectation, path, a, cum)
	}
	return a, at
}

// wantIdle asserts that nothing is left to take on any path and that the
// session sends nothing more while the peer does nothing, letting virtual
// time run for harnessIdle, past every timer an idle session may have set.
func (tc *testSession) wantIdle(expectation string) {
	tc.t.Helper()
	tc.advance(harnessIdle)
	tc.mu.Lock()
	defer tc.mu.Unlock()
	var extra []string
	for _, pp := range tc.paths {
		if pp.err != nil {
			tc.t.Fatal(pp.err)
		}
		for _, g := range pp.got {
			extra = append(extra, fmt.Sprintf("path %d: %v", pp.slot, g.f))
		}
	}
	if len(extra) > 0 {
		if len(extra) > 8 {
			extra = append(extra[:8], fmt.Sprintf("… %d more", len(extra)-8))
		}
		tc.t.Fatalf("%s:\nunexpectedly got:\n\t%s", expectation, strings.Join(extra, "\n\t"))
	}
}

// drain takes every frame that arrived on path by now.
func (tc *testSession) drain(path int) []frame {
	synctest.Wait()
	tc.mu.Lock()
	defer tc.mu.Unlock()
	pp := tc.paths[path]
	var out []frame
	for _, g := range pp.got {
		out = append(out, g.f)
	}
	pp.got = nil
	return out
}

// packetsFromSession is how many UDP packets of the session's reached the
// peer on path so far.
func (tc *testSession) packetsFromSession(path int) uint64 {
	ab, ba := tc.paths[path].link.Stats() // a = client
	if tc.dial {
		return ab.DeliveredPkts
	}
	return ba.DeliveredPkts
}

// openWritten opens a stream on the session under test and writes data on
// it, failing the test if either fails.
func (tc *testSession) openWritten(data string) *Stream {
	tc.t.Helper()
	st, err := tc.s.OpenStream()
	if err != nil {
		tc.t.Fatal(err)
	}
	if _, err := st.Write([]byte(data)); err != nil {
		tc.t.Fatal(err)
	}
	return st
}

// readAll reads n bytes from st, failing the test on an error.
func (tc *testSession) readAll(st *Stream, n int) []byte {
	tc.t.Helper()
	b := make([]byte, n)
	if _, err := io.ReadFull(st, b); err != nil {
		tc.t.Fatalf("reading %d bytes of stream %d: %v", n, st.ID(), err)
	}
	return b
}

// cut makes the peer's next segments, one per record frame of fs (wire v3:
// wireV4.cut), without sending them.
func (tc *testSession) cut(fs ...frame) []rawSegment {
	tc.t.Helper()
	tc.mu.Lock()
	defer tc.mu.Unlock()
	c, ok := tc.codec.(*wireV4)
	if !ok {
		tc.t.Fatalf("cut needs wire v3's segments, not %T", tc.codec)
	}
	segs, err := c.cut(fs...)
	if err != nil {
		tc.t.Fatal(err)
	}
	return segs
}

// wantRecord asserts that the next frame on path, past segment headers and
// Acks (which it takes), is want: for tests of records, whose segments and
// the Acks of the peer's own segments interleave with them.
func (tc *testSession) wantRecord(expectation string, path int, want frame) {
	tc.t.Helper()
	for {
		got, _ := tc.readFrame(path)
		switch got.(type) {
		case segmentFrame, ackFrame:
			continue
		case nil:
			tc.t.Fatalf("%s:\npath %d is idle\nwant frame: %v", expectation, path, want)
		}
		if !reflect.DeepEqual(got, want) {
			tc.t.Fatalf("%s:\npath %d: got frame:  %v\nwant frame: %v", expectation, path, got, want)
		}
		return
	}
}

// writeRaw writes b on path's data stream as it is, past the codec: for
// malformed input.
func (tc *testSession) writeRaw(path int, b []byte) {
	tc.t.Helper()
	if _, err := tc.paths[path].out.Write(b); err != nil {
		tc.t.Fatalf("path %d: %v", path, err)
	}
}

// sendRawDatagram sends b as a QUIC datagram on path, past the codec.
func (tc *testSession) sendRawDatagram(path int, b []byte) {
	tc.t.Helper()
	if err := tc.paths[path].conn.SendDatagram(b); err != nil {
		tc.t.Fatalf("path %d: %v", path, err)
	}
}

// wantClose asserts that the session closes path with code (within
// harnessWait of the last frame), taking the frames before the close, and
// returns the close.
func (tc *testSession) wantClose(expectation string, path int, code uint64) closeFrame {
	tc.t.Helper()
	for {
		f, _ := tc.readFrame(path)
		switch f := f.(type) {
		case nil:
			tc.t.Fatalf("%s:\npath %d is idle\nwant a close with code %d", expectation, path, code)
		case closeFrame:
			if f.Code != code {
				tc.t.Fatalf("%s:\npath %d: got %v\nwant a close with code %d", expectation, path, f, code)
			}
			return f
		}
	}
}

// ackAll acknowledges, as the peer on path, every segment it has seen so
// far (on any path), granting a 1 MiB window: a receiver that keeps up.
func (tc *testSession) ackAll(path int) {
	tc.t.Helper()
	tc.mu.Lock()
	cum := tc.nextSeg
	tc.mu.Unlock()
	tc.writeFrames(path, ackFrame{Cum: cum})
}

// collect lets virtual time run for d and takes every frame that arrived
// meanwhile, per path.
func (tc *testSession) collect(d time.Duration) [][]frame {
	tc.advance(d)
	out := make([][]frame, len(tc.paths))
	for p := range tc.paths {
		out[p] = tc.drain(p)
	}
	return out
}

// without returns fs less the segment headers and Acks: the stream and
// control frames, for tests that do not count segments.
func without(fs []frame) []frame {
	var out []frame
	for _, f := range fs {
		switch f.(type) {
		case segmentFrame, ackFrame:
			continue
		}
		out = append(out, f)
	}
	return out
}
