package attack

import (
	"context"
	"time"

	"github.com/mpqsched/mpqsched/pkg/wire"
)

// Script ops (RunScript): each op is one byte, then for ops with a
// payload one length byte and that many bytes (cut short at the script's
// end).
const (
	opRaw      = iota // a segment of raw bytes (any frames, malformed or not)
	opData            // a DATA record of the payload on the current request stream
	opFin             // FIN of the current request stream
	opDatagram        // a QUIC DATAGRAM with the payload
	opReset           // RESET_STREAM of the current request stream, code from the payload's first byte
	opRequest         // a complete GET (HEADERS and FIN) on the next request stream, which becomes current
	opStop            // STOP_SENDING of the current request stream
	opClose           // the client closes the connection; the script ends
	opWait            // a pause of the payload's first byte in milliseconds (at most 255)
	numOps
)

// hasPayload reports whether op is followed by a length and a payload.
func hasPayload(op byte) bool {
	return op == opRaw || op == opData || op == opDatagram || op == opReset || op == opWait
}

// RunScript opens one raw HTTP/3 session to o.Addr (as the HTTP/3
// attacks do), sends a complete GET of /o.File on stream 0, then plays
// script (ops above) against the server in any order a fuzzer likes:
// requests, data after their end, violations, datagrams, resets, stops
// and closes. It returns once the script ended and the server closed the
// session or left it open for a moment: what the server did is not
// judged here; a fuzzer judges that the server survives (issue 29 item 2).
func RunScript(ctx context.Context, o Options, script []byte) error {
	ctx, cancel := context.WithTimeout(ctx, o.Duration)
	defer cancel()
	p, err := dialH3(ctx, o)
	if err != nil {
		return err
	}
	defer p.Close()
	cur := uint64(0)
	get := func(id uint64) [][]byte {
		return append(p.Data(clientStreamID(id, false), h3Get(o.File)), p.Fin(clientStreamID(id, false)))
	}
	if err := p.Send(get(cur)...); err != nil {
		return err
	}
	for len(script) > 0 && p.Conn.Context().Err() == nil {
		op := script[0] % numOps
		script = script[1:]
		var arg []byte
		if hasPayload(op) && len(script) > 0 {
			n := min(int(script[0]), len(script)-1)
			arg, script = script[1:1+n], script[1+n:]
		}
		id := clientStreamID(cur, false)
		switch op {
		case opRaw:
			if len(arg) > 0 {
				err = p.Raw(arg)
			}
		case opData:
			err = p.Send(p.Data(id, arg)...)
		case opFin:
			err = p.Send(p.Fin(id))
		case opDatagram:
			err = p.Conn.SendDatagram(arg)
		case opReset, opStop:
			code := uint64(0x10c)
			if len(arg) > 0 {
				code = uint64(arg[0])
			}
			f := p.Reset(id, code)
			if op == opStop {
				f = wire.AppendStopSending(nil, id, code)
			}
			err = p.Send(f)
		case opRequest:
			cur++
			err = p.Send(get(cur)...)
		case opClose:
			return p.Conn.CloseWithError(0x42, "script ends")
		case opWait:
			d := time.Millisecond
			if len(arg) > 0 {
				d *= time.Duration(arg[0])
			}
			select {
			case <-time.After(d):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if err != nil {
			return nil // the server ended the session: fine
		}
	}
	select { // a moment for the server to act on the last op
	case <-p.Conn.Context().Done():
	case <-time.After(20 * time.Millisecond):
	case <-ctx.Done():
	}
	return nil
}
