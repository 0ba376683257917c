package session

// Joining a path in one round trip (issue 19, "Joins in one round trip").
//
// The client resumes the TLS session of an earlier path of the session (the
// client's tls.Config carries a ClientSessionCache shared by all its paths,
// and the listener issues tickets that allow 0-RTT) and sends an early Join
// (wire.TypeJoinEarly) as 0-RTT data in its first flight. The server reads
// it as soon as the client's first flight arrives, half a round trip in,
// and answers with the Accept and the first segments as 0.5-RTT data: the
// client has them one round trip after AddPath. Without a ticket, or when
// the server refuses 0-RTT, the same Join goes as 1-RTT data after the
// handshake (two round trips, as before).
//
// Timing, for a path of round-trip time R (TestJoinOneRoundTrip): the
// server reads the Join at R/2 and its first segments reach the client at
// R. Its own side of the handshake completes only at 3R/2, when the
// client's Finished arrives, which is why it sends before then; waiting for
// it would make the join take 2R, as before. The client still waits for the
// Accept before it attaches the path: it arrives with the server's first
// flight at R, with the path's ID (the server assigns path IDs, so they
// stay unique whatever the order in which joins arrive), and segments the
// client sent earlier, as 0-RTT data, would be read no sooner than 3R/2,
// the moment its segments sent at R arrive.
//
// Security. 0-RTT data can be replayed, and an early Join cannot be bound to
// the connection that carries it (the TLS exporter that binds a 1-RTT Join
// exists only once the handshake is done). Its replay protection is this:
//
//   - Its MAC (earlyJoinMAC) is keyed by the session's join key, as a Join's:
//     only an endpoint of the session can make one.
//   - Its nonce begins with a per-session counter, and the server keeps, per
//     session, a window of the counters it accepted (joinWindow, 64 bits): a
//     Join is accepted at most once, and one older than the window never. A
//     replay of a Join that attached a path (on any connection, at any time)
//     is refused.
//   - A replay of the client's first flight opens a connection whose
//     handshake nobody can complete: completing it needs the key share the
//     genuine client kept. Until the server's side of the handshake is
//     complete, it reads nothing from the path (no segment, Ack or report:
//     attach starts the path's readers only then); the data it sends there
//     is encrypted with keys only the genuine client can derive, and quic-go
//     sends at most three times the bytes it received from an unvalidated
//     address. If the handshake does not complete within HandshakeTimeout
//     the path is removed and what it carried is sent again on the others.
//
// So a replayed Join never makes a path that the session reads from and
// never attaches twice; what a replayer that races the genuine first flight
// can do (take the Join's counter first, so that the genuine Join is
// refused, and waste one amplification budget of the server's sending) an
// on-path attacker can do by dropping the genuine packets.

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/mpqsched/mpqsched/pkg/wire"
	"github.com/mpqsched/mpqsched/sched"
)

// ticketCacheSize bounds the client's TLS session cache, entries (one per
// server name; a session has one server).
const ticketCacheSize = 8

// withTickets returns c with a ClientSessionCache, so that the session's
// later paths resume the first path's TLS session and may send 0-RTT data.
// c is a clone the session owns.
func withTickets(c *tls.Config) *tls.Config {
	if c.ClientSessionCache == nil {
		c.ClientSessionCache = tls.NewLRUClientSessionCache(ticketCacheSize)
	}
	return c
}

// earlyJoinMAC is HMAC-SHA256(key, "mpqsched early join" ‖ session ID ‖
// nonce): an early Join is not bound to its connection (see the file
// comment for what protects it instead).
func earlyJoinMAC(key []byte, id [wire.SessionIDLen]byte, nonce [wire.NonceLen]byte) [wire.MACLen]byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("mpqsched early join"))
	m.Write(id[:])
	m.Write(nonce[:])
	var out [wire.MACLen]byte
	copy(out[:], m.Sum(nil))
	return out
}

// earlyJoinCounter is the counter an early Join's nonce begins with
// (big-endian, 8 bytes); the other 8 bytes are random.
func earlyJoinCounter(nonce [wire.NonceLen]byte) uint64 {
	return binary.BigEndian.Uint64(nonce[:8])
}

// joinWindow is the server's record of the early-Join counters a session
// accepted: the highest one and a bitmap of the 64 below and including it,
// as IPsec's anti-replay window (RFC 4303 §3.4.3). Guarded by
// Listener.mu. Its size is fixed: 16 bytes per session.
type joinWindow struct {
	top  uint64 // highest counter accepted; 0: none (counters start at 1)
	seen uint64 // bit i: counter top−i was accepted
}

// accept reports whether counter n is fresh and marks it used. Counter 0,
// and any counter 64 or more below the highest accepted, are refused.
func (w *joinWindow) accept(n uint64) bool {
	switch {
	case n == 0:
		return false
	case n > w.top:
		if d := n - w.top; d >= 64 {
			w.seen = 0
		} else {
			w.seen <<= d
		}
		w.top = n
		w.seen |= 1
		return true
	case w.top-n >= 64:
		return false
	}
	bit := uint64(1) << (w.top - n)
	if w.seen&bit != 0 {
		return false
	}
	w.seen |= bit
	return true
}

// earlyJoin fills join as an early Join: the next counter of the session,
// random bytes, and the MAC.
func (s *Session) earlyJoin(join *wire.Join) error {
	s.mu.Lock()
	s.joinSeq++
	n := s.joinSeq
	s.mu.Unlock()
	binary.BigEndian.PutUint64(join.Nonce[:8], n)
	if _, err := rand.Read(join.Nonce[8:]); err != nil {
		return err
	}
	join.Early = true
	join.MAC = earlyJoinMAC(s.joinKey[:], join.SessionID, join.Nonce)
	return nil
}

// dialJoin is dialAttempt for a join: one connection over tr, dialled with
// 0-RTT when the TLS session cache holds a ticket, carrying an early Join,
// and the server's Accept. If the server refuses 0-RTT, the Join is sent
// again once the handshake is complete.
func (s *Session) dialJoin(ctx context.Context, tr *quic.Transport, remote net.Addr, join *wire.Join, opts PathOptions) (*path, error) {
	if err := s.earlyJoin(join); err != nil {
		return nil, err
	}
	q, t := s.tracedQUICConfig()
	ctx, cancel := context.WithTimeout(ctx, s.cfg.HandshakeTimeout)
	defer cancel()
	conn, err := tr.DialEarly(context.WithValue(ctx, tracerKey{}, t), remote, s.tlsConf, q)
	if err != nil {
		return nil, fmt.Errorf("session: dial %v: %w", remote, err)
	}
	fail := func(err error) (*path, error) {
		closeConn(conn, codeInternal, err.Error())
		return nil, err
	}
	frame := wire.AppendHandshake(nil, join)
	out, acc, r, err := exchangeJoin(ctx, conn, frame)
	if errors.Is(err, quic.Err0RTTRejected) {
		// The server never read the 0-RTT Join: the counter is still
		// unused. Send it again in 1-RTT.
		s.cfg.Logf("session: %v refused 0-RTT; joining after the handshake", remote)
		if conn, err = conn.NextConnection(ctx); err != nil {
			return nil, fmt.Errorf("session: handshake: %w", err)
		}
		out, acc, r, err = exchangeJoin(ctx, conn, frame)
	}
	if err != nil {
		return fail(err)
	}
	if acc.SessionID != s.id {
		return fail(fmt.Errorf("%w: Accept for another session", ErrProtocol))
	}
	return &path{id: sched.PathID(acc.PathID), conn: conn, out: out, in: r, tr: t, backup: opts.Backup}, nil
}

// exchangeJoin sends frame on a new stream of conn and reads the server's
// Accept, within ctx. A refusal by the server is ErrJoinRejected or
// ErrRefused; a rejection of 0-RTT is quic.Err0RTTRejected.
func exchangeJoin(ctx context.Context, conn *quic.Conn, frame []byte) (*quic.SendStream, *wire.Accept, *bufio.Reader, error) {
	if err := raceSafeOpen(ctx, conn); err != nil {
		return nil, nil, nil, err
	}
	out, err := conn.OpenUniStream()
	if err != nil {
		return nil, nil, nil, err
	}
	if _, err := out.Write(frame); err != nil {
		return nil, nil, nil, err
	}
	in, err := conn.AcceptUniStream(ctx)
	if err != nil {
		return nil, nil, nil, joinHandshakeErr(err)
	}
	r := bufio.NewReaderSize(in, handshakeReadBuf)
	f, err := readHandshakeWithin(ctx, in, r)
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, nil, nil, joinHandshakeErr(err)
	}
	acc, ok := f.(*wire.Accept)
	if !ok {
		return nil, nil, nil, fmt.Errorf("%w: expected Accept, got %T", ErrProtocol, f)
	}
	return out, acc, r, nil
}

// verifyEarlyJoinLocked is the server's check of an early Join: the session
// exists, the MAC is right and the counter is fresh (then marked used).
// l.mu is held.
func (l *Listener) verifyEarlyJoinLocked(j *wire.Join) *Session {
	s := l.sessions[j.SessionID]
	if s == nil {
		return nil
	}
	m := earlyJoinMAC(s.joinKey[:], j.SessionID, j.Nonce)
	if !hmac.Equal(j.MAC[:], m[:]) {
		return nil
	}
	if !s.joinWin.accept(earlyJoinCounter(j.Nonce)) {
		return nil
	}
	return s
}

// earlyWindow bounds what an early path is given before its handshake
// completes, segments: enough for the join's first data to arrive one round
// trip after AddPath (issue 19), and little enough that the server's
// sending stays within quic-go's amplification limit. That limit (three
// times the bytes received from the client's unvalidated address, RFC 9000
// §8.1) also holds the server's handshake retransmissions: with the path
// given as much as its window allowed, the segments used up every raise of
// the limit that the client's probes brought, quic-go's probe timer stayed
// cancelled (RFC 9002 §6.2.2.1), and a lost ServerHello was never sent
// again: the join stalled until quic-go's idle timeout
// (TestJoinSurvivesLostServerHello).
const earlyWindow = 2

// awaitHandshake waits, for a path attached before its handshake completed
// (an early join, server side), until it completes: true. If the connection
// ends first, or HandshakeTimeout passes (then it closes the connection), or
// the session closes, it reports false; with gone set it then removes the
// path (its data goes again on the others).
func (s *Session) awaitHandshake(p *path, gone bool) bool {
	if !p.early {
		return true
	}
	t := time.NewTimer(s.cfg.HandshakeTimeout)
	defer t.Stop()
	select {
	case <-p.conn.HandshakeComplete():
		s.mu.Lock()
		done := !p.shook
		p.shook = true
		s.mu.Unlock()
		if done {
			poke(s.wake) // the path may take more than earlyWindow now
		}
		return true
	case <-p.conn.Context().Done():
	case <-t.C:
		closeConn(p.conn, codeProtocol, "handshake timeout")
	case <-s.done:
		return false
	}
	if gone {
		s.pathGone(p, errors.New("the joining connection's handshake did not complete"))
	}
	return false
}

// handshakeDone waits until conn's handshake is complete (true), or conn
// or ctx ended (false).
func handshakeDone(ctx context.Context, conn *quic.Conn) bool {
	select {
	case <-conn.HandshakeComplete():
		return true
	case <-conn.Context().Done():
	case <-ctx.Done():
	}
	return false
}

// raceSafeOpen waits, in race-detector builds only, for the connection's
// handshake before a stream is opened on it. quic-go v0.65 reads
// Conn.peerParams in OpenUniStream (connection.go:3028, newFlowController)
// without synchronisation while its run loop replaces them when the
// server's transport parameters arrive during a 0-RTT handshake
// (connection.go:2460, handleTransportParameters): a data race inside
// quic-go, not in the session (a pointer-sized write; either value is a
// valid limit). The detector flags it in about one run in two, so race
// builds join in two round trips and leave the 0-RTT join to the ordinary
// builds, where its tests run.
func raceSafeOpen(ctx context.Context, conn *quic.Conn) error {
	if !raceEnabled {
		return nil
	}
	select {
	case <-conn.HandshakeComplete():
		return nil
	case <-conn.Context().Done():
		return context.Cause(conn.Context())
	case <-ctx.Done():
		return ctx.Err()
	}
}

// joinHandshakeErr maps how the server ended a join's handshake: a
// rejected join is ErrJoinRejected, a refusal by one of its limits
// ErrRefused with the server's reason (whether it came before or after the
// Accept could be read); anything else is wrapped as a handshake error.
func joinHandshakeErr(err error) error {
	var ae *quic.ApplicationError
	switch {
	case errors.As(err, &ae) && ae.ErrorCode == codeJoinRejected:
		return ErrJoinRejected
	case errors.As(err, &ae) && ae.ErrorCode == codeRefused:
		return fmt.Errorf("%w: %s", ErrRefused, ae.ErrorMessage)
	case errors.Is(err, quic.Err0RTTRejected):
		return err
	}
	return fmt.Errorf("session: handshake: %w", err)
}
