// Package attack is the hostile-peer side of mpq-attack and of cli's load
// test: raw multipath-QUIC session peers built from quic-go and pkg/wire
// that complete the session handshake and then send what a hostile client
// would (issue 10). It uses only pkg/wire's encoders that exist in every
// protocol version so far (wire.Magic[3] is 1, 2 or 3), so the same source
// builds against an older tree to measure the server before a fix.
//
// Every attack is bounded in count and duration, and Dial refuses
// non-loopback addresses: this is a measuring tool for one's own server.
package attack

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/quicvarint"

	"github.com/mpqsched/mpqsched/pkg/wire"
)

// ALPN is the session's TLS application protocol (pkg/session.ALPN).
const ALPN = "mpqsched/1"

// Record types of protocol version 2 that version 1 lacks (pkg/wire).
const (
	recMaxData    byte = 0x04 // MAX_STREAM_DATA: stream id, limit in bytes
	recMaxStreams byte = 0x06 // MAX_STREAMS: count in the id field
)

// Version is the session protocol version this package was built with.
func Version() int { return int(wire.Magic[3]) }

// ErrNotLoopback is returned for a target that is not a loopback address.
var ErrNotLoopback = errors.New("attack: the target must be a loopback address")

// CheckLoopback refuses targets off this host.
func CheckLoopback(a *net.UDPAddr) error {
	if a == nil || !a.IP.IsLoopback() {
		return fmt.Errorf("%w, not %v", ErrNotLoopback, a)
	}
	return nil
}

// Peer is a raw session client on one path: the Hello handshake is done;
// what it sends next is up to the caller.
type Peer struct {
	Conn *quic.Conn
	Out  *quic.SendStream // the path's data stream: Segment frames
	In   *bufio.Reader    // the server's data stream, after its Accept
	ID   [wire.SessionIDLen]byte
	pc   net.PacketConn
	tr   *quic.Transport

	seq, off uint64 // next in-order segment
	limit    uint64 // the server's window limit as its last Ack read by RecordsWithin announced (0: none read)

	h3 *h3State // HTTP/3 attacks: what the server sent (dialH3)
}

// ClientTLS returns conf with the session's ALPN and X25519 only, so that
// a ClientHello fits one Initial packet.
func ClientTLS(conf *tls.Config) *tls.Config {
	c := conf.Clone()
	c.NextProtos = []string{ALPN}
	c.CurvePreferences = []tls.CurveID{tls.X25519}
	return c
}

// Dial0 opens a QUIC connection from a new loopback socket to o.Addr,
// without the session handshake.
func Dial0(ctx context.Context, o Options) (*Peer, error) {
	if err := CheckLoopback(o.Addr); err != nil {
		return nil, err
	}
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: o.Addr.IP})
	if err != nil {
		return nil, err
	}
	p := &Peer{pc: pc, tr: &quic.Transport{Conn: pc}}
	q := &quic.Config{EnableDatagrams: true, MaxIdleTimeout: 30 * time.Second, KeepAlivePeriod: 5 * time.Second,
		InitialStreamReceiveWindow: 16 << 20, MaxStreamReceiveWindow: 64 << 20}
	if p.Conn, err = p.tr.Dial(ctx, o.Addr, ClientTLS(o.TLS), q); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// Dial opens a QUIC connection from a new loopback socket to addr and runs
// the session's Hello handshake. The server's stream credit is raised to
// the most the protocol allows when the version has stream flow control.
func Dial(ctx context.Context, addr *net.UDPAddr, conf *tls.Config) (*Peer, error) {
	p, _, err := dial(ctx, addr, conf, func(h *wire.Hello) { grantUniStreams(&h.Params, 16) })
	return p, err
}

// dial is Dial with the Hello set up by hello; it returns the server's
// Accept too.
func dial(ctx context.Context, addr *net.UDPAddr, conf *tls.Config, hello func(*wire.Hello)) (*Peer, *wire.Accept, error) {
	p, err := Dial0(ctx, Options{Addr: addr, TLS: conf})
	if err != nil {
		return nil, nil, err
	}
	fail := func(err error) (*Peer, *wire.Accept, error) { p.Close(); return nil, nil, err }
	if p.Out, err = p.Conn.OpenUniStream(); err != nil {
		return fail(err)
	}
	h := wire.Hello{}
	hello(&h)
	if _, err := p.Out.Write(wire.AppendHandshake(nil, h)); err != nil {
		return fail(err)
	}
	in, err := p.Conn.AcceptUniStream(ctx)
	if err != nil {
		return fail(err)
	}
	p.In = bufio.NewReaderSize(in, 64<<10)
	f, err := wire.ReadHandshake(p.In)
	if err != nil {
		return fail(err)
	}
	a, ok := f.(*wire.Accept)
	if !ok {
		return fail(fmt.Errorf("attack: server answered %T", f))
	}
	p.ID = a.SessionID
	return p, a, nil
}

// Close closes the connection and its socket.
func (p *Peer) Close() {
	if p.Conn != nil {
		p.Conn.CloseWithError(0, "")
	}
	p.tr.Close()
	p.pc.Close()
}

// Segment sends one segment with the given sequence number and offset.
func (p *Peer) Segment(seq, off uint64, payload []byte) error {
	b := wire.AppendSegmentHeader(make([]byte, 0, 32+len(payload)), seq, off, len(payload))
	_, err := p.Out.Write(append(b, payload...))
	return err
}

// Records sends b, whole records of the connection byte stream, as the
// next in-order segments.
func (p *Peer) Records(b []byte) error {
	for len(b) > 0 {
		n := min(len(b), 1200)
		if err := p.Segment(p.seq, p.off, b[:n]); err != nil {
			return err
		}
		p.seq++
		p.off += uint64(n)
		b = b[n:]
	}
	return nil
}

// initialLimit is the window limit both ends of a session assume before
// the receiver's first Ack (session.InitialWindow), bytes.
const initialLimit = 64 << 10

// RecordsWithin sends b as Records does, but as a genuine sender would:
// never past the server's window limit, which is initialLimit until one of
// its Acks announces more. What does not fit waits, up to ctx, for an Ack
// with room for all of b (awaitLimit, which drops the other datagrams it
// reads); it returns that wait's error with the rest unsent. An attack on
// something else (big headers, say) must not also overflow the window: the
// server rightly ends such a session for a protocol violation, and
// whether it does depended on how fast it read (TestH3Violations failed
// 3 of 600 runs under load with "segment 54 ends at offset 66000 beyond
// the window limit 65536").
func (p *Peer) RecordsWithin(ctx context.Context, b []byte) error {
	limit := max(p.limit, initialLimit)
	if room := limit - min(limit, p.off); uint64(len(b)) > room {
		if err := p.Records(b[:room]); err != nil {
			return err
		}
		b = b[room:]
		l, err := p.awaitLimit(ctx, p.off+uint64(len(b)))
		if err != nil {
			return err
		}
		p.limit = l
	}
	return p.Records(b)
}

// Request sends line on client stream 0 (without ending the stream) and,
// in protocol version 2, grants the server the largest window on it. From
// protocol version 3 on, where the commands serve HTTP/3, a "FILE NAME"
// line goes as an HTTP/3 GET of /NAME instead (http3.go).
func (p *Peer) Request(line string) error {
	req := []byte(line)
	if name, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "FILE "); ok && Version() >= 3 {
		req = h3Get(name)
	}
	b := wire.AppendRecordHeader(nil, wire.RecData, 0, uint64(len(req)))
	b = append(b, req...)
	if Version() >= 2 {
		b = append(b, recMaxData)
		b = quicvarint.Append(b, 0)
		b = quicvarint.Append(b, quicvarint.Max)
	}
	return p.Records(b)
}

// Discard reads and drops the server's data stream until it ends, so that
// QUIC's own flow control never holds the server back.
func (p *Peer) Discard() { io.Copy(io.Discard, p.In) }

// AckReq asks the server for an Ack.
func (p *Peer) AckReq() error { return p.Conn.SendDatagram([]byte{wire.TypeAckReq}) }

// Ack sends a connection-level Ack.
func (p *Peer) Ack(a *wire.Ack) error { return p.Conn.SendDatagram(wire.AppendAck(nil, a)) }

// Consume reads the server's segments (one path: they come in order) and
// acknowledges them like a genuine receiver, every 20 ms, with a 4 MiB
// window beyond what arrived, until the data stream ends. It keeps a
// session busy, neither idle nor with its acknowledgements stalled.
func (p *Peer) Consume() { p.consume(nil) }

// consume is Consume; each in-order segment's payload (the server's
// records) goes to onPayload, if not nil, which stops the reading with an
// error.
func (p *Peer) consume(onPayload func([]byte) error) {
	var mu sync.Mutex
	var next, off uint64
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			mu.Lock()
			a := wire.Ack{Cum: next, Limit: off + 4<<20}
			mu.Unlock()
			if p.Ack(&a) != nil {
				return
			}
		}
	}()
	defer close(done)
	buf := make([]byte, wire.MaxSegmentPayload)
	for {
		seg, err := wire.ReadSegment(p.In, buf)
		if err != nil {
			return
		}
		mu.Lock()
		inOrder := seg.Seq == next
		if inOrder {
			next++
			off = seg.Offset + uint64(len(seg.Payload))
		}
		mu.Unlock()
		if inOrder && onPayload != nil && onPayload(seg.Payload) != nil {
			return
		}
	}
}
