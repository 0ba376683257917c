package session

import (
	"errors"
	"fmt"
	"time"

	"github.com/mpqsched/mpqsched/pkg/wire"
)

// streamRecv is the receive side of a stream, guarded by Stream.rmu (the
// loop holds Session.mu too; see Stream.rmu for who may read what). Its
// buffer reassembles the peer's STREAM frames by offset, in whatever order
// they come, and holds at most the stream's window: the peer may not send
// beyond limit, and limit only moves as the application reads.
type streamRecv struct {
	buf      recvBuf // buf.read: stream bytes the application read (or discarded); buf.finKnown: the peer's end (FIN or RESET_STREAM) gave the final size
	released uint64  // of buf.read, what went back to the connection's credit (connflow.go)
	limit    uint64  // the peer may send stream bytes below limit (last MAX_STREAM_DATA framed or queued)
	window   uint64  // current window, bytes: grows up to Config.MaxStreamWindow while the application keeps up
	epoch    time.Time
	epochOff uint64 // read at epoch

	reset     bool   // the peer's RESET_STREAM arrived
	cancelled bool   // CancelRead: data is discarded
	done      bool   // no more reads: EOF returned, reset, or cancelled once the final size is known
	err       error  // what Read returns once buf is empty (reset or cancel)
	stopCode  uint64 // STOP_SENDING code to send
	deadline  time.Time
	timer     *time.Timer // the read deadline's; guarded by Session.mu alone (rearm)

	pendingRead  uint64 // bytes Read took from buf that the loop has not credited yet (creditq.go)
	creditQueued bool   // queued in Session.credits, not yet taken by the loop

	// direct is the slice of the Read waiting on an empty buffer, which
	// the next in-order frame fills straight (recvBuf.writeTo); that frame
	// sets it to nil and puts how many bytes it wrote in Stream.rgate.filled,
	// which the Read returns. The Read sets it back to nil itself before
	// returning otherwise: no frame writes into a slice its Read has given
	// back.
	direct []byte
}

func (r *streamRecv) init(window uint64) {
	r.window, r.limit = window, window
	r.buf.limit = window
}

// release drops what the buffer holds once the receive side is done (its
// deadline timer is stopped with the stream's, stopDeadlines). Both locks
// are held.
func (r *streamRecv) release() { r.buf.discard() }

// maxStreamDataDue reports whether the stream's MAX_STREAM_DATA is due: a
// quarter of its window read since the limit it last sent (quic-go's window
// update threshold), while the peer may still send (no final size, not
// cancelled). Stream.Read (creditq.go) and streamReadLocked both ask.
func (r *streamRecv) maxStreamDataDue() bool {
	return !r.buf.finKnown && !r.cancelled && r.limit-r.buf.read <= r.window-r.window/4
}

// streamReadLocked credits n bytes the application read from st, to the
// connection window and the stream's, and queues a MAX_STREAM_DATA once a
// quarter of the stream's window was read (quic-go's window update
// threshold). As in quic-go's flow controller, the window
// doubles (up to Config.MaxStreamWindow) when the application read the
// previous window faster than about two round trips: a stream that is read
// keeps up with the path's bandwidth-delay product, one that is not read
// keeps its initial window. s.mu and st.rmu are held.
func (s *Session) streamReadLocked(st *Stream, n uint64) {
	r := &st.recv
	read := r.buf.read
	s.rcv.buffered -= n
	s.connReleaseLocked(st)
	if !r.maxStreamDataDue() {
		return
	}
	now := s.now()
	if !r.epoch.IsZero() {
		frac := float64(read-r.epochOff) / float64(r.window)
		if rtt := s.maxRTTLocked(); rtt > 0 && now.Sub(r.epoch) < time.Duration(4*frac*float64(rtt)) {
			r.window = min(2*r.window, s.streams.maxWindow)
		}
	}
	r.epoch, r.epochOff = now, read
	r.limit = read + r.window
	r.buf.limit = r.limit
	s.streams.markCtl(st, ctlMaxData)
}

// maxRTTLocked is the largest smoothed RTT of the current paths.
func (s *Session) maxRTTLocked() time.Duration {
	var rtt time.Duration
	for _, p := range s.slots {
		if p != nil {
			r, _ := p.rttLocked()
			rtt = max(rtt, r)
		}
	}
	return rtt
}

// recvDoneLocked ends the receive side (EOF returned, or a reset) and drops
// its buffer. s.mu and st.rmu are held.
func (s *Session) recvDoneLocked(st *Stream) {
	st.recv.done = true
	st.recv.release()
	s.streams.maybeFree(st)
}

// discardLocked drops what st's buffer holds and returns its connection
// credit, all of it up to the highest offset received (or the final size),
// after crediting what the application read. s.mu and st.rmu are held.
func (s *Session) discardLocked(st *Stream) {
	s.creditReadLocked(st)
	r := &st.recv
	s.rcv.buffered -= r.buf.held()
	s.gapChangedLocked(r.buf.gapped(), 0)
	r.buf.discard()
	s.connReleaseLocked(st)
}

// gapChangedLocked accounts a stream's bytes held behind a gap going from
// before to after: the session's per-stream head-of-line blocking
// (receiver.blocked, gapBytes; framesLocked times it).
func (s *Session) gapChangedLocked(before, after uint64) {
	r := &s.rcv
	r.gapBytes = r.gapBytes - before + after
	switch {
	case before == 0 && after > 0:
		r.blocked++
	case before > 0 && after == 0:
		r.blocked--
	}
}

// cancelReadLocked is Stream.CancelRead with s.mu and st.rmu held.
func (s *Session) cancelReadLocked(st *Stream, code uint64) {
	r := &st.recv
	if r.done || r.cancelled {
		return // the first cancellation's code stands, as CancelWrite's (and quic-go's)
	}
	sizeKnown := r.buf.finKnown && !r.buf.allRecvd()
	s.discardLocked(st)
	r.cancelled = true
	r.err = &StreamError{StreamID: st.id, ErrorCode: code}
	st.rgate.signal()
	if !r.buf.finKnown {
		// RFC 9000 §3.5: after STOP_SENDING the receiving part stays in
		// "Recv" until the peer's RESET_STREAM or FIN gives the final size,
		// and its flow-control limit still holds (§4.1: "A receiver MUST
		// close the connection with an error of type FLOW_CONTROL_ERROR if
		// the sender violates the advertised connection or stream data
		// limits"). So the stream is kept, holding its stream credit, until
		// then; its data is checked and dropped (StreamFrame). At a8db118
		// it was forgotten at once and 512 KiB + 1 byte on it passed unseen.
		r.stopCode = code
		s.streams.markCtl(st, ctlStop)
		return
	}
	if sizeKnown {
		// RFC 9000 §3.5: "If the stream is in the "Recv" or "Size Known"
		// state, the transport SHOULD signal this by sending a
		// STOP_SENDING frame". The final size is known, so the stream
		// holds no credit past it and is done at once; the STOP_SENDING is
		// still sent (the control queue keeps the stream for it), and what
		// the peer sends after it for the stream is dropped. In "Data
		// Recvd" every byte has arrived and there is nothing to stop.
		r.stopCode = code
		s.streams.markCtl(st, ctlStop)
	}
	s.recvDoneLocked(st)
}

// frameSink receives the frames of every segment as it arrives, in any
// order (protocol version 4, pkg/wire/frame.go); Session.mu is held, and
// each frame of a stream's receive side takes the stream's rmu.
type frameSink Session

// bufErr maps a receive buffer's error to the session's: RFC 9000's
// FLOW_CONTROL_ERROR is ErrFlowControl, FINAL_SIZE_ERROR and too many gaps
// are protocol violations.
func bufErr(id uint64, err error) error {
	if errors.Is(err, errFlowControl) {
		return fmt.Errorf("%w: stream %d: %w", ErrFlowControl, id, err)
	}
	return fmt.Errorf("%w: stream %d: %w", ErrProtocol, id, err)
}

// StreamFrame places a STREAM frame's bytes in its stream's receive buffer
// at their offset. RFC 9000 §2.2: "An endpoint could receive data for a
// stream at the same stream offset multiple times. Data that has already
// been received can be discarded."
func (fs *frameSink) StreamFrame(id, off uint64, data []byte, fin bool) error {
	s := (*Session)(fs)
	if !s.streams.canRecv(id) {
		return wrongDirection(id)
	}
	st, err := s.streams.lookup(id)
	if err != nil || st == nil {
		return err // nil: a stream already forgotten; late or duplicate data
	}
	st.rmu.Lock()
	defer st.rmu.Unlock()
	r := &st.recv
	if r.reset || r.done && !r.cancelled {
		// The receiving part is over (RFC 9000 §3.2 "Reset Recvd", "Data
		// Read"): a late frame must still respect the final size.
		if end := off + uint64(len(data)); r.buf.finKnown && (end > r.buf.final || fin && end != r.buf.final) {
			return bufErr(id, fmt.Errorf("%w: data to offset %d, final size %d", errFinalSize, end, r.buf.final))
		}
		return nil
	}
	if err := s.connCountLocked(st, off+uint64(len(data))); err != nil {
		return err // (the stream's own limit and final size: recvBuf.write)
	}
	before := r.buf.gapped()
	var toRead int
	var stored uint64
	if r.direct != nil && !r.cancelled {
		toRead, stored, err = r.buf.writeTo(off, data, fin, r.direct)
	} else {
		stored, err = r.buf.write(off, data, fin)
	}
	if err != nil {
		return bufErr(id, err)
	}
	if toRead > 0 { // straight into the waiting Read's slice: read, as Read counts it
		r.direct = nil // given back: no later frame writes there
		st.rgate.filled.Store(int64(toRead))
		s.rcv.buffered += uint64(toRead)
		s.streamReadLocked(st, uint64(toRead))
		st.rgate.signal()
	}
	if r.cancelled { // checked against the limits and the final size, counted, and dropped
		r.buf.discard()
		s.connReleaseLocked(st)
		if r.buf.finKnown && !r.done {
			s.recvDoneLocked(st)
		}
		return nil
	}
	s.rcv.buffered += stored
	s.gapChangedLocked(before, r.buf.gapped())
	if r.buf.readable() > 0 || r.buf.eof() {
		st.rgate.signal()
	}
	return nil
}

// ResetStream: RFC 9000 §3.2, "the receiving part of the stream ... can
// discard any data that it already received on that stream"; §4.5: the
// final size it carries cannot change, nor lie below data received.
func (fs *frameSink) ResetStream(id, code, finalSize uint64) error {
	s := (*Session)(fs)
	if !s.streams.canRecv(id) {
		return wrongDirection(id)
	}
	st, err := s.streams.lookup(id)
	if err != nil || st == nil {
		return err
	}
	st.rmu.Lock()
	defer st.rmu.Unlock()
	r := &st.recv
	if r.reset {
		return nil // a retransmission
	}
	if err := s.connCountLocked(st, finalSize); err != nil { // before setFinal raises the highest offset to it
		return err
	}
	if err := r.buf.setFinal(finalSize); err != nil {
		return bufErr(id, err)
	}
	r.reset = true
	if r.done {
		return nil // the application read to the end already
	}
	s.discardLocked(st)
	if !r.cancelled { // a cancelled stream keeps the application's own error
		r.err = &StreamError{StreamID: id, ErrorCode: code, Remote: true, reset: true}
	}
	st.rgate.signal()
	s.recvDoneLocked(st)
	return nil
}

// MaxStreamData raises a stream's send limit (RFC 9000 §19.10: a frame
// that would lower it is ignored, as frames arrive in any order).
func (fs *frameSink) MaxStreamData(id uint64, limit uint64) error {
	s := (*Session)(fs)
	if !s.streams.canSend(id) {
		return wrongDirection(id)
	}
	st, err := s.streams.lookup(id)
	if err != nil || st == nil {
		return err
	}
	if limit > st.send.limit {
		st.send.limit = limit
		s.streams.markReady(st)
	}
	return nil
}

// StopSending: RFC 9000 §3.5, "An endpoint that receives a STOP_SENDING
// frame MUST send a RESET_STREAM frame if the stream is in the 'Ready' or
// 'Send' state ... An endpoint SHOULD copy the error code from the
// STOP_SENDING frame to the RESET_STREAM frame it sends".
func (fs *frameSink) StopSending(id uint64, code uint64) error {
	s := (*Session)(fs)
	if !s.streams.canSend(id) {
		return wrongDirection(id)
	}
	st, err := s.streams.lookup(id)
	if err != nil || st == nil {
		return err
	}
	s.cancelWriteLocked(st, code, true)
	return nil
}

// MaxStreams raises the peer's stream credit (only ever up: RFC 9000
// §19.11, "MAX_STREAMS frames that do not increase the stream limit MUST be
// ignored").
func (fs *frameSink) MaxStreams(n uint64, isUni bool) error {
	k := bidi
	if isUni {
		k = uni
	}
	(*Session)(fs).streams.maxStreamsReceived(k, n)
	return nil
}

// MaxData raises the peer's connection credit (RFC 9000 §19.9; "A sender
// MUST ignore any MAX_DATA frame that does not increase the maximum data",
// §4.1: frames arrive in any order).
func (fs *frameSink) MaxData(n uint64) error {
	s := (*Session)(fs)
	if s.streams.raiseConnMax(n) {
		poke(s.wake)
	}
	return nil
}

// wrongDirection is the error of a frame for the direction a
// unidirectional stream lacks (RFC 9000's STREAM_STATE_ERROR).
func wrongDirection(id uint64) error {
	return fmt.Errorf("frame for the direction unidirectional stream %d does not have", id)
}

var _ wire.FrameHandler = (*frameSink)(nil)
