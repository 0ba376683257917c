package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Stream is a reliable, ordered, bidirectional byte stream multiplexed on the
// session, shaped like a quic-go stream (RFC 9000 §2-3). Its ID's two low
// bits say who opened it (0x1: the server) and its direction (0x2:
// unidirectional; see SendStream and ReceiveStream).
//
// Each direction has its own state. The send side is open until Close (the
// peer reads io.EOF after every byte written) or CancelWrite (the peer's
// Read fails with the code); the receive side until Read returned io.EOF or
// an error, or CancelRead. The session forgets a stream once both sides are
// done, whoever opened it; a stream that is neither read to the end nor
// cancelled keeps its share of the receive window.
//
// Flow control is per stream (the peer sends at most the stream's window
// beyond what the application read; see Config.StreamWindow) and per
// connection (Config.RecvWindow). A stream's window is at most
// Config.MaxStreamWindow, two thirds of the connection window, so one
// stream nobody reads leaves at least a third of it to the others. Several
// unread streams hold their windows each: streams never read keep their
// initial window (Config.StreamWindow), and fewer than RecvWindow /
// StreamWindow of them (7 with the defaults) leave the others room; more can
// fill the connection window until the application reads or cancels them
// (CancelRead releases a stream's share at once).
//
// A Stream is a net.Conn (LocalAddr and RemoteAddr are the session's first
// path's); Close ends only the send side. All methods are safe for
// concurrent use; concurrent Reads (or Writes) are served one at a time, in
// no particular order.
type Stream struct {
	s  *Session
	id uint64

	rgate readGate // where Reads take turns and a blocked Read waits (gate.go)
	wgate gate     // where Writes take turns and a blocked Write waits

	// rmu guards recv and rgate's wake channel. Lock order: Session.mu,
	// then rmu. Read holds rmu alone; the loop, which processes the
	// peer's frames, holds both. A field of recv that only the loop
	// writes (all but buf and direct, which Read writes too) may be read
	// with either lock.
	rmu  sync.Mutex
	recv streamRecv // guarded by rmu (see above)
	send streamSend // guarded by s.mu

	ctl       ctlBits // control records to send for this stream
	inReady   bool    // queued in streamSet.ready
	inCtl     bool    // queued in streamSet.ctl
	accepted  bool    // opened locally, or handed to the application by Accept
	forgotten bool    // both sides done: removed from streamSet.byID
	waitRoom  bool    // a Write waits for send-budget room (stream_budget.go)
	inRoomQ   bool    // queued in streamSet.roomQ

	prio streamPrio // priority and scheduling hints (stream_prio.go), guarded by s.mu

	ctx       context.Context         // Context's, made on first use (nil before)
	ctxCancel context.CancelCauseFunc // cancels ctx
	ctxCause  error                   // why the send side ended (nil: open)
}

// StreamError is the error of a stream cancelled by either end: a Read after
// the peer's CancelWrite (RESET_STREAM) or the local CancelRead, a Write
// after the peer's CancelRead (STOP_SENDING) or the local CancelWrite.
type StreamError struct {
	StreamID  uint64 // the stream's ID (RFC 9000 §2.1 numbering)
	ErrorCode uint64 // the application's code, as given to CancelWrite or CancelRead
	Remote    bool   // the peer cancelled
	reset     bool   // a RESET_STREAM (else a STOP_SENDING or a local cancel)
}

// Error describes the cancellation: the stream, the code and which side.
func (e *StreamError) Error() string {
	who := "local"
	if e.Remote {
		who = "remote"
	}
	what := "cancelled"
	if e.reset {
		what = "reset"
	}
	return fmt.Sprintf("session: stream %d %s (%s, code %d)", e.StreamID, what, who, e.ErrorCode)
}

// Is makes errors.Is(err, ErrStreamReset) true for a stream the peer reset.
func (e *StreamError) Is(target error) bool { return target == ErrStreamReset && e.reset && e.Remote }

// ErrStreamLimitReached is returned by OpenStream while the peer's stream
// credit is used up; OpenStreamSync waits for more instead. It does not end
// the session.
var ErrStreamLimitReached = errors.New("session: peer's stream limit reached")

// ID is the stream's identifier within the session.
func (st *Stream) ID() uint64 { return st.id }

// Read reads stream data in order. It returns io.EOF after the peer's end of
// stream, a *StreamError once the stream is cancelled, and
// os.ErrDeadlineExceeded at the read deadline.
//
// Read takes the stream's receive lock (rmu), not Session.mu, except once
// at the end (EOF, or the session's end): the loop credits what it read
// (creditq.go).
func (st *Stream) Read(p []byte) (int, error) {
	g := &st.rgate
	g.enter()
	defer g.leave()
	s := st.s
	st.rmu.Lock()
	r := &st.recv
	for r.buf.readable() == 0 && r.err == nil && !r.buf.eof() && !s.isClosed() {
		if !r.deadline.IsZero() && !s.now().Before(r.deadline) {
			st.rmu.Unlock()
			return 0, os.ErrDeadlineExceeded
		}
		if len(p) > 0 {
			r.direct = p // the next in-order frame may fill it (frameSink.StreamFrame)
		}
		g.wait(&st.rmu)
		s.handoffs.add()
		if n := g.filled.Swap(0); n > 0 {
			return int(n), nil // read and credited by the frame, which gave the slice back
		}
		if f := readWoke; f != nil {
			f(st)
		}
		st.rmu.Lock()
		r.direct = nil // taken back; the frame that filled it meanwhile, if one did, counts below
		if n := g.filled.Swap(0); n > 0 {
			st.rmu.Unlock()
			return int(n), nil
		}
	}
	switch {
	case r.buf.readable() > 0 && r.err == nil:
		n := r.buf.Read(p)
		queue, due := st.readLocked(uint64(n))
		st.rmu.Unlock()
		s.credits.post(st, queue, uint64(n), due)
		return n, nil
	case r.err != nil:
		err := r.err
		st.rmu.Unlock()
		return 0, err
	}
	eof := r.buf.eof()
	st.rmu.Unlock()
	// The end: the stream's last Read, or the session's. Session.mu
	// first, then rmu (the lock order), and the state looked at again.
	s.mu.Lock()
	defer s.mu.Unlock()
	st.rmu.Lock()
	defer st.rmu.Unlock()
	switch {
	case r.err != nil:
		return 0, r.err
	case eof && r.buf.eof():
		s.creditReadLocked(st) // what this stream's earlier Reads read, before it is done
		s.recvDoneLocked(st)
		return 0, io.EOF
	}
	return 0, s.closedErrLocked()
}

// Write queues p for sending. It blocks while the stream's send buffer
// (Config.SendBuffer bytes) is full, or the session's streams buffer
// Config.MaxSendBuffered bytes together, or (on a Listener's session) all
// the Listener's sessions buffer Config.MaxListenerSendBuffered bytes,
// until the write deadline. A Write that Close or a cancellation interrupts
// returns the bytes it queued (they are sent before the stream's end) and
// an error.
func (st *Stream) Write(p []byte) (int, error) {
	st.wgate.enter()
	defer st.wgate.leave()
	s := st.s
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.streamWriteLocked(st, p)
}

// Close ends the stream's send side: the peer reads io.EOF after every byte
// that Writes accepted, whichever goroutine calls Close. It does not wait
// for the data to be sent (Session.Close does).
func (st *Stream) Close() error {
	s := st.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return s.closedErrLocked()
	}
	s.closeSendLocked(st)
	return nil
}

// CancelWrite abandons the send side (RFC 9000 RESET_STREAM): unsent data is
// dropped, blocked and later Writes fail, and the peer's Read fails with a
// *StreamError carrying code. What the peer's application has read stays
// read; what the peer received but its application had not read yet is
// discarded (RFC 9000 §3.2), so the peer may see less than was sent. Once
// the stream's end has gone out it still sends RESET_STREAM while the peer
// has not acknowledged everything up to the end (RFC 9000 §3.1, "Data
// Sent"), and does nothing after that ("Data Recvd") or after an earlier
// cancel.
func (st *Stream) CancelWrite(code uint64) {
	s := st.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cancelWriteLocked(st, code, false)
}

// CancelRead abandons the receive side (RFC 9000 STOP_SENDING): buffered
// and later data is discarded (its window released at once), Reads fail,
// and the peer's Writes fail with a *StreamError carrying code. Only the
// first call counts: a later one sends nothing and keeps the first code.
// Safe for concurrent use.
func (st *Stream) CancelRead(code uint64) {
	s := st.s
	s.mu.Lock()
	defer s.mu.Unlock()
	st.rmu.Lock()
	defer st.rmu.Unlock()
	s.cancelReadLocked(st, code)
}

// CloseRead is CancelRead(0): it discards the stream's unread and future
// data and tells the peer to stop sending.
func (st *Stream) CloseRead() { st.CancelRead(0) }

// SetReadDeadline makes blocked and future Reads fail with
// os.ErrDeadlineExceeded from t on; the zero time clears it.
func (st *Stream) SetReadDeadline(t time.Time) error {
	s := st.s
	s.mu.Lock()
	defer s.mu.Unlock()
	st.rmu.Lock()
	st.recv.deadline = t
	st.rmu.Unlock()
	st.recv.timer = s.rearm(st, st.recv.timer, t, st.signalRead)
	return nil
}

// SetWriteDeadline makes Writes blocked on a full send buffer fail with
// os.ErrDeadlineExceeded from t on; the zero time clears it.
func (st *Stream) SetWriteDeadline(t time.Time) error {
	s := st.s
	s.mu.Lock()
	defer s.mu.Unlock()
	st.send.deadline = t
	st.send.timer = s.rearm(st, st.send.timer, t, st.wgate.signal)
	return nil
}

// SetDeadline sets both deadlines.
func (st *Stream) SetDeadline(t time.Time) error {
	st.SetReadDeadline(t)
	return st.SetWriteDeadline(t)
}

// signalRead wakes st's waiting Read (a deadline timer's wake-up). s.mu is
// held.
func (st *Stream) signalRead() {
	st.rmu.Lock()
	st.rgate.signal()
	st.rmu.Unlock()
}

// rearm stops timer and, for a non-zero t, returns one that calls wake
// (which wakes the waiter of a side of st) at t, with s.mu held. A pending
// timer holds the whole session (its closure), so none is armed for a
// stream the session has forgotten or once the session has ended, and
// maybeFree and wakeAll stop the ones armed before: an ended session is
// never kept until a deadline far ahead (pkg/h3 sets 30 s and 10 s write
// deadlines; issue 30's server memory).
func (s *Session) rearm(st *Stream, timer *time.Timer, t time.Time, wake func()) *time.Timer {
	if timer != nil {
		timer.Stop()
	}
	if t.IsZero() || st.forgotten || s.closed {
		return nil
	}
	return time.AfterFunc(t.Sub(s.now()), func() {
		s.mu.Lock()
		wake()
		s.mu.Unlock()
	})
}

// stopDeadlines stops both deadline timers and drops them (the stream is
// forgotten or the session ended). s.mu held.
func (st *Stream) stopDeadlines() {
	st.recv.timer = st.s.rearm(st, st.recv.timer, time.Time{}, nil)
	st.send.timer = st.s.rearm(st, st.send.timer, time.Time{}, nil)
}

// OpenStream opens a new bidirectional stream without waiting; the peer
// learns of it with its first record. While the peer's stream credit is used
// up it returns ErrStreamLimitReached (OpenStreamSync waits instead). Safe
// for concurrent use.
func (s *Session) OpenStream() (*Stream, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.streams.openLocked(bidi)
}

// OpenStreamSync opens a new bidirectional stream, waiting for the peer's
// stream credit until ctx is done or the session ends. Safe for concurrent
// use; waiting callers get streams in no particular order.
func (s *Session) OpenStreamSync(ctx context.Context) (*Stream, error) {
	return s.openSync(ctx, bidi)
}

// openSync opens a stream of type k, waiting for credit until ctx is done
// or the session ends.
func (s *Session) openSync(ctx context.Context, k int) (*Stream, error) {
	ls := &s.streams.local[k]
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		st, err := s.streams.openLocked(k)
		if !errors.Is(err, ErrStreamLimitReached) {
			return st, err
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		credit := ls.credit.wait()
		s.mu.Unlock()
		select {
		case <-credit: // more credit, or the session ended
		case <-ctx.Done():
		}
		s.handoffs.add()
		s.mu.Lock()
	}
}

// AcceptStream waits for a bidirectional stream opened by the peer, in the
// order of their IDs, until ctx is done or the session ends (streams that
// arrived before the end are still returned). A stream the peer opened
// keeps its share of the peer's stream credit (Config.MaxStreams) until it
// was accepted and both its sides are done, so a peer that opens streams
// faster than the application accepts them waits for credit. Safe for
// concurrent use.
func (s *Session) AcceptStream(ctx context.Context) (*Stream, error) {
	return s.accept(ctx, bidi)
}

// accept waits for a peer stream of type k.
func (s *Session) accept(ctx context.Context, k int) (*Stream, error) {
	ps := &s.streams.peer[k]
	for {
		s.mu.Lock()
		if st := s.streams.acceptLocked(k); st != nil {
			s.mu.Unlock()
			return st, nil
		}
		if s.closed {
			err := s.closedErrLocked()
			s.mu.Unlock()
			return nil, err
		}
		s.mu.Unlock()
		select {
		case <-ps.signal:
		case <-s.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

var _ io.ReadWriteCloser = (*Stream)(nil)
