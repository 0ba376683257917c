package session

import (
	"fmt"
	"time"

	"github.com/mpqsched/mpqsched/pkg/wire"
)

// streamRecv is the receive side of a stream, guarded by Session.mu. Its
// buffer holds at most the stream's window: the peer may not send beyond
// limit, and limit only moves as the application reads.
type streamRecv struct {
	buf      byteQueue
	received uint64 // stream bytes received
	read     uint64 // stream bytes the application read (or discarded)
	limit    uint64 // the peer may send stream bytes below limit (last MAX_STREAM_DATA framed or queued)
	window   uint64 // current window, bytes: grows up to Config.MaxStreamWindow while the application keeps up
	epoch    time.Time
	epochOff uint64 // read at epoch

	fin       bool   // the peer's end arrived
	cancelled bool   // CancelRead: data is discarded
	done      bool   // no more reads: EOF returned, reset, or cancelled once the final size is known
	err       error  // what Read returns once buf is empty (reset or cancel)
	stopCode  uint64 // STOP_SENDING code to send
	deadline  time.Time
	timer     *time.Timer
}

func (r *streamRecv) init(window uint64) {
	r.window, r.limit = window, window
	r.buf.recycle, r.buf.sparse = true, true
}

func (r *streamRecv) release() {
	r.buf.reset()
	if r.timer != nil {
		r.timer.Stop()
	}
}

// streamReadLocked credits n bytes the application read from st, to the
// connection window and the stream's, and queues a MAX_STREAM_DATA once a
// quarter of the stream's window was read (quic-go's window update
// threshold). As in quic-go's flow controller, the window
// doubles (up to Config.MaxStreamWindow) when the application read the
// previous window faster than about two round trips: a stream that is read
// keeps up with the path's bandwidth-delay product, one that is not read
// keeps its initial window.
func (s *Session) streamReadLocked(st *Stream, n uint64) {
	r := &st.recv
	r.read += n
	s.windowReadLocked(n)
	if r.fin || r.cancelled || r.limit-r.read > r.window-r.window/4 {
		return
	}
	now := s.now()
	if !r.epoch.IsZero() {
		frac := float64(r.read-r.epochOff) / float64(r.window)
		if rtt := s.maxRTTLocked(); rtt > 0 && now.Sub(r.epoch) < time.Duration(4*frac*float64(rtt)) {
			r.window = min(2*r.window, s.streams.maxWindow)
		}
	}
	r.epoch, r.epochOff = now, r.read
	r.limit = r.read + r.window
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

// recvDoneLocked ends the receive side (EOF returned, or a reset).
func (s *Session) recvDoneLocked(st *Stream) {
	st.recv.done = true
	s.streams.maybeFree(st)
}

// discardLocked drops what st's buffer holds and releases its window.
func (s *Session) discardLocked(st *Stream) {
	r := &st.recv
	if n := r.buf.Len(); n > 0 {
		r.read += uint64(n)
		s.windowReadLocked(uint64(n))
	}
	r.buf.reset()
}

// cancelReadLocked is Stream.CancelRead with s.mu held.
func (s *Session) cancelReadLocked(st *Stream, code uint64) {
	r := &st.recv
	if r.done {
		return
	}
	s.discardLocked(st)
	r.cancelled = true
	r.err = &StreamError{StreamID: st.id, ErrorCode: code}
	st.rcond.Broadcast()
	if !r.fin {
		// RFC 9000 §3.5: after STOP_SENDING the receiving part stays in
		// "Recv" until the peer's RESET_STREAM or FIN gives the final size,
		// and its flow-control limit still holds (§4.1: "A receiver MUST
		// close the connection with an error of type FLOW_CONTROL_ERROR if
		// the sender violates the advertised connection or stream data
		// limits"). So the stream is kept, holding its stream credit, until
		// then; its data is counted and dropped (StreamData). At a8db118 it
		// was forgotten at once and 512 KiB + 1 byte on it passed unseen.
		r.stopCode = code
		s.streams.markCtl(st, ctlStop)
		return
	}
	s.recvDoneLocked(st)
}

// recordSink receives the records of the in-order connection byte stream;
// Session.mu is held.
type recordSink Session

func (rs *recordSink) StreamData(id uint64, p []byte) error {
	s := (*Session)(rs)
	if !s.streams.canRecv(id) {
		return wrongDirection(id)
	}
	st, err := s.streams.lookup(id)
	if err != nil || st == nil {
		return err
	}
	r := &st.recv
	n := uint64(len(p))
	switch {
	case r.fin || (r.err != nil && !r.cancelled):
		return fmt.Errorf("data on stream %d after its end", id)
	case r.received+n > r.limit:
		return fmt.Errorf("%w: stream %d: %d bytes beyond its limit %d", ErrFlowControl, id, r.received+n-r.limit, r.limit)
	}
	r.received += n
	if r.cancelled {
		r.read += n
		return nil
	}
	r.buf.Append(p)
	s.rcv.buffered += n
	st.rcond.Broadcast()
	return nil
}

func (rs *recordSink) StreamFin(id uint64) error {
	s := (*Session)(rs)
	if !s.streams.canRecv(id) {
		return wrongDirection(id)
	}
	st, err := s.streams.lookup(id)
	if err != nil || st == nil {
		return err
	}
	r := &st.recv
	if r.fin || (r.err != nil && !r.cancelled) {
		return fmt.Errorf("second end of stream %d", id)
	}
	r.fin = true
	st.rcond.Broadcast()
	if r.cancelled { // the final size a cancelled stream waited for (cancelReadLocked)
		s.recvDoneLocked(st)
	}
	return nil
}

// StreamReset: RFC 9000 §3.2, "the receiving part of the stream ... can
// discard any data that it already received on that stream".
func (rs *recordSink) StreamReset(id uint64, code uint64) error {
	s := (*Session)(rs)
	if !s.streams.canRecv(id) {
		return wrongDirection(id)
	}
	st, err := s.streams.lookup(id)
	if err != nil || st == nil {
		return err
	}
	r := &st.recv
	if r.done {
		return nil // the application cancelled or read to the end already
	}
	s.discardLocked(st)
	if !r.cancelled { // a cancelled stream keeps the application's own error
		r.err = &StreamError{StreamID: id, ErrorCode: code, Remote: true, reset: true}
	}
	st.rcond.Broadcast()
	s.recvDoneLocked(st)
	return nil
}

func (rs *recordSink) StreamMaxData(id uint64, limit uint64) error {
	s := (*Session)(rs)
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

// StreamStopSending: RFC 9000 §3.5, "An endpoint that receives a
// STOP_SENDING frame MUST send a RESET_STREAM frame if the stream is in the
// 'Ready' or 'Send' state ... An endpoint SHOULD copy the error code from
// the STOP_SENDING frame to the RESET_STREAM frame it sends".
func (rs *recordSink) StreamStopSending(id uint64, code uint64) error {
	s := (*Session)(rs)
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

func (rs *recordSink) MaxStreams(n uint64) error {
	(*Session)(rs).streams.maxStreamsReceived(bidi, n)
	return nil
}

func (rs *recordSink) MaxUniStreams(n uint64) error {
	(*Session)(rs).streams.maxStreamsReceived(uni, n)
	return nil
}

// wrongDirection is the error of a record for the direction a
// unidirectional stream lacks (RFC 9000's STREAM_STATE_ERROR).
func wrongDirection(id uint64) error {
	return fmt.Errorf("record for the direction unidirectional stream %d does not have", id)
}

var _ wire.RecordHandler = (*recordSink)(nil)
