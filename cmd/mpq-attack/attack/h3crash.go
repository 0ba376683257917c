package attack

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/quicvarint"

	"github.com/mpqsched/mpqsched/pkg/wire"
)

// FollowUps are what H3AfterRequest sends after a complete GET (HEADERS
// and FIN on stream 0), by name. Each is either a session-level violation
// (the session must end with a connection error) or a legal event (the
// server must go on); none may take the server process down (issue 29:
// "extra-byte" and "empty-datagram" crashed mpquic-server at a8db118,
// because Session.RemoteAddr returned nil once the session had no paths).
var FollowUps = []string{
	"extra-byte",       // one more data byte on stream 0 past its final size, in the same segment: a protocol violation (RFC 9000 §4.5)
	"extra-byte-later", // the same byte in a segment of its own
	"empty-datagram",   // a QUIC DATAGRAM of zero bytes: not a session frame
	"garbage-datagram", // a DATAGRAM of an unknown session type
	"reset",            // RESET_STREAM of stream 0 after its FIN (legal: the request stays answered or is aborted)
	"stop-sending",     // STOP_SENDING of stream 0: the client discards the response
	"close",            // the client closes the QUIC connection at once
	"app-close",        // the client closes with an application error code
}

// H3AfterRequest sends, on each session, a complete GET of /o.File and then
// the follow-up named after (one of FollowUps), and reports how the server
// answered: "close 0xN" when it ended the session with that code, "open"
// when the session was still up after a short wait (Answers).
func H3AfterRequest(ctx context.Context, o Options, after string) Result {
	return runWith(ctx, "h3-after-request/"+after, o, dialH3, func(ctx context.Context, p *Peer, c *counters) error {
		id := clientStreamID(0, false)
		b := append(p.Data(id, h3Get(o.File)), p.Fin(id))
		switch after {
		case "extra-byte":
			b = append(b, p.Data(id, []byte{'x'})...)
		case "reset":
			b = append(b, p.Reset(id, 0x10c)) // H3_REQUEST_CANCELLED
		case "stop-sending":
			b = append(b, wire.AppendStopSending(nil, id, 0x10c))
		}
		if err := p.Send(b...); err != nil {
			return err
		}
		c.frames.Add(1)
		var err error
		switch after {
		case "extra-byte", "reset", "stop-sending":
		case "extra-byte-later":
			err = p.Send(p.Data(id, []byte{'x'})...)
		case "empty-datagram":
			err = p.Conn.SendDatagram([]byte{})
		case "garbage-datagram":
			err = p.Conn.SendDatagram(quicvarint.Append([]byte{0x3f}, 12345))
		case "close":
			err = p.Conn.CloseWithError(0, "")
		case "app-close":
			err = p.Conn.CloseWithError(0x4242, "client gives up")
		default:
			return fmt.Errorf("attack: unknown follow-up %q", after)
		}
		if err != nil {
			return err
		}
		switch after {
		case "close", "app-close":
			c.answer("client closed")
			return errOnce
		case "reset", "stop-sending":
			// Legal: the session stays up (a short look, not h3Wait).
			select {
			case <-p.Conn.Context().Done():
			case <-ctx.Done():
				return errOnce
			case <-time.After(legalWait):
				c.answer("open")
				return errOnce
			}
		}
		return p.awaitClose(ctx, c)
	})
}

// closeAnswer names how the server closed conn: "close 0xN" for an
// HTTP/3 error code (closeCode), "session N" for a session-level error
// code (pkg/session: 1 is a protocol violation), "no close" otherwise.
func closeAnswer(conn *quic.Conn) string {
	if code, _, ok := closeCode(conn); ok {
		return fmt.Sprintf("close %#x", code)
	}
	var ae *quic.ApplicationError
	if errors.As(context.Cause(conn.Context()), &ae) && ae.Remote {
		return fmt.Sprintf("session %d", ae.ErrorCode)
	}
	return "no close"
}

// legalWait is how long H3AfterRequest watches a session after a legal
// follow-up before it counts the session as still "open".
const legalWait = 500 * time.Millisecond
