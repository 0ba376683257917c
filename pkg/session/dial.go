package session

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/qlogwriter"

	"github.com/mpqsched/mpqsched/pkg/wire"
	"github.com/mpqsched/mpqsched/sched"
)

// TLS exporter labels (RFC 5705): the join key, from the session's first
// path, and the binding of a join to the connection that carries it.
const (
	exporterLabel = "EXPORTER-mpqsched-join"
	bindingLabel  = "EXPORTER-mpqsched-join-binding"
)

// joinMAC is HMAC-SHA256(key, "mpqsched join" ‖ session ID ‖ nonce ‖
// binding), where binding is the joining connection's own TLS exporter
// value: a join replayed byte for byte on another connection fails.
func joinMAC(key []byte, id [wire.SessionIDLen]byte, nonce [wire.NonceLen]byte, binding [32]byte) [wire.MACLen]byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("mpqsched join"))
	m.Write(id[:])
	m.Write(nonce[:])
	m.Write(binding[:])
	var out [wire.MACLen]byte
	copy(out[:], m.Sum(nil))
	return out
}

func exportJoinKey(c *quic.Conn) ([32]byte, error) { return exportTLS(c, exporterLabel) }

// exportBinding is the value that binds a join to connection c.
func exportBinding(c *quic.Conn) ([32]byte, error) { return exportTLS(c, bindingLabel) }

func exportTLS(c *quic.Conn, label string) ([32]byte, error) {
	var k [32]byte
	st := c.ConnectionState().TLS
	b, err := st.ExportKeyingMaterial(label, nil, len(k))
	if err != nil {
		return k, fmt.Errorf("session: TLS exporter: %w", err)
	}
	copy(k[:], b)
	return k, nil
}

func withALPN(c *tls.Config) *tls.Config {
	c = c.Clone()
	c.NextProtos = []string{ALPN}
	return c
}

// qlogOpener returns the qlog file factory for dir, or nil.
func qlogOpener(dir string, logf func(string, ...any)) func(bool, qlogwriter.ConnectionID) qlogwriter.Trace {
	if dir == "" {
		return nil
	}
	return func(isClient bool, id qlogwriter.ConnectionID) qlogwriter.Trace {
		role := "server"
		if isClient {
			role = "client"
		}
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s-%s.sqlog", role, id)))
		if err != nil {
			logf("session: qlog: %v", err)
			return nil
		}
		t := qlogwriter.NewConnectionFileSeq(f, isClient, id)
		go t.Run()
		return t
	}
}

// PathOptions describe a path being added.
type PathOptions struct {
	Backup bool // carry data only while no regular path is live (sched.OnlyBackups: a regular path whose window is full still counts); the peer learns it too (see SetPathStatus)
}

// Dial opens a session to the server at remote over the first path, whose
// packets go through pc. It owns pc from then on (closing the session closes
// it, as does a failed Dial). Add more paths with AddPath.
//
// ctx bounds the first path's QUIC handshake and the session handshake that
// follows, not the session's life. tlsConf is cloned and its NextProtos set
// to ALPN ("mpqsched/1"). The session's scheduler (cfg.Scheduler) decides
// where the data this end sends goes: for a download, the server's
// scheduler decides.
func Dial(ctx context.Context, pc net.PacketConn, remote net.Addr, tlsConf *tls.Config, cfg *Config) (*Session, error) {
	return DialPath(ctx, pc, remote, tlsConf, cfg, PathOptions{})
}

// DialPath is Dial with options for the first path (PathOptions.Backup makes
// even the first path a backup, at both ends).
func DialPath(ctx context.Context, pc net.PacketConn, remote net.Addr, tlsConf *tls.Config, cfg *Config, opts PathOptions) (*Session, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s, err := newSession(c, true, withTickets(withALPN(tlsConf)))
	if err != nil {
		return nil, err
	}
	p, err := s.dialPath(ctx, pc, remote, nil, opts)
	if err != nil {
		return nil, err
	}
	if err := s.attach(p); err != nil {
		closeConn(p.conn, codeInternal, err.Error())
		s.disown(p.qtr)
		return nil, err
	}
	s.run()
	return s, nil
}

// AddPath dials the session's server over pc (a different local endpoint)
// and joins the new connection to the session. It owns pc from then on,
// also when it fails. Closing the session cancels a join in progress
// (AddPath then returns ErrClosed) and closes pc.
func (s *Session) AddPath(ctx context.Context, pc net.PacketConn, remote net.Addr, opts PathOptions) (sched.PathID, error) {
	if !s.isClient {
		pc.Close()
		return 0, errors.New("session: only the client adds paths")
	}
	ctx, cancel := s.withLife(ctx)
	defer cancel()
	s.mu.Lock()
	if s.npaths >= s.cfg.MaxPaths {
		s.mu.Unlock()
		pc.Close()
		return 0, ErrTooManyPaths
	}
	s.mu.Unlock()
	var j wire.Join
	j.SessionID = s.id
	if _, err := rand.Read(j.Nonce[:]); err != nil {
		pc.Close()
		return 0, err
	}
	p, err := s.dialPath(ctx, pc, remote, &j, opts)
	if err != nil {
		if context.Cause(ctx) == ErrClosed {
			err = ErrClosed
		}
		return 0, err
	}
	if err := s.attach(p); err != nil {
		// The server may have attached it: remove it there as one path.
		closeConn(p.conn, codePathRemoved, err.Error())
		s.disown(p.qtr)
		return 0, err
	}
	return p.id, nil
}

// Retries of a path dial that the server refused (quic-go refuses new
// connections while its accept queue is full, e.g. in a burst of joins).
const (
	dialAttempts = 4
	dialBackoff  = 50 * time.Millisecond // doubled after each refusal
)

// dialPath dials one path connection and runs the session handshake on it:
// a Hello (join == nil) or a Join, answered by the server's Accept. A
// refusal by a busy server is retried with backoff on the same transport.
// On failure the transport and pc are closed.
func (s *Session) dialPath(ctx context.Context, pc net.PacketConn, remote net.Addr, join *wire.Join, opts PathOptions) (*path, error) {
	errs := &sendErrs{}
	tr := &quic.Transport{Conn: tolerateUnreachableNoting(pc, errs)}
	// Owned from the start (lifecycle.go): a close that begins while the
	// path joins closes it with the others.
	if err := s.own(tr); err != nil {
		closeTransport(tr)
		return nil, err
	}
	backoff := dialBackoff
	for attempt := 1; ; attempt++ {
		p, err := s.dialAttempt(ctx, tr, remote, join, opts)
		if err == nil {
			p.qtr, p.remote, p.sendErrs = tr, remote, errs
			return p, nil
		}
		if errors.Is(err, errPlainChosen) {
			s.handOver(ctx, tr) // the plain connection owns it now (dial_plain.go)
			return nil, err
		}
		var te *quic.TransportError
		if !errors.As(err, &te) || te.ErrorCode != quic.ConnectionRefused || attempt == dialAttempts {
			s.disown(tr)
			return nil, err
		}
		s.logf("session: %v refused a path (attempt %d of %d); retrying in %v", remote, attempt, dialAttempts, backoff)
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			s.disown(tr)
			return nil, ctx.Err()
		}
		backoff *= 2
	}
}

// dialAttempt is one connection and session handshake over tr.
func (s *Session) dialAttempt(ctx context.Context, tr *quic.Transport, remote net.Addr, join *wire.Join, opts PathOptions) (*path, error) {
	if join != nil {
		return s.dialJoin(ctx, tr, remote, join, opts) // join_early.go
	}
	q, t := s.tracedQUICConfig()
	offer, _ := ctx.Value(plainOfferKey{}).(*plainOffer) // dial_plain.go
	conn, err := tr.Dial(context.WithValue(ctx, tracerKey{}, t), remote, offer.tls(s.tlsConf), q)
	if err != nil {
		return nil, fmt.Errorf("session: dial %v: %w", remote, err)
	}
	if offer.chose(conn) {
		return nil, errPlainChosen
	}
	fail := func(err error) (*path, error) {
		closeConn(conn, codeInternal, err.Error())
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.HandshakeTimeout)
	defer cancel()
	out, err := conn.OpenUniStream()
	if err != nil {
		return fail(err)
	}
	s.mu.Lock()
	var f any = wire.Hello{Params: s.streams.params()}
	s.mu.Unlock()
	if join != nil {
		b, err := exportBinding(conn)
		if err != nil {
			return fail(err)
		}
		join.MAC = joinMAC(s.joinKey[:], join.SessionID, join.Nonce, b)
		f = join
	}
	if _, err := out.Write(wire.AppendHandshake(nil, f)); err != nil {
		return fail(err)
	}
	in, err := conn.AcceptUniStream(ctx)
	if err != nil {
		return fail(joinHandshakeErr(err))
	}
	r := bufio.NewReaderSize(in, handshakeReadBuf)
	type res struct {
		f   any
		err error
	}
	ch := make(chan res, 1)
	go func() { f, err := wire.ReadHandshake(r); ch <- res{f, err} }()
	var got res
	select {
	case got = <-ch:
	case <-ctx.Done():
		closeConn(conn, codeInternal, "handshake timeout")
		<-ch
		return nil, ctx.Err()
	}
	if got.err != nil {
		return fail(joinHandshakeErr(got.err))
	}
	acc, ok := got.f.(*wire.Accept)
	if !ok {
		return fail(fmt.Errorf("%w: expected Accept, got %T", ErrProtocol, got.f))
	}
	if join == nil {
		s.id = acc.SessionID
		if s.joinKey, err = exportJoinKey(conn); err != nil {
			return fail(err)
		}
		s.mu.Lock()
		s.streams.peerParams(acc.Params)
		s.mu.Unlock()
	} else if acc.SessionID != s.id {
		return fail(fmt.Errorf("%w: Accept for another session", ErrProtocol))
	}
	return &path{id: sched.PathID(acc.PathID), conn: conn, out: out, in: r, tr: t, backup: opts.Backup}, nil
}

// tracedQUICConfig is a path connection's quic-go config, with the tracer
// that goes in its dial context if the session keeps tracers (nil if not:
// signals.go).
func (s *Session) tracedQUICConfig() (*quic.Config, *tracer) {
	q := s.cfg.quicConfig()
	if !s.traced {
		return q, nil
	}
	q.Tracer = tracerFor(qlogOpener(s.cfg.QlogDir, s.cfg.Logf))
	return q, &tracer{}
}

// closeTransport closes a quic-go Transport and the PacketConn it was given,
// which the session or listener owns (quic-go leaves a given conn open).
func closeTransport(t *quic.Transport) error {
	err := t.Close()
	if cerr := t.Conn.Close(); err == nil {
		err = cerr
	}
	return err
}
