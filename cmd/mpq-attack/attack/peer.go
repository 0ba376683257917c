// Package attack is the hostile-peer side of mpq-attack and of cli's load
// test: raw multipath-QUIC session peers built from quic-go and pkg/wire
// that complete the session handshake and then send what a hostile client
// would (issue 10). It speaks protocol version 4 (whole frames per
// segment, pkg/wire/frame.go); to measure a server of version 3 or older
// before a fix, build mpq-attack from that tree.
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

	seq, off uint64            // next in-order segment
	offs     map[uint64]uint64 // each stream's next offset (Data)
	credit   uint64            // the server's connection credit, stream bytes (its Accept's Params.MaxData; 0 before version 5: none known)

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

// grantData grants the server the largest connection credit in params
// (wire.Params.MaxData, version 5), so that it never waits for credit in
// an Ack from a peer that reads everything at once.
func grantData(params any) { setParam(params, "MaxData", quicvarint.Max) }

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
	grantData(&h.Params)
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
	p.credit = acceptParam(a, "MaxData")
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

// maxFrameData is the most stream data the peer puts in one STREAM frame,
// bytes: a frame and its header fit a 1,200-byte segment.
const maxFrameData = 1200 - 32

// Data returns the STREAM frames that carry data on stream id from the
// stream's next offset (protocol version 4, pkg/wire/frame.go), and moves
// the offset past it: send them, in any order.
func (p *Peer) Data(id uint64, data []byte) [][]byte {
	if p.offs == nil {
		p.offs = map[uint64]uint64{}
	}
	var fs [][]byte
	for len(data) > 0 {
		n := min(len(data), maxFrameData)
		fs = append(fs, append(wire.AppendStreamFrameHeader(nil, id, p.offs[id], n, false), data[:n]...))
		p.offs[id] += uint64(n)
		data = data[n:]
	}
	return fs
}

// Fin returns the STREAM frame that ends stream id at its next offset.
func (p *Peer) Fin(id uint64) []byte {
	return wire.AppendStreamFrameHeader(nil, id, p.offs[id], 0, true)
}

// Reset returns RESET_STREAM for stream id with code; its final size is
// the stream's next offset.
func (p *Peer) Reset(id, code uint64) []byte {
	return wire.AppendResetStream(nil, id, code, p.offs[id])
}

// Send sends whole frames as the next in-order segments, as many as fit in
// 1,200 bytes each (a larger frame goes alone).
func (p *Peer) Send(frames ...[]byte) error {
	var seg []byte
	for i, f := range frames {
		seg = append(seg, f...)
		if i+1 == len(frames) || len(seg)+len(frames[i+1]) > 1200 {
			if err := p.Raw(seg); err != nil {
				return err
			}
			seg = seg[:0]
		}
	}
	return nil
}

// Raw sends b, whatever it holds, as the next in-order segment.
func (p *Peer) Raw(b []byte) error {
	if err := p.Segment(p.seq, p.off, b); err != nil {
		return err
	}
	p.seq++
	p.off += uint64(len(b))
	return nil
}

// SendWithin sends frames as Send does, but as a genuine sender would:
// never past the server's connection credit (RFC 9000 §4.1; protocol
// version 5), the stream bytes its Accept granted until one of its Acks
// grants more (wire.Ack.MaxData). The frames' stream data must have been
// made by Data, which counts it in each stream's offset. If the streams'
// offsets add up to more than the credit, it waits, up to ctx, for an Ack
// with room for all of them (awaitCredit, which drops the other datagrams
// it reads), and returns that wait's error with nothing sent. An attack on
// something else (big headers, say) must not also overflow the window: the
// server rightly ends such a session for a flow-control violation
// (TestH3Violations failed 3 of 600 runs under load that way, in version
// 4).
func (p *Peer) SendWithin(ctx context.Context, frames ...[]byte) error {
	var sent uint64
	for _, off := range p.offs {
		sent += off
	}
	if p.credit > 0 && sent > p.credit {
		c, err := p.awaitCredit(ctx, sent)
		if err != nil {
			return err
		}
		p.credit = c
	}
	return p.Send(frames...)
}

// awaitCredit reads the server's Acks until one grants a connection credit
// of at least least stream bytes, and returns it.
func (p *Peer) awaitCredit(ctx context.Context, least uint64) (uint64, error) {
	var a wire.Ack
	for {
		b, err := p.Conn.ReceiveDatagram(ctx)
		if err != nil {
			return 0, err
		}
		if len(b) > 0 && b[0] == wire.TypeAck && wire.ParseAck(b, &a) == nil && a.MaxData >= least {
			return a.MaxData, nil
		}
	}
}

// Request sends an HTTP/3 GET of /NAME for a "FILE NAME" line (any other
// line as it is) on client stream 0, without ending the stream, and
// grants the server the largest window on it (MAX_STREAM_DATA).
func (p *Peer) Request(line string) error {
	req := []byte(line)
	if name, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "FILE "); ok {
		req = h3Get(name)
	}
	return p.Send(append(p.Data(0, req), wire.AppendMaxStreamData(nil, 0, quicvarint.Max))...)
}

// Discard reads and drops the server's data stream until it ends, so that
// QUIC's own flow control never holds the server back.
func (p *Peer) Discard() { io.Copy(io.Discard, p.In) }

// AckReq asks the server for an Ack.
func (p *Peer) AckReq() error { return p.Conn.SendDatagram([]byte{wire.TypeAckReq}) }

// Ack sends a connection-level Ack.
func (p *Peer) Ack(a *wire.Ack) error { return p.Conn.SendDatagram(wire.AppendAck(nil, a)) }

// ackEvery sends the Ack that next returns at once and then every period,
// counting each as a frame, until ctx or the session ends.
func (p *Peer) ackEvery(ctx context.Context, c *counters, period time.Duration, next func() *wire.Ack) error {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		if err := p.Ack(next()); err != nil {
			return err
		}
		c.frames.Add(1)
		select {
		case <-ctx.Done():
			return nil
		case <-p.Conn.Context().Done():
			return nil
		case <-t.C:
		}
	}
}

// Consume reads the server's segments (one path: they come in order) and
// acknowledges them like a genuine receiver, every 20 ms, until the data
// stream ends (its Hello granted the server all the connection credit it
// may want, grantData). It keeps a
// session busy, neither idle nor with its acknowledgements stalled.
func (p *Peer) Consume() { p.consume(nil) }

// consume is Consume; each in-order segment's payload (the server's
// records) goes to onPayload, if not nil, which stops the reading with an
// error.
func (p *Peer) consume(onPayload func([]byte) error) {
	var mu sync.Mutex
	var next uint64
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
			a := wire.Ack{Cum: next}
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
		}
		mu.Unlock()
		if inOrder && onPayload != nil && onPayload(seg.Payload) != nil {
			return
		}
	}
}
