package session

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/mpqsched/mpqsched/pkg/wire"
	"github.com/mpqsched/mpqsched/sched"
)

// Listener accepts sessions on one UDP endpoint.
//
// Bounds (Config): at most MaxSessions sessions, MaxSessionsPerIP of them
// from one source IP address, and MaxHandshakes session handshakes at a
// time, each within HandshakeTimeout; under a burst of new connections
// (AddressValidation) quic-go answers with a Retry, so a spoofed source
// costs no connection state. Each limit reached is logged at most once per
// limitLogInterval, with a count of what happened meanwhile. Its sessions'
// streams buffer at most MaxListenerSendBuffered bytes for sending together
// (each session at most MaxSendBuffered).
type Listener struct {
	cfg        Config
	tlsConf    *tls.Config
	tr         *quic.Transport
	ln         *quic.EarlyListener // early: a join may arrive as 0-RTT data (join_early.go)
	acceptQ    chan *Session
	plainQ     chan *quic.Conn // connections that chose one of Config.PlainALPNs (listener_plain.go)
	done       chan struct{}
	wg         sync.WaitGroup
	mu         sync.Mutex
	sessions   map[[wire.SessionIDLen]byte]*Session
	perIP      map[string]int // sessions by source IP address
	shaking    int            // session handshakes under way
	rejected   int            // joins refused
	refused    int            // connections refused by a limit
	plain      int            // plain connections open (listener_plain.go)
	refusedTLS int            // handshakes refused for want of a common ALPN
	alpnLog    struct {       // rate limit of their log lines
		last time.Time
		n    int
	}
	newConns rateCounter // new connections per second, for AddressValidation
	limits   limitLog
	log      logQueue    // Config.Logf, called outside l.mu (logq.go)
	budget   *sendBudget // send-buffer room all sessions share (Config.MaxListenerSendBuffered)
	sendErrs *sendErrs   // sends that failed for want of a route, by client address (senderr.go)
}

// Listen accepts sessions on pc, which the Listener owns from then on.
func Listen(pc net.PacketConn, tlsConf *tls.Config, cfg *Config) (*Listener, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	// Check the name now, and ask the scheduler whether it needs per-ACK
	// signals (signals.go): a factory is called once more here for that.
	sch, err := c.newScheduler()
	if err != nil {
		return nil, err
	}
	traced, _ := tracerNeeded(&c, sch)
	if err := checkPlainALPNs(c.PlainALPNs); err != nil {
		return nil, err
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	l := &Listener{
		cfg:      c,
		acceptQ:  make(chan *Session, 64),
		plainQ:   make(chan *quic.Conn, plainQueueLen),
		done:     make(chan struct{}),
		sessions: make(map[[wire.SessionIDLen]byte]*Session),
		perIP:    make(map[string]int),
		budget:   newSendBudget(c.MaxListenerSendBuffered),
		sendErrs: &sendErrs{},
	}
	l.tlsConf = l.listenTLS(tlsConf, c.PlainALPNs)
	l.log.logf = c.Logf
	l.limits.logf = l.log.printf // event runs under l.mu
	l.tr = &quic.Transport{
		// A send through a vanished interface, address or route
		// (ENETUNREACH, EADDRNOTAVAIL, ...) is an outage of that path, as
		// on the client (senderr.go), not the end of its connection.
		Conn:                tolerateUnreachableNoting(pc, l.sendErrs),
		VerifySourceAddress: l.verifySource,
	}
	if traced {
		l.tr.ConnContext = func(ctx context.Context, _ *quic.ClientInfo) (context.Context, error) {
			return context.WithValue(ctx, tracerKey{}, &tracer{}), nil
		}
	}
	q := c.quicConfig()
	if c.QUIC == nil {
		// A server sends no keep-alives of its own: its clients' keep the
		// connections (and their NAT bindings) open, and an idle server of
		// thousands of sessions stays asleep.
		q.KeepAlivePeriod = 0
	}
	if traced {
		q.Tracer = tracerFor(qlogOpener(c.QlogDir, c.Logf))
	}
	q.Allow0RTT = true // session tickets allow 0-RTT joins (join_early.go)
	if l.ln, err = l.tr.ListenEarly(l.tlsConf, q); err != nil {
		closeTransport(l.tr)
		return nil, err
	}
	l.wg.Add(2)
	go func() { defer l.wg.Done(); l.acceptLoop() }()
	go func() { defer l.wg.Done(); l.answerPathProbes(context.Background()) }() // ends when Close closes l.tr
	return l, nil
}

// Addr is the listening address.
func (l *Listener) Addr() net.Addr { return l.ln.Addr() }

// Accept waits for a new session. On a Listener with Config.PlainALPNs,
// AcceptAny also yields the plain connections (listener_plain.go).
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
		s.abort(ErrClosed)
	}
	err := closeTransport(l.tr)
	l.wg.Wait()
	l.log.wait()
	return err
}

func (l *Listener) acceptLoop() {
	for {
		conn, err := l.ln.Accept(context.Background())
		if err != nil {
			return
		}
		if conn.ConnectionState().TLS.NegotiatedProtocol != ALPN {
			l.acceptPlain(conn) // listener_plain.go
			continue
		}
		l.mu.Lock()
		busy := l.shaking >= l.cfg.MaxHandshakes
		if !busy {
			l.shaking++
		}
		l.mu.Unlock()
		if busy {
			l.refuse(conn, "handshakes", fmt.Sprintf("%d session handshakes under way", l.cfg.MaxHandshakes))
			continue
		}
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			l.handshake(conn)
			l.mu.Lock()
			l.shaking--
			l.mu.Unlock()
		}()
	}
}

// refuse closes conn because a limit was reached, and logs it (rate-limited).
func (l *Listener) refuse(conn *quic.Conn, kind, why string) {
	l.mu.Lock()
	l.refused++
	l.limits.event(time.Now(), kind, why)
	l.mu.Unlock()
	closeConn(conn, codeRefused, "refused: "+why)
}

// Refused counts the connections the listener refused because a limit was
// reached (sessions, sessions per IP, handshakes).
func (l *Listener) Refused() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.refused
}

// verifySource is quic-go's VerifySourceAddress: whether to answer a new
// connection with a Retry first (see AddressValidation).
func (l *Listener) verifySource(net.Addr) bool {
	switch l.cfg.AddressValidation {
	case ValidateAlways:
		return true
	case ValidateNever:
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.newConns.add(time.Now()) > l.cfg.RetryAbove
}

// sourceIP is the IP address of a connection's peer, as a map key.
func sourceIP(a net.Addr) string {
	if u, ok := a.(*net.UDPAddr); ok {
		return u.IP.String()
	}
	if h, _, err := net.SplitHostPort(a.String()); err == nil {
		return h
	}
	return a.String()
}

// handshake runs the server side of a path's session handshake.
func (l *Listener) handshake(conn *quic.Conn) {
	ctx, cancel := context.WithTimeout(conn.Context(), l.cfg.HandshakeTimeout)
	defer cancel()
	in, err := conn.AcceptUniStream(ctx)
	if err != nil {
		closeConn(conn, codeProtocol, "no session handshake")
		return
	}
	r := bufio.NewReaderSize(in, handshakeReadBuf)
	f, err := readHandshakeWithin(ctx, in, r)
	if err != nil {
		closeConn(conn, codeProtocol, "bad session handshake")
		return
	}
	// Only an early Join is handled before the connection's handshake
	// completes (join_early.go); a Hello or a bound Join needs its exporter.
	j, _ := f.(*wire.Join)
	early := j != nil && j.Early
	if !early && !handshakeDone(ctx, conn) {
		closeConn(conn, codeProtocol, "handshake timeout")
		return
	}
	t, _ := conn.Context().Value(tracerKey{}).(*tracer) // nil: the Listener keeps no tracers (signals.go)
	var s *Session
	switch f := f.(type) {
	case wire.Hello:
		if s, err = newSession(l.cfg, false, l.tlsConf); err != nil {
			closeConn(conn, codeInternal, err.Error())
			return
		}
		s.streams.peerParams(f.Params)
		s.streams.budget = l.budget
		if _, err := rand.Read(s.id[:]); err != nil {
			closeConn(conn, codeInternal, err.Error())
			return
		}
		if s.joinKey, err = exportJoinKey(conn); err != nil {
			closeConn(conn, codeInternal, err.Error())
			return
		}
		// Register before the Accept goes out: the client dials its joins
		// as soon as it reads the Accept, and a join that overtook the
		// registration would be rejected as unknown.
		ip := sourceIP(conn.RemoteAddr())
		l.mu.Lock()
		var why string
		switch {
		case len(l.sessions) >= l.cfg.MaxSessions:
			why = fmt.Sprintf("%d sessions", l.cfg.MaxSessions)
		case l.perIP[ip] >= l.cfg.MaxSessionsPerIP:
			why = fmt.Sprintf("%d sessions from %s", l.cfg.MaxSessionsPerIP, ip)
		default:
			l.sessions[s.id] = s
			l.perIP[ip]++
		}
		l.mu.Unlock()
		if why != "" {
			l.refuse(conn, "sessions", why)
			return
		}
		s.srcIP = ip
	case *wire.Join:
		var binding [32]byte
		if !early {
			if binding, err = exportBinding(conn); err != nil {
				closeConn(conn, codeInternal, err.Error())
				return
			}
		}
		l.mu.Lock()
		if early {
			s = l.verifyEarlyJoinLocked(f)
		} else if s = l.sessions[f.SessionID]; s != nil && !verifyJoin(s.joinKey, f, binding) {
			s = nil
		}
		ok := s != nil
		if !ok {
			l.rejected++
		}
		l.mu.Unlock()
		if !ok {
			l.log.printf("session: rejected a join from %v", conn.RemoteAddr())
			closeConn(conn, codeJoinRejected, "join rejected")
			return
		}
	default:
		closeConn(conn, codeProtocol, "unexpected handshake frame")
		return
	}
	s.mu.Lock()
	full := s.npaths >= s.cfg.MaxPaths
	id := s.nextPathID
	if !full {
		s.nextPathID++
	}
	s.mu.Unlock()
	_, first := f.(wire.Hello)
	if full && !first {
		// A limit refuses the path, as the session and handshake limits
		// refuse theirs: codeRefused, which the client reads as ErrRefused
		// (issue 29: it was closed as "internal" after its Accept). An
		// early Join arrives before the handshake completes, and a close
		// sent then reaches the client as a bare APPLICATION_ERROR without
		// code or reason (RFC 9000 §10.2.3), so wait for it (bounded by ctx).
		handshakeDone(ctx, conn)
		l.refuse(conn, "paths", fmt.Sprintf("%d paths in the session", s.cfg.MaxPaths))
		return
	}
	abort := func(err error) {
		if errors.Is(err, ErrTooManyPaths) { // a join that raced another past the check above
			l.refuse(conn, "paths", err.Error())
			return
		}
		closeConn(conn, codeInternal, err.Error())
		if first {
			l.forget(s)
			s.abort(err) // ends any join that attached meanwhile
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
	p := &path{id: sched.PathID(id), conn: conn, out: out, in: r, tr: t, early: early, sendErrs: l.sendErrs}
	if err := s.attach(p); err != nil {
		abort(err)
		return
	}
	if first {
		s.onDone = func() { l.forget(s) } // no goroutine per session to wait for its end
		s.run()
		select {
		case l.acceptQ <- s:
		case <-l.done:
		}
	}
}

// forget unregisters a session that ended.
func (l *Listener) forget(s *Session) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sessions[s.id] != s {
		return
	}
	delete(l.sessions, s.id)
	if l.perIP[s.srcIP]--; l.perIP[s.srcIP] <= 0 {
		delete(l.perIP, s.srcIP)
	}
}

// verifyJoin reports whether join carries the MAC of a session keyed by key
// over the connection whose exporter binding is given.
func verifyJoin(key [32]byte, join *wire.Join, binding [32]byte) bool {
	m := joinMAC(key[:], join.SessionID, join.Nonce, binding)
	return hmac.Equal(join.MAC[:], m[:])
}
