package session

import "fmt"

// The connection's flow control on the receiving side (protocol version 5),
// RFC 9000 §4.1: "A receiver MUST close the connection with an error of
// type FLOW_CONTROL_ERROR if the sender violates the advertised connection
// or stream data limits". The credit counts stream bytes: each stream's
// highest offset received, or its final size once known (§4.5: "the final
// size is the amount of flow control credit that is consumed by a
// stream"), summed over the streams. A retransmission or a copy of a frame
// on another path counts nothing more. The credit comes back as the
// application reads, or as the session discards a stream's bytes (a reset,
// CancelRead), and returns to the peer in every Ack (wire.Ack.MaxData,
// QUIC's MAX_DATA): Acks go on the fastest live path as datagrams, where a
// frame in a segment would go where the scheduler puts it, the slow path
// too. An Ack goes out for the credit alone once a quarter of the window
// is to return (quic-go's update threshold). An Ack lost with its credit is
// asked for again by the sender's persist timer (persist.go), as QUIC
// retransmits a lost MAX_DATA.
//
// Bound: the streams hold at most counted − consumed ≤ maxData − consumed
// ≤ RecvWindow bytes, whatever the peer announces.

// connCountLocked counts st's bytes up to stream offset end against the
// connection's credit, before the frame that carries them is taken (the
// stream's buffer checks its own limit and final size as it takes them:
// an error there is a connection error too); past the credit, it returns
// the FLOW_CONTROL_ERROR. s.mu and st.rmu are held.
func (s *Session) connCountLocked(st *Stream, end uint64) error {
	b := &st.recv.buf
	if end <= b.highest {
		return nil // counted already
	}
	r := &s.rcv
	more := end - b.highest
	if r.counted+more > r.maxData {
		return fmt.Errorf("%w: stream %d: data to offset %d takes the connection %d bytes past its limit %d", ErrFlowControl, st.id, end, r.counted+more-r.maxData, r.maxData)
	}
	r.counted += more
	return nil
}

// connReleaseLocked returns the credit of st's bytes that the application
// read or the session discarded since the last call (recvBuf.read counts
// both), except what Read took that the loop has not credited yet
// (pendingRead, creditq.go: it comes back with the stream's own credit),
// and makes an Ack due at once when maxDataDue says so. s.mu and st.rmu
// are held.
func (s *Session) connReleaseLocked(st *Stream) {
	rs := &st.recv
	read := rs.buf.read - rs.pendingRead
	if read <= rs.released {
		return
	}
	r := &s.rcv
	r.consumed += read - rs.released
	rs.released = read
	if r.maxDataDue(r.consumed + r.window) {
		r.ackDue = s.now() // buildAckLocked announces it
		poke(s.ackWake)
	}
}

// nextMaxData is the limit an Ack built now announces: what was consumed
// plus the window. buildAckLocked sets maxData to it: the receiver holds
// the peer to the limit it sent last, never to one it has not sent. s.mu
// is held.
func (r *receiver) nextMaxData() uint64 { return max(r.maxData, r.consumed+r.window) }

// maxDataDue says whether to send an Ack for the credit alone, to announce
// next as the connection's new limit: once it is a quarter of the window
// above the last one (quic-go's threshold; RFC 9000 §4.2, "frequently
// sending MAX_STREAM_DATA and MAX_DATA frames with small changes is
// undesirable"), or, while the peer has less than a quarter of the window
// left to send, a sixteenth above.
// The second rule is for streams that hold most of the window unread: the
// credit that the others' reads return may never reach a quarter, and RFC
// 9000 §4.2 warns that "A receiver MUST NOT wait for a STREAM_DATA_BLOCKED
// or DATA_BLOCKED frame before sending a MAX_STREAM_DATA or MAX_DATA frame;
// doing so could result in the sender being blocked for the rest of the
// connection" (TestSevenUnreadStreamsDefaults: seven unread streams hold 3.5
// of a 4 MiB window).
func (r *receiver) maxDataDue(next uint64) bool {
	if next >= r.maxData+r.window/4 {
		return true
	}
	left := r.maxData - min(r.counted, r.maxData)
	return left < r.window/4 && next >= r.maxData+r.window/16
}
