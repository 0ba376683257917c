package attack

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/mpqsched/mpqsched/pkg/wire"
)

// TLS exporter labels of the join key and of a join's connection binding
// (pkg/session; the binding is in protocol version 2 only).
const (
	joinKeyLabel = "EXPORTER-mpqsched-join"
	bindingLabel = "EXPORTER-mpqsched-join-binding"
)

// joinMAC is the MAC of a join, as pkg/session computes it for this
// protocol version: HMAC-SHA256(key, "mpqsched join" ‖ id ‖ nonce), then
// (version 2) ‖ binding.
func joinMAC(key []byte, id [wire.SessionIDLen]byte, nonce [wire.NonceLen]byte, binding []byte) [wire.MACLen]byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("mpqsched join"))
	m.Write(id[:])
	m.Write(nonce[:])
	if Version() >= 2 {
		m.Write(binding)
	}
	var out [wire.MACLen]byte
	copy(out[:], m.Sum(nil))
	return out
}

func export(c *quic.Conn, label string) ([]byte, error) {
	st := c.ConnectionState().TLS
	return st.ExportKeyingMaterial(label, nil, 32)
}

// tryJoin opens a new connection from p's host and sends j on it; it
// reports whether the server accepted the join (an Accept came back).
// With mac set, j's MAC is computed for the new connection first (a
// genuine join), and the frame sent is returned.
func (p *Peer) tryJoin(ctx context.Context, o Options, j wire.Join, key []byte) (bool, []byte, error) {
	var q *Peer
	var err error
	// A loaded server may let a handshake time out, or refuse it while its
	// accept queue is full (quic-go's CONNECTION_REFUSED): try again after
	// a pause that doubles, as a client would, within ctx.
	wait := 100 * time.Millisecond
	for try := 0; ; try++ {
		if q, err = Dial0(ctx, o); err == nil || ctx.Err() != nil || try == joinDialTries-1 {
			break
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
		}
		wait *= 2
	}
	if err != nil {
		return false, nil, fmt.Errorf("%w: %w", errJoinNotSent, err)
	}
	defer q.Close()
	if key != nil {
		binding, err := export(q.Conn, bindingLabel)
		if err != nil {
			return false, nil, err
		}
		j.MAC = joinMAC(key, j.SessionID, j.Nonce, binding)
	}
	frame := wire.AppendHandshake(nil, &j)
	if q.Out, err = q.Conn.OpenUniStream(); err != nil {
		return false, frame, err
	}
	if _, err := q.Out.Write(frame); err != nil {
		return false, frame, err
	}
	actx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := q.Conn.AcceptUniStream(actx); err == nil {
		return true, frame, nil
	}
	var ae *quic.ApplicationError
	if errors.As(context.Cause(q.Conn.Context()), &ae) && ae.Remote && ae.ErrorCode == codeJoinRejected {
		return false, frame, nil
	}
	return false, frame, fmt.Errorf("attack: no answer to a join: %w", context.Cause(q.Conn.Context()))
}

// Application error codes of pkg/session: codeJoinRejected closes the
// connection of a join the server refuses; codeRefused one that a server
// limit refused before it read the join.
const (
	codeJoinRejected quic.ApplicationErrorCode = 2
	codeRefused      quic.ApplicationErrorCode = 8
)

// joinDialTries is how many times tryJoin dials before it gives up: with
// pauses of 0.1, 0.2, 0.4 and 0.8 s between them, 1.5 s in all.
const joinDialTries = 5

// errJoinNotSent wraps the error of a join whose connection could not be
// opened: the server never saw that join.
var errJoinNotSent = errors.New("attack: the join's connection could not be opened")

// joinOutcome names what became of a join that was not accepted, for
// Result.Answers: "refused" (the server's join refusal), "limit" (a server
// limit or quic-go's full accept queue refused the connection: the join
// was not read), "not sent" (no connection), "no answer".
func joinOutcome(err error) string {
	var ae *quic.ApplicationError
	var te *quic.TransportError
	switch {
	case err == nil:
		return "refused"
	case errors.As(err, &ae) && ae.Remote && ae.ErrorCode == codeRefused,
		errors.As(err, &te) && te.Remote && te.ErrorCode == quic.ConnectionRefused:
		return "limit"
	case errors.Is(err, errJoinNotSent):
		return "not sent"
	}
	return "no answer"
}

// Joins (issue 10 item 7 and the forged joins of the load test) opens one
// session, then tries n forged joins on it at once (its session ID, random
// nonce and MAC), then one genuine join and a byte-for-byte replay of that
// genuine join on another connection. Accepted counts forged and replayed
// joins the server took. With o.File set, the session downloads that file
// meanwhile (acknowledging it), so that it is neither idle nor stalled.
// The genuine join must be accepted (which shows the
// session was still there for the others) or an error is returned.
func Joins(ctx context.Context, o Options, n int) (Result, error) {
	start := time.Now()
	var c counters
	p, err := Dial(ctx, o.Addr, o.TLS)
	if err != nil {
		return c.result("joins", 0), err
	}
	defer p.Close()
	c.sessions.Add(1)
	if o.File != "" { // a download keeps the session from idling out
		if err := p.Request("FILE " + o.File + "\n"); err != nil {
			return c.result("joins", 0), err
		}
		go p.Consume()
	} else {
		go p.Discard()
	}
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			j := wire.Join{SessionID: p.ID}
			randomBytes(j.Nonce[:])
			randomBytes(j.MAC[:])
			ok, _, err := p.tryJoin(ctx, o, j, nil)
			switch {
			case err != nil:
				c.failed.Add(1)
				c.answer(joinOutcome(err))
			case ok:
				c.accepted.Add(1)
			default:
				c.refused.Add(1)
				c.answer(joinOutcome(nil))
			}
			c.frames.Add(1)
		}()
	}
	wg.Wait()
	key, err := export(p.Conn, joinKeyLabel)
	if err != nil {
		return c.result("joins", time.Since(start)), err
	}
	j := wire.Join{SessionID: p.ID}
	randomBytes(j.Nonce[:])
	ok, frame, err := p.tryJoin(ctx, o, j, key)
	if err != nil || !ok {
		return c.result("joins", time.Since(start)), fmt.Errorf("attack: a genuine join was not accepted (%v)", err)
	}
	// The replay: the same frame on a new connection.
	var replay wire.Join
	copy(replay.SessionID[:], frame[5:])
	copy(replay.Nonce[:], frame[5+wire.SessionIDLen:])
	copy(replay.MAC[:], frame[5+wire.SessionIDLen+wire.NonceLen:])
	ok, _, err = p.tryJoin(ctx, o, replay, nil)
	if err != nil {
		return c.result("joins", time.Since(start)), err
	}
	c.frames.Add(1)
	if ok {
		c.accepted.Add(1)
	} else {
		c.refused.Add(1)
	}
	return c.result("joins", time.Since(start)), nil
}
