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
	"sync"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/qlogwriter"

	"github.com/mpqsched/mpqsched/pkg/wire"
	"github.com/mpqsched/mpqsched/sched"
)

// handshakeTimeout bounds a path's session handshake after QUIC's own: as
// long as quic-go's default idle timeout, since a slow, lossy path in and
// out of outages can back its PTO off past 10 s (edar-setting-v's 0.1-0.5
// Mbit/s, 1-2% loss handoff path took longer than that for one seed in 5).
const handshakeTimeout = 30 * time.Second

// exporterLabel is the TLS exporter label of the join key (RFC 5705).
const exporterLabel = "EXPORTER-mpqsched-join"

// joinMAC is HMAC-SHA256(key, "mpqsched join" ‖ session ID ‖ nonce).
func joinMAC(key []byte, id [wire.SessionIDLen]byte, nonce [wire.NonceLen]byte) [wire.MACLen]byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("mpqsched join"))
	m.Write(id[:])
	m.Write(nonce[:])
	var out [wire.MACLen]byte
	copy(out[:], m.Sum(nil))
	return out
}

func exportJoinKey(c *quic.Conn) ([32]byte, error) {
	var k [32]byte
	st := c.ConnectionState().TLS
	b, err := st.ExportKeyingMaterial(exporterLabel, nil, len(k))
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
	Backup bool // use the path only when no other path can send
}

// Dial opens a session to the server at remote over the first path, whose
// packets go through pc. It owns pc from then on (closing the session closes
// it, as does a failed Dial). Add more paths with
// AddPath.
func Dial(ctx context.Context, pc net.PacketConn, remote net.Addr, tlsConf *tls.Config, cfg *Config) (*Session, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s, err := newSession(c, true, withALPN(tlsConf))
	if err != nil {
		return nil, err
	}
	p, err := s.dialPath(ctx, pc, remote, nil, PathOptions{})
	if err != nil {
		return nil, err
	}
	if err := s.attach(p); err != nil {
		return nil, err
	}
	s.run()
	return s, nil
}

// AddPath dials the session's server over pc (a different local endpoint)
// and joins the new connection to the session. It owns pc from then on.
func (s *Session) AddPath(ctx context.Context, pc net.PacketConn, remote net.Addr, opts PathOptions) (sched.PathID, error) {
	if !s.isClient {
		return 0, errors.New("session: only the client adds paths")
	}
	s.mu.Lock()
	if s.npaths >= s.cfg.MaxPaths {
		s.mu.Unlock()
		return 0, ErrTooManyPaths
	}
	s.mu.Unlock()
	var j wire.Join
	j.SessionID = s.id
	if _, err := rand.Read(j.Nonce[:]); err != nil {
		return 0, err
	}
	j.MAC = joinMAC(s.joinKey[:], j.SessionID, j.Nonce)
	p, err := s.dialPath(ctx, pc, remote, &j, opts)
	if err != nil {
		return 0, err
	}
	if err := s.attach(p); err != nil {
		p.conn.CloseWithError(codeInternal, err.Error())
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
	tr := &quic.Transport{Conn: pc}
	backoff := dialBackoff
	for attempt := 1; ; attempt++ {
		p, err := s.dialAttempt(ctx, tr, remote, join, opts)
		if err == nil {
			s.mu.Lock()
			s.owned = append(s.owned, tr)
			s.mu.Unlock()
			return p, nil
		}
		var te *quic.TransportError
		if !errors.As(err, &te) || te.ErrorCode != quic.ConnectionRefused || attempt == dialAttempts {
			closeTransport(tr)
			return nil, err
		}
		s.cfg.Logf("session: %v refused a path (attempt %d of %d); retrying in %v", remote, attempt, dialAttempts, backoff)
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			closeTransport(tr)
			return nil, ctx.Err()
		}
		backoff *= 2
	}
}

// dialAttempt is one connection and session handshake over tr.
func (s *Session) dialAttempt(ctx context.Context, tr *quic.Transport, remote net.Addr, join *wire.Join, opts PathOptions) (*path, error) {
	t := &tracer{}
	q := s.cfg.quicConfig()
	q.Tracer = tracerFor(qlogOpener(s.cfg.QlogDir, s.cfg.Logf))
	conn, err := tr.Dial(context.WithValue(ctx, tracerKey{}, t), remote, s.tlsConf, q)
	if err != nil {
		return nil, fmt.Errorf("session: dial %v: %w", remote, err)
	}
	fail := func(err error) (*path, error) {
		conn.CloseWithError(codeInternal, err.Error())
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
	defer cancel()
	out, err := conn.OpenUniStream()
	if err != nil {
		return fail(err)
	}
	s.mu.Lock()
	var f any = wire.Hello{Params: s.streams.params()}
	s.mu.Unlock()
	if join != nil {
		f = join
	}
	if _, err := out.Write(wire.AppendHandshake(nil, f)); err != nil {
		return fail(err)
	}
	in, err := conn.AcceptUniStream(ctx)
	if err != nil {
		var ae *quic.ApplicationError
		if errors.As(err, &ae) && ae.ErrorCode == codeJoinRejected {
			return fail(ErrJoinRejected)
		}
		return fail(fmt.Errorf("session: handshake: %w", err))
	}
	r := bufio.NewReaderSize(in, 64<<10)
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
		conn.CloseWithError(codeInternal, "handshake timeout")
		<-ch
		return nil, ctx.Err()
	}
	if got.err != nil {
		return fail(fmt.Errorf("session: handshake: %w", got.err))
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

// Listener accepts sessions on one UDP endpoint.
type Listener struct {
	cfg      Config
	tlsConf  *tls.Config
	tr       *quic.Transport
	ln       *quic.Listener
	acceptQ  chan *Session
	done     chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	sessions map[[wire.SessionIDLen]byte]*Session
	rejected int // joins refused
}

// Listen accepts sessions on pc, which the Listener owns from then on.
func Listen(pc net.PacketConn, tlsConf *tls.Config, cfg *Config) (*Listener, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if c.NewScheduler == nil { // check the name now; a factory is only called per session
		if _, err := c.newScheduler(); err != nil {
			return nil, err
		}
	}
	l := &Listener{
		cfg:      c,
		tlsConf:  withALPN(tlsConf),
		acceptQ:  make(chan *Session, 64),
		done:     make(chan struct{}),
		sessions: make(map[[wire.SessionIDLen]byte]*Session),
	}
	l.tr = &quic.Transport{
		Conn: pc,
		ConnContext: func(ctx context.Context, _ *quic.ClientInfo) (context.Context, error) {
			return context.WithValue(ctx, tracerKey{}, &tracer{}), nil
		},
	}
	q := c.quicConfig()
	q.Tracer = tracerFor(qlogOpener(c.QlogDir, c.Logf))
	if l.ln, err = l.tr.Listen(l.tlsConf, q); err != nil {
		closeTransport(l.tr)
		return nil, err
	}
	l.wg.Add(1)
	go func() { defer l.wg.Done(); l.acceptLoop() }()
	return l, nil
}

// Addr is the listening address.
func (l *Listener) Addr() net.Addr { return l.ln.Addr() }

// Accept waits for a new session.
func (l *Listener) Accept(ctx context.Context) (*Session, error) {
	select {
	case s := <-l.acceptQ:
		return s, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-l.done:
		return nil, ErrClosed
	}
}

// RejectedJoins counts the joins the listener refused.
func (l *Listener) RejectedJoins() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rejected
}

// Close stops accepting, aborts every session it accepted and waits for
// their goroutines.
func (l *Listener) Close() error {
	l.mu.Lock()
	select {
	case <-l.done:
		l.mu.Unlock()
		return nil
	default:
	}
	close(l.done)
	var ss []*Session
	for _, s := range l.sessions {
		ss = append(ss, s)
	}
	l.mu.Unlock()
	l.ln.Close()
	for _, s := range ss {
		s.CloseWithError(ErrClosed)
	}
	err := closeTransport(l.tr)
	l.wg.Wait()
	return err
}

func (l *Listener) acceptLoop() {
	for {
		conn, err := l.ln.Accept(context.Background())
		if err != nil {
			return
		}
		l.wg.Add(1)
		go func() { defer l.wg.Done(); l.handshake(conn) }()
	}
}

// handshake runs the server side of a path's session handshake.
func (l *Listener) handshake(conn *quic.Conn) {
	ctx, cancel := context.WithTimeout(conn.Context(), handshakeTimeout)
	defer cancel()
	in, err := conn.AcceptUniStream(ctx)
	if err != nil {
		conn.CloseWithError(codeProtocol, "no session handshake")
		return
	}
	r := bufio.NewReaderSize(in, 64<<10)
	stop := context.AfterFunc(ctx, func() { in.CancelRead(0) })
	f, err := wire.ReadHandshake(r)
	stop()
	if err != nil {
		conn.CloseWithError(codeProtocol, "bad session handshake")
		return
	}
	t, _ := conn.Context().Value(tracerKey{}).(*tracer)
	if t == nil {
		t = &tracer{}
	}
	var s *Session
	switch f := f.(type) {
	case wire.Hello:
		if s, err = newSession(l.cfg, false, l.tlsConf); err != nil {
			conn.CloseWithError(codeInternal, err.Error())
			return
		}
		s.streams.peerParams(f.Params)
		if _, err := rand.Read(s.id[:]); err != nil {
			conn.CloseWithError(codeInternal, err.Error())
			return
		}
		if s.joinKey, err = exportJoinKey(conn); err != nil {
			conn.CloseWithError(codeInternal, err.Error())
			return
		}
		// Register before the Accept goes out: the client dials its joins
		// as soon as it reads the Accept, and a join that overtook the
		// registration would be rejected as unknown.
		l.mu.Lock()
		l.sessions[s.id] = s
		l.mu.Unlock()
	case *wire.Join:
		l.mu.Lock()
		s = l.sessions[f.SessionID]
		ok := s != nil && hmac.Equal(f.MAC[:], func() []byte { m := joinMAC(s.joinKey[:], f.SessionID, f.Nonce); return m[:] }())
		if !ok {
			l.rejected++
		}
		l.mu.Unlock()
		if !ok {
			l.cfg.Logf("session: rejected a join from %v", conn.RemoteAddr())
			conn.CloseWithError(codeJoinRejected, "join rejected")
			return
		}
	default:
		conn.CloseWithError(codeProtocol, "unexpected handshake frame")
		return
	}
	s.mu.Lock()
	id := s.nextPathID
	s.nextPathID++
	s.mu.Unlock()
	_, first := f.(wire.Hello)
	abort := func(err error) {
		conn.CloseWithError(codeInternal, err.Error())
		if first {
			l.mu.Lock()
			delete(l.sessions, s.id)
			l.mu.Unlock()
			s.CloseWithError(err) // ends any join that attached meanwhile
		}
	}
	out, err := conn.OpenUniStream()
	if err == nil {
		_, err = out.Write(wire.AppendHandshake(nil, &wire.Accept{SessionID: s.id, PathID: id, Params: s.streams.params()}))
	}
	if err != nil {
		abort(err)
		return
	}
	p := &path{id: sched.PathID(id), conn: conn, out: out, in: r, tr: t}
	if err := s.attach(p); err != nil {
		abort(err)
		return
	}
	if first {
		s.run()
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			select {
			case <-s.Done():
			case <-l.done:
				return
			}
			l.mu.Lock()
			delete(l.sessions, s.id)
			l.mu.Unlock()
		}()
		select {
		case l.acceptQ <- s:
		case <-l.done:
		}
	}
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
