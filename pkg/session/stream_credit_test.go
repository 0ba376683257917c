package session

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/wire"
)

// Kinds of the frames a session sends, as frameLog records them (a STREAM
// frame is logged as frData for its bytes and frFin for its FIN).
const (
	frData byte = iota + 1
	frFin
	frReset
	frStop
	frMaxStreamData
	frMaxStreams
	frMaxUniStreams
	frPathStatus
)

// sentFrame is one frame a session framed for its peer: its kind, stream
// (or path) ID and one number (bytes, code, limit, count or sequence).
type sentFrame struct {
	typ   byte
	id, n uint64
}

// frameLog is a wire.FrameHandler that logs the frames it parses.
type frameLog struct{ recs []sentFrame }

func (l *frameLog) add(t byte, id, n uint64) error {
	l.recs = append(l.recs, sentFrame{t, id, n})
	return nil
}
func (l *frameLog) StreamFrame(id, off uint64, p []byte, fin bool) error {
	if len(p) > 0 {
		l.add(frData, id, uint64(len(p)))
	}
	if fin {
		l.add(frFin, id, off+uint64(len(p)))
	}
	return nil
}
func (l *frameLog) ResetStream(id, code, size uint64) error { return l.add(frReset, id, code) }
func (l *frameLog) MaxStreamData(id, limit uint64) error    { return l.add(frMaxStreamData, id, limit) }
func (l *frameLog) StopSending(id, code uint64) error       { return l.add(frStop, id, code) }
func (l *frameLog) MaxData(uint64) error                    { return errors.New("MAX_DATA") }
func (l *frameLog) MaxStreams(n uint64, uni bool) error {
	if uni {
		return l.add(frMaxUniStreams, n, 0)
	}
	return l.add(frMaxStreams, n, 0)
}
func (l *frameLog) PathStatus(id, seq uint64, b bool) error { return l.add(frPathStatus, id, seq) }
func (l *frameLog) find(t byte) []sentFrame {
	return l.filter(func(r sentFrame) bool { return r.typ == t })
}
func (l *frameLog) filter(f func(sentFrame) bool) (out []sentFrame) {
	for _, r := range l.recs {
		if f(r) {
			out = append(out, r)
		}
	}
	return out
}

// sentFrames frames what the session has to send (as its send pass would,
// within the windows the peer granted) and returns the frames, parsed. The
// bytes are consumed as if sent and acknowledged.
func (sp *scriptedPeer) sentFrames() *frameLog {
	s := sp.s
	s.mu.Lock()
	s.fillLocked(1 << 30)
	b := s.snd.takeAllFramed()
	s.snd.ends.take(s.snd.pendOff + uint64(len(b)))
	s.snd.pendOff += uint64(len(b))
	s.snd.segLimit += uint64(len(b)) // the peer acknowledges at once
	s.mu.Unlock()
	var log frameLog
	if len(b) == 0 {
		return &log
	}
	if err := wire.ParseFrames(b, &log); err != nil {
		sp.t.Fatalf("the session framed a malformed frame: %v", err)
	}
	return &log
}

// takeAllFramed takes every frame the framed queue holds, as one segment
// that is at once acknowledged, and returns its bytes.
func (sn *sender) takeAllFramed() []byte {
	var g segment
	sn.pend.take(&g, sn.pendOff, sn.pend.Len())
	b := appendPayload(nil, &g)
	ackRefs(&g)
	return b
}

// send delivers the pending frames as one segment.
func (sp *scriptedPeer) send() error {
	if len(sp.pend) == 0 {
		return nil
	}
	return sp.segment(sp.cut(len(sp.pend)))
}

// Issue 19, finding 1: "With MaxStreams: 4, a client opens 8 streams one
// after another and cancels each both ways (CancelWrite, CancelRead) ...
// before the server application calls AcceptStream. Both sessions end:
// protocol violation by peer: too many open streams: accept queue full."
//
// RFC 9000 §4.6: "An endpoint MUST NOT wait to receive [MAX_STREAMS] before
// advertising additional credit at the start of a stream" and quic-go's
// rule, which this session follows: a peer stream's credit comes back once
// the application accepted it and both its sides are done. The peer's
// streams waiting in the accept queue keep their credit, whatever state
// they are in, so a peer that keeps within its credit never overflows the
// queue; accepting them returns it.
func TestCancelBeforeAcceptKeepsCredit(t *testing.T) {
	sp := newScriptedPeer(t, &Config{MaxStreams: 4})
	defer sp.close()
	// The peer (a client: even IDs) opens every stream its credit allows and
	// cancels each both ways, without the server accepting any.
	granted := uint64(4)
	opened := uint64(0)
	for round := 0; round < 4 && opened < granted; round++ {
		for ; opened < granted; opened++ {
			id := streamID(opened, true, false)
			sp.data(id, []byte("req"))
			sp.reset(id, 1)
			sp.frames(wire.AppendStopSending(nil, id, 2))
		}
		if err := sp.send(); err != nil {
			t.Fatalf("after %d streams opened within credit: %v", opened, err)
		}
		for _, r := range sp.sentFrames().find(frMaxStreams) {
			granted = max(granted, r.id)
		}
	}
	if granted != 4 {
		t.Errorf("credit grew to %d streams with none accepted, want it to stay at 4", granted)
	}
	// RFC 9000 §3.2: "the receiving part of the stream ... can discard any
	// data that it already received": the application accepts each stream
	// in order and reads the reset.
	for i := range uint64(4) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		st, err := sp.s.AcceptStream(ctx)
		cancel()
		if err != nil {
			t.Fatalf("AcceptStream %d: %v", i, err)
		}
		if st.ID() != streamID(i, true, false) {
			t.Errorf("accepted stream %d, want %d", st.ID(), streamID(i, true, false))
		}
		var se *StreamError
		if _, err := st.Read(make([]byte, 8)); !errors.As(err, &se) || se.ErrorCode != 1 {
			t.Errorf("stream %d: Read = %v, want the peer's reset (code 1)", st.ID(), err)
		}
	}
	// Accepted and done: the credit comes back.
	granted = 0
	for _, r := range sp.sentFrames().find(frMaxStreams) {
		granted = max(granted, r.id)
	}
	if granted != 8 {
		t.Errorf("after accepting 4 done streams the peer may open %d streams, want 8", granted)
	}
	if err := sp.s.Err(); err != nil {
		t.Fatal(err)
	}
}

// Issue 19, finding 1, on the harness, the opener's side: the client opens
// 8 streams one after another (OpenStreamSync) with 4 granted and cancels
// each both ways before the server accepts any. It sends frames for 4
// streams only and waits for credit; once the peer grants more (as a
// server that accepted them does: TestCancelBeforeAcceptKeepsCredit and
// TestHarnessNoStreamCreditBeforeAccept are the granter's side), the rest
// go through, each stream's data, reset and STOP_SENDING, and the session
// does not end.
func TestCancelBeforeAcceptE2E(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		params := peerParams
		params.MaxStreams = 4
		tc := newTestClientParams(t, nil, params)
		opened := make(chan uint64, 8)
		go func() {
			defer close(opened)
			for range 8 {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				st, err := tc.s.OpenStreamSync(ctx)
				cancel()
				if err != nil {
					t.Errorf("OpenStreamSync: %v", err)
					return
				}
				st.Write([]byte("request"))
				time.Sleep(10 * time.Millisecond) // as a browser that gives up
				st.CancelWrite(1)
				st.CancelRead(2)
				opened <- st.ID()
			}
		}()
		// frames tallies, per stream, the kinds of frame the peer got.
		kinds := map[uint64]map[string]bool{}
		tally := func(fs []frame) {
			for _, f := range fs {
				var id uint64
				var k string
				switch f := f.(type) {
				case dataFrame:
					id, k = f.ID, "data"
				case resetFrame:
					id, k = f.ID, fmt.Sprintf("reset %d", f.Code)
				case stopFrame:
					id, k = f.ID, fmt.Sprintf("stop %d", f.Code)
				default:
					continue
				}
				if kinds[id] == nil {
					kinds[id] = map[string]bool{}
				}
				kinds[id][k] = true
			}
		}
		tally(tc.collect(2 * time.Second)[0])
		if n := len(opened); n != 4 {
			t.Errorf("client opened %d streams before any credit came back, want 4 (the credit)", n)
		}
		for id := range kinds {
			if id >= 16 {
				t.Errorf("frames for stream %d beyond the 4 granted: %v", id, kinds[id])
			}
		}
		if err := tc.s.Err(); err != nil {
			t.Fatalf("the client ended before the server accepted: %v", err)
		}
		tc.ackAll(0)
		tc.writeFrames(0, maxStreamsFrame{Uni: false, Count: 8})
		tally(tc.collect(2 * time.Second)[0])
		n := 0
		for range opened {
			n++
		}
		if n != 8 {
			t.Errorf("client opened %d streams, want 8", n)
		}
		for i := range uint64(8) {
			id := streamID(i, true, false)
			if k := kinds[id]; !k["data"] || !k["reset 1"] || !k["stop 2"] {
				t.Errorf("stream %d: the peer got %v, want its data, RESET_STREAM 1 and STOP_SENDING 2", id, k)
			}
		}
		// The peer, as a server obeying each STOP_SENDING, resets its side
		// of every stream: the client then keeps none.
		for i := range uint64(8) {
			tc.writeFrames(0, resetFrame{ID: streamID(i, true, false), Code: 2})
		}
		tc.advance(time.Second)
		if err := tc.s.Err(); err != nil {
			t.Errorf("client: %v", err)
		}
		tc.s.mu.Lock()
		if k := tc.s.streams.Len(); k != 0 {
			t.Errorf("client keeps %d streams", k)
		}
		tc.s.mu.Unlock()
	})
}
