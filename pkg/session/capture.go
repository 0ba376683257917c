package session

import "time"

// Test seams: what a session sends, and when its loops wake.
//
// Both hooks are package variables that only tests set, before any session
// starts and back to nil after the last one ended; in production each costs
// one nil check per send or per wake-up.

// sendTap, if set, sees every datagram (Ack, AckReq, Ping, Report, Silent)
// and every batch of segment frames a session hands to quic-go, with the
// path it goes on, just before the hand-off. b is only valid during the
// call. It runs on the sending goroutine, without Session.mu held.
var sendTap func(s *Session, p *path, kind sendKind, b []byte)

// sendKind says what a tapped send carries.
type sendKind uint8

const (
	sentDatagram sendKind = iota // one QUIC datagram (a session record: its first byte is the wire type)
	sentSegments                 // segment frames written to the path's data stream
)

// tapDatagrams returns the path's datagram sender: send itself when no tap
// is set.
func (s *Session) tapDatagrams(p *path, send func([]byte) error) func([]byte) error {
	if sendTap == nil {
		return send
	}
	return func(b []byte) error {
		if tap := sendTap; tap != nil {
			tap(s, p, sentDatagram, b)
		}
		return send(b)
	}
}

// tapSegments shows the segment frames in b, about to be written on p, to
// the tap if one is set.
func (s *Session) tapSegments(p *path, b []byte) {
	if tap := sendTap; tap != nil {
		tap(s, p, sentSegments, b)
	}
}

// viewTap, if set, sees every scheduler snapshot of a path (path.info)
// with the view it was made from, with Session.mu held.
var viewTap func(p *path, now time.Time, v linkView)

// loopWoke, if set, is called each time the session's loop wakes up for
// one of its passes (loop.go: sendPass, ackPass), with the reason, before
// the pass runs; a timer wake-up for both passes reports each.
var loopWoke func(s *Session, loop loopID, why wakeReason)

// readWoke, if set, is called when a waiting Stream.Read wakes and no
// frame has filled its slice, before it takes Session.mu again
// (stream.go): the window in which a frame can still fill it.
var readWoke func(st *Stream)

// loopID names a pass of the session's loop, each with its own wake
// channel and deadline.
type loopID uint8

const (
	loopSend   loopID = iota // sendPass
	loopAck                  // ackPass
	loopDecide               // the decider's scheduling round (decider.go)
)

// wakeReason is why a loop woke.
type wakeReason uint8

const (
	wokePoked wakeReason = iota // its wake channel: an event
	wokeTimer                   // its timer: a deadline it armed
)

// woke reports a wake-up to the test hook.
func (s *Session) woke(loop loopID, why wakeReason) {
	s.handoffs.add()
	if f := loopWoke; f != nil {
		f(s, loop, why)
	}
}
