package session

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/emu"
	"github.com/mpqsched/mpqsched/pkg/wire"
)

// Close waits for what the application wrote (Close's doc: "every byte
// written on every stream (and every stream's end)"), not for the
// acknowledgement of the session's own window updates: a MAX_STREAM_DATA
// record grants the peer credit this end will not use once it closed, as
// quic-go's own Close does not wait for its MAX_STREAM_DATA frames.
// TestCloseCancelsRejoin found Close waiting 0.49-1.6 s for one (6 bytes,
// RecMaxData) sent just before the link went dark.
//
// The client asks for a download and reads it; the link goes down just as
// the client hands a window update to quic-go, so it never arrives. The
// request ("GET" and its end) was acknowledged long before: Close must
// return at once, with nil.
func TestCloseDoesNotWaitForWindowUpdates(t *testing.T) {
	var client atomic.Pointer[Session]
	var link atomic.Pointer[emu.Link]
	var armed atomic.Bool
	var dropped atomic.Int32 // the first record type of the batch dropped, +1 (0: none yet)
	// The tap is set before any session starts and cleared after the
	// bubble ended (capture.go).
	sendTap = func(s *Session, p *path, kind sendKind, b []byte) {
		if s != client.Load() || kind != sentSegments || !armed.CompareAndSwap(true, false) {
			return
		}
		link.Load().SetDown(true) // before quic-go has the batch: it is lost
		typ := int32(0x100)       // not a record boundary
		if g, _, err := wire.ParseSegment(b); err == nil && len(g.Payload) > 0 {
			typ = int32(g.Payload[0])
		}
		dropped.Store(typ + 1)
	}
	defer func() { sendTap = nil }()
	synctest.Test(t, func(t *testing.T) {
		a := emu.LinkConfig{RateBps: 20e6, Delay: 5 * time.Millisecond}
		tb := newTestbedOn(t, 1, nil, false, emu.PathSpec{Up: a, Down: a})
		defer tb.close()
		link.Store(tb.topo.Links[0])
		client.Store(tb.cli)
		cli := tb.cli
		startDownload(t, tb, 40<<20)
		time.Sleep(200 * time.Millisecond)
		armed.Store(true)
		deadline := time.Now().Add(time.Second)
		for dropped.Load() == 0 {
			if time.Now().After(deadline) {
				t.Fatal("the client sent no segment within 1 s while reading a download")
			}
			time.Sleep(time.Millisecond)
		}
		if typ := dropped.Load() - 1; typ != int32(wire.FrameMaxStreamData) {
			t.Fatalf("the segment lost begins with frame type %#x, want MAX_STREAM_DATA (%#x): the test's premise does not hold", typ, wire.FrameMaxStreamData)
		}
		start := time.Now()
		done := make(chan error, 1)
		go func() { done <- cli.Close() }()
		var err error
		select {
		case err = <-done:
		case <-time.After(time.Minute):
			t.Fatal("Close did not return within a minute")
		}
		el := time.Since(start)
		t.Logf("Close returned %v after %v, a window update unacknowledged", err, el)
		if el > 50*time.Millisecond {
			t.Errorf("Close took %v with only a window update unacknowledged, want ≤ 50 ms", el)
		}
		if err != nil {
			t.Errorf("Close: %v, want nil: everything the client wrote was acknowledged", err)
		}
	})
}
