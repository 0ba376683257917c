package session

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/quic-go/quic-go"

	"github.com/mpqsched/mpqsched/pkg/wire"
)

// cancelRecorder is a readCanceler that records its CancelRead.
type cancelRecorder struct{ cancelled chan quic.StreamErrorCode }

func (c *cancelRecorder) CancelRead(code quic.StreamErrorCode) { c.cancelled <- code }

func acceptReader(t *testing.T) *bufio.Reader {
	t.Helper()
	b := wire.AppendHandshake(nil, &wire.Accept{PathID: 7})
	return bufio.NewReader(bytes.NewReader(b))
}

// TestHandshakeReadWithinRefusesAfterCancel: a handshake frame read whole
// while the read's context ended must not be used, since the stream it came
// on has been cancelled (CancelRead) by then. Found by TestLoadHostile (CI
// of 7244bb1f): a rejoined path whose attempt ran out as its Accept arrived
// was attached on a cancelled stream, failed at its first read ("stream 3
// canceled by local with error code 0"), and ended the session ("every path
// is gone"). With the context already done, context.AfterFunc starts the
// cancellation at once, so the case is deterministic here.
func TestHandshakeReadWithinRefusesAfterCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	in := &cancelRecorder{cancelled: make(chan quic.StreamErrorCode, 1)}
	f, err := readHandshakeWithin(ctx, in, acceptReader(t))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, %v; want context.Canceled: the stream was cancelled while its Accept was read", f, err)
	}
	if code := <-in.cancelled; code != 0 {
		t.Errorf("CancelRead(%d), want 0", code)
	}
}

// TestHandshakeReadWithinKeepsStream: within its context the frame is
// returned and the stream is never cancelled (it goes on to carry the
// path's data).
func TestHandshakeReadWithinKeepsStream(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	in := &cancelRecorder{cancelled: make(chan quic.StreamErrorCode, 1)}
	f, err := readHandshakeWithin(ctx, in, acceptReader(t))
	cancel() // after the read: must not reach the stream
	if err != nil {
		t.Fatal(err)
	}
	if a, ok := f.(*wire.Accept); !ok || a.PathID != 7 {
		t.Fatalf("got %#v, want the Accept of path 7", f)
	}
	select {
	case code := <-in.cancelled:
		t.Fatalf("CancelRead(%d) after a read within the context", code)
	default:
	}
}
