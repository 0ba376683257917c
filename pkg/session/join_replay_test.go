package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/mpqsched/mpqsched/pkg/emu"
	"github.com/mpqsched/mpqsched/pkg/wire"
	"github.com/mpqsched/mpqsched/sched"
)

// flightRecorder is a client socket that records the datagrams it sends
// that begin with an Initial or a 0-RTT packet (RFC 9000 §17.2: a long
// header, the form bit 0x80 set, packet type (first byte >> 4) & 3 = 0 or
// 1): the client's first flight, ClientHello and 0-RTT data. With drop set
// it delivers none of what it sends.
type flightRecorder struct {
	net.PacketConn
	drop bool

	mu     sync.Mutex
	flight [][]byte
}

func (c *flightRecorder) WriteTo(p []byte, addr net.Addr) (int, error) {
	if len(p) > 0 && p[0]&0x80 != 0 && (p[0]>>4)&3 <= 1 {
		c.mu.Lock()
		c.flight = append(c.flight, bytes.Clone(p))
		c.mu.Unlock()
	}
	if c.drop {
		return len(p), nil
	}
	return c.PacketConn.WriteTo(p, addr)
}

// SetReadBuffer and SetWriteBuffer keep quic-go from warning that the
// wrapped socket has no buffers to set.
func (c *flightRecorder) SetReadBuffer(int) error  { return nil }
func (c *flightRecorder) SetWriteBuffer(int) error { return nil }

func (c *flightRecorder) recorded() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.flight
}

// replayer is a replay of a client's first flight from a new address: the
// bytes it sent and the bytes that came back, final once done is closed
// (10 s after the last datagram came back).
type replayer struct {
	sent, back int
	done       chan struct{}
}

// delayed is a path of 5 ms each way.
var delayed = emu.PathSpec{Up: emu.LinkConfig{Delay: 5 * time.Millisecond}, Down: emu.LinkConfig{Delay: 5 * time.Millisecond}}

// replayFlight sends flight to the server from a new address and counts
// what comes back.
func replayFlight(t *testing.T, tb *testbed, flight [][]byte) *replayer {
	t.Helper()
	pc, _, err := tb.topo.AddPath(delayed)
	if err != nil {
		t.Fatal(err)
	}
	r := &replayer{done: make(chan struct{})}
	for _, d := range flight {
		if _, err := pc.WriteTo(d, tb.topo.Server.LocalAddr()); err != nil {
			t.Fatal(err)
		}
		r.sent += len(d)
	}
	go func() {
		defer close(r.done)
		buf := make([]byte, 2048)
		for {
			pc.SetReadDeadline(time.Now().Add(10 * time.Second))
			n, _, err := pc.ReadFrom(buf)
			if err != nil {
				pc.Close()
				return
			}
			r.back += n
		}
	}()
	return r
}

// fetched is the end of a download: the bytes read intact, and when.
type fetched struct {
	n  int
	at time.Time
}

// download starts a download of n bytes (byte i is i%251) from the server
// on a new stream; the returned channel gives the bytes the client read
// intact, once the stream ends.
func download(t *testing.T, tb *testbed, n int) <-chan fetched {
	t.Helper()
	st, err := tb.cli.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Write([]byte("GET\n")); err != nil {
		t.Fatal(err)
	}
	sst, err := tb.srv.AcceptStream(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i % 251)
		}
		sst.Write(b)
		sst.Close()
	}()
	got := make(chan fetched, 1)
	go func() {
		b, _ := io.ReadAll(st)
		k := 0
		for k < len(b) && b[k] == byte(k%251) {
			k++
		}
		got <- fetched{k, time.Now()}
	}()
	return got
}

// A Join sent as 0-RTT data can be replayed (RFC 9001 §9.2: "Endpoints MUST
// implement and use the replay protections described in [TLS13], however
// it is recognized that these protections are imperfect"; issue 19: "with
// replay protection as strong as today's"). Here the first flight of a join
// that attached a path is replayed, byte for byte, from another address
// once the path is gone: the server refuses the Join (its counter was used)
// and the session keeps its paths.
func TestEarlyJoinReplayRefused(t *testing.T) {
	if raceEnabled {
		t.Skip("race builds join after the handshake (raceSafeOpen: a data race inside quic-go v0.65's 0-RTT); the ordinary run tests the 0-RTT join")
	}
	synctest.Test(t, func(t *testing.T) {
		tb := newTestbed(t, 1, nil)
		defer tb.close()
		synctest.Wait() // the first path's session ticket has arrived
		// A path with a delay: the client's first flight (its Initials and
		// 0-RTT packet) is all out before the server answers, so that the
		// replay is that flight.
		pc, _, err := tb.topo.AddPath(delayed)
		if err != nil {
			t.Fatal(err)
		}
		rec := &flightRecorder{PacketConn: pc}
		id, err := tb.cli.AddPath(context.Background(), rec, tb.topo.Server.LocalAddr(), PathOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !pathConn(tb.cli, id).ConnectionState().Used0RTT {
			t.Fatal("the join did not use 0-RTT: nothing to replay")
		}
		if err := tb.cli.RemovePath(id); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Second) // the server has forgotten the connection's IDs
		if n := len(tb.srv.Paths()); n != 1 {
			t.Fatalf("server has %d paths before the replay, want 1", n)
		}
		r := replayFlight(t, tb, rec.recorded())
		<-r.done
		if n := tb.ln.RejectedJoins(); n != 1 {
			t.Errorf("listener rejected %d joins after the replay, want 1", n)
		}
		if n := len(tb.srv.Paths()); n != 1 {
			t.Errorf("server has %d paths after the replay, want 1", n)
		}
		if err := tb.srv.Err(); err != nil {
			t.Errorf("server session ended: %v", err)
		}
	})
}

// The replay of a join's first flight that the server never saw (the
// genuine client's packets are lost) opens a connection whose handshake the
// replayer cannot complete (RFC 8446 §8: "0-RTT data ... is not forward
// secret and is vulnerable to replay"; the handshake that follows needs the
// client's key share). The server may send on it what quic-go's
// anti-amplification limit allows (RFC 9000 §8.1: "an endpoint MUST limit
// the amount of data it sends to the unvalidated address to three times the
// amount of data received from that address"), encrypted for the genuine
// client only; it reads nothing from it, removes it when the handshake
// times out, and the download it was given a part of completes intact.
func TestEarlyJoinNeverCompletes(t *testing.T) {
	if raceEnabled {
		t.Skip("race builds join after the handshake (raceSafeOpen: a data race inside quic-go v0.65's 0-RTT); the ordinary run tests the 0-RTT join")
	}
	synctest.Test(t, func(t *testing.T) {
		tb := newTestbed(t, 1, nil)
		defer tb.close()
		synctest.Wait()
		began := time.Now()
		got := download(t, tb, 4<<20)
		time.Sleep(100 * time.Millisecond)
		pc, _, err := tb.topo.AddPath(emu.PathSpec{})
		if err != nil {
			t.Fatal(err)
		}
		rec := &flightRecorder{PacketConn: pc, drop: true}
		joined := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_, err := tb.cli.AddPath(ctx, rec, tb.topo.Server.LocalAddr(), PathOptions{})
			joined <- err
		}()
		for len(rec.recorded()) == 0 {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(time.Millisecond) // the whole first flight
		r := replayFlight(t, tb, rec.recorded())
		// The replayed Join is accepted: the server sends on the path.
		time.Sleep(50 * time.Millisecond)
		ps := tb.srv.Stats().Paths
		if len(ps) != 2 {
			t.Fatalf("server has %d paths after the replayed join, want 2 (one sending, unconfirmed)", len(ps))
		}
		if ps[1].BytesReceived != 0 {
			t.Errorf("server read %d bytes from a path whose handshake is not complete", ps[1].BytesReceived)
		}
		if err := <-joined; err == nil {
			t.Errorf("the genuine client's join succeeded though none of its packets arrived")
		}
		<-r.done
		// quic-go checks the limit before each packet
		// (sent_packet_handler.go, bytesSent >= 3*bytesReceived), so the
		// last packet may cross it.
		if limit := 3*r.sent + 1500; r.back > limit {
			t.Errorf("server sent %d bytes to the replayer's address, which sent %d: more than 3× and one packet", r.back, r.sent)
		}
		if n := len(tb.srv.Paths()); n != 1 {
			t.Errorf("server has %d paths after the replayed join's handshake timed out, want 1", n)
		}
		select {
		case f := <-got:
			// Without the replay it takes 0.72 s; the replay's stuck
			// segments wait for the session to find the path failed and
			// send them again (0.89 s).
			if el := f.at.Sub(began); el > 1200*time.Millisecond {
				t.Errorf("download took %v beside a replayed join, want ≤ 1.2 s", el)
			}
			if f.n != 4<<20 {
				t.Errorf("client read %d bytes intact, want %d", f.n, 4<<20)
			}
		case <-time.After(time.Minute):
			t.Fatal("download still running after a minute")
		}
		if err := tb.srv.Err(); err != nil {
			t.Errorf("server session ended: %v", err)
		}
		t.Logf("replayed %d bytes, %d came back; rejected joins %d", r.sent, r.back, tb.ln.RejectedJoins())
	})
}

// pathConn is the connection of s's path id, or nil.
func pathConn(s *Session, id sched.PathID) *quic.Conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.slots {
		if p != nil && p.id == id {
			return p.conn
		}
	}
	return nil
}

// joinWindow is an anti-replay window as RFC 4303 §3.4.3 describes: "a
// counter containing the highest Sequence Number value received ... and a
// bit-mask of [the] window", where "if the received packet falls within the
// window and is not a duplicate, or if the packet is to the right of the
// window, then the receiver proceeds"; duplicates and packets "to the left
// of the window" are rejected.
func TestJoinWindow(t *testing.T) {
	steps := []struct {
		n    uint64
		want bool
	}{
		{0, false}, // counters start at 1
		{1, true},
		{1, false}, // a replay
		{3, true},
		{2, true}, // late, within the window
		{2, false},
		{66, true},  // the window now covers 3..66
		{3, false},  // used
		{2, false},  // left of the window
		{4, true},   // unused, within
		{200, true}, // a jump past the whole window
		{137, true},
		{136, false}, // left of the window 137..200
		{200, false},
	}
	var w joinWindow
	for i, s := range steps {
		if got := w.accept(s.n); got != s.want {
			t.Errorf("step %d: accept(%d) = %v, want %v", i, s.n, got, s.want)
		}
	}
}

// As TestJoinReplayRefused (issue 10, item 7: "A byte-for-byte replay of a
// valid join on a new connection is accepted"), for the early Join, whose
// MAC cannot cover the connection: a genuine early Join frame attaches a
// path; the same frame on a second connection, whose handshake completes,
// is refused because its counter was used.
func TestEarlyJoinFrameReplayRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tb := newTestbed(t, 1, nil)
		defer tb.close()
		join := func(frame []byte) error {
			pc, _, err := tb.topo.AddPath(emu.PathSpec{})
			if err != nil {
				t.Fatal(err)
			}
			tr := &quic.Transport{Conn: pc}
			defer tr.Close()
			c, err := tr.Dial(context.Background(), tb.topo.Server.LocalAddr(), withALPN(tb.pair.Client), &quic.Config{EnableDatagrams: true})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, _, _, err = exchangeJoin(ctx, c, frame)
			return err
		}
		j := &wire.Join{SessionID: tb.cli.id}
		if err := tb.cli.earlyJoin(j); err != nil {
			t.Fatal(err)
		}
		frame := wire.AppendHandshake(nil, j)
		if err := join(frame); err != nil {
			t.Fatalf("genuine early join: %v", err)
		}
		if err := join(frame); !errors.Is(err, ErrJoinRejected) {
			t.Fatalf("replayed early join: %v, want ErrJoinRejected", err)
		}
		if n := tb.ln.RejectedJoins(); n != 1 {
			t.Errorf("rejected joins = %d, want 1", n)
		}
	})
}

// When the server refuses 0-RTT (here it cannot decrypt the ticket: the
// client's cache holds another server's), quic-go reports Err0RTTRejected
// and RFC 9001 §4.6.2 applies: "A client that attempts 0-RTT might also
// provide ... the 0-RTT data ... if the server rejects 0-RTT, the client
// [has to] retransmit"; the Join goes again after the handshake and the
// path joins.
func TestEarlyJoinRejectedFallsBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var logs []string
		cfg := &Config{Logf: func(f string, a ...any) {
			mu.Lock()
			logs = append(logs, fmt.Sprintf(f, a...))
			mu.Unlock()
		}}
		tb := newTestbed(t, 1, cfg)
		defer tb.close()
		cache := tb.cli.tlsConf.ClientSessionCache
		// Another server with the same certificate: its ticket replaces
		// the session's in the client's cache.
		topo2, err := emu.NewTopology(2, emu.PathSpec{})
		if err != nil {
			t.Fatal(err)
		}
		defer topo2.Close()
		ln2, err := Listen(topo2.Server, tb.pair.Server, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ln2.Close()
		tc := tb.pair.Client.Clone()
		tc.ClientSessionCache = cache
		c2, err := Dial(context.Background(), topo2.Clients[0], topo2.Server.LocalAddr(), tc, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c2.CloseWithError(0, "")
		synctest.Wait()
		pc, _, err := tb.topo.AddPath(emu.PathSpec{})
		if err != nil {
			t.Fatal(err)
		}
		id, err := tb.cli.AddPath(context.Background(), pc, tb.topo.Server.LocalAddr(), PathOptions{})
		if err != nil {
			t.Fatalf("AddPath after a refused 0-RTT: %v", err)
		}
		if pathConn(tb.cli, id).ConnectionState().Used0RTT {
			t.Errorf("the join used 0-RTT with a ticket of another server")
		}
		synctest.Wait()
		if n := len(tb.srv.Paths()); n != 2 {
			t.Errorf("server has %d paths, want 2", n)
		}
		mu.Lock()
		defer mu.Unlock()
		if !slices.ContainsFunc(logs, func(l string) bool { return strings.Contains(l, "refused 0-RTT") }) {
			t.Errorf("no 0-RTT refusal logged: %q", logs)
		}
	})
}
