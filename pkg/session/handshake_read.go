package session

import (
	"bufio"
	"context"

	"github.com/quic-go/quic-go"

	"github.com/mpqsched/mpqsched/pkg/wire"
)

// readCanceler is the read side of a QUIC stream (*quic.ReceiveStream).
type readCanceler interface {
	CancelRead(quic.StreamErrorCode)
}

// readHandshakeWithin reads one handshake frame (wire.ReadHandshake) from r,
// the buffered reader over in, within ctx: if ctx ends first, in's read side
// is cancelled (CancelRead(0)), so that a peer that never answers cannot hold
// the read.
//
// A frame read whole while ctx ended is refused too, with ctx's error:
// context.AfterFunc's stop then reports that the cancellation has started,
// so the stream that would go on to carry the path's data is (or is about to
// be) cancelled, and a path attached on it would end at its first read
// ("stream 3 canceled by local with error code 0"). That ended one of
// TestLoadHostile's downloads: a rejoin's attempt (at least 1 s,
// rejoinAttempt) ran out as its Accept arrived, the fresh path replaced the
// old one and died at once, and with the other path already gone the
// session had none left.
func readHandshakeWithin(ctx context.Context, in readCanceler, r *bufio.Reader) (any, error) {
	stop := context.AfterFunc(ctx, func() { in.CancelRead(0) })
	f, err := wire.ReadHandshake(r)
	if !stop() {
		if err == nil {
			err = ctx.Err()
		}
		return nil, err
	}
	return f, err
}
