package session

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mpqsched/mpqsched/pkg/wire"
)

// Stream is a reliable, ordered, bidirectional byte stream multiplexed on the
// session. Streams opened by the client have even IDs, the server's odd.
type Stream struct {
	s  *Session
	id uint64

	// read side, guarded by s.mu
	rbuf   byteQueue
	fin    bool
	reset  bool
	closed bool // CloseRead was called: data is discarded

	eof bool // Read returned io.EOF

	rdeadline time.Time   // zero: none
	rtimer    *time.Timer // wakes blocked readers at rdeadline
	wdeadline time.Time
	wtimer    *time.Timer

	// write side, guarded by s.mu
	wfin bool
}

// maybeFreeLocked forgets a peer-initiated stream once both sides ended.
func (s *Session) maybeFreeLocked(st *Stream) {
	peerInitiated := (st.id%2 == 0) != s.isClient
	if peerInitiated && st.wfin && (st.eof || st.reset || st.closed) && s.streams[st.id] == st {
		delete(s.streams, st.id)
		s.peerStreams--
	}
}

// ID is the stream's identifier within the session.
func (st *Stream) ID() uint64 { return st.id }

// Read reads stream data in order. It returns io.EOF after the peer's
// end of stream.
func (st *Stream) Read(p []byte) (int, error) {
	s := st.s
	s.mu.Lock()
	defer s.mu.Unlock()
	for st.rbuf.Len() == 0 && !st.fin && !st.reset && !s.closed {
		if !st.rdeadline.IsZero() && !time.Now().Before(st.rdeadline) {
			return 0, os.ErrDeadlineExceeded
		}
		s.cond.Wait()
	}
	if st.rbuf.Len() == 0 {
		switch {
		case st.reset:
			return 0, ErrStreamReset
		case st.fin:
			st.eof = true
			s.maybeFreeLocked(st)
			return 0, io.EOF
		}
		return 0, s.closedErrLocked()
	}
	n := st.rbuf.Read(p)
	s.windowReadLocked(uint64(n))
	return n, nil
}

// Write queues p for sending; it blocks while the session's send buffer is
// full, until the write deadline.
func (st *Stream) Write(p []byte) (int, error) {
	st.s.mu.Lock()
	if st.wfin {
		st.s.mu.Unlock()
		return 0, fmt.Errorf("session: write on closed stream %d", st.id)
	}
	st.s.mu.Unlock()
	return st.s.write(st, p, false)
}

// SetReadDeadline makes blocked and future Reads fail with
// os.ErrDeadlineExceeded from t on; the zero time clears it.
func (st *Stream) SetReadDeadline(t time.Time) error {
	s := st.s
	s.mu.Lock()
	defer s.mu.Unlock()
	st.rdeadline = t
	st.rtimer = rearm(st.rtimer, t, s)
	return nil
}

// SetWriteDeadline makes Writes blocked on a full send buffer fail with
// os.ErrDeadlineExceeded from t on; the zero time clears it.
func (st *Stream) SetWriteDeadline(t time.Time) error {
	s := st.s
	s.mu.Lock()
	defer s.mu.Unlock()
	st.wdeadline = t
	st.wtimer = rearm(st.wtimer, t, s)
	return nil
}

// SetDeadline sets both deadlines.
func (st *Stream) SetDeadline(t time.Time) error {
	st.SetReadDeadline(t)
	return st.SetWriteDeadline(t)
}

// rearm stops timer and, for a non-zero t, returns one that wakes every
// waiter of the session at t.
func rearm(timer *time.Timer, t time.Time, s *Session) *time.Timer {
	if timer != nil {
		timer.Stop()
	}
	if t.IsZero() {
		return nil
	}
	return time.AfterFunc(time.Until(t), func() {
		s.mu.Lock()
		s.cond.Broadcast()
		s.mu.Unlock()
	})
}

// Close ends the stream's write side; the peer reads io.EOF after the data.
func (st *Stream) Close() error {
	st.s.mu.Lock()
	if st.wfin {
		st.s.mu.Unlock()
		return nil
	}
	st.wfin = true
	st.s.maybeFreeLocked(st)
	st.s.mu.Unlock()
	_, err := st.s.write(st, nil, true)
	return err
}

// CloseRead discards the stream's unread and future data.
func (st *Stream) CloseRead() {
	s := st.s
	s.mu.Lock()
	defer s.mu.Unlock()
	st.closed = true
	n := st.rbuf.Len()
	st.rbuf = byteQueue{recycle: true}
	s.windowReadLocked(uint64(n))
	s.cond.Broadcast()
}

// OpenStream opens a new stream. The peer learns of it with its first byte.
func (s *Session) OpenStream() (*Stream, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, s.closedErrLocked()
	}
	st := &Stream{s: s, id: s.nextStreamID, rbuf: byteQueue{recycle: true}}
	s.nextStreamID += 2
	s.streams[st.id] = st
	return st, nil
}

// AcceptStream waits for a stream opened by the peer.
func (s *Session) AcceptStream(ctx context.Context) (*Stream, error) {
	select {
	case st := <-s.acceptQ:
		return st, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-s.done:
		select {
		case st := <-s.acceptQ:
			return st, nil
		default:
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		return nil, s.closedErrLocked()
	}
}

// recordSink receives the records of the in-order connection byte stream;
// Session.mu is held.
type recordSink Session

func (rs *recordSink) stream(id uint64) (*Stream, error) {
	s := (*Session)(rs)
	if st := s.streams[id]; st != nil {
		return st, nil
	}
	peerInitiated := (id%2 == 0) != s.isClient
	if !peerInitiated || (s.peerSeen && id <= s.maxPeerStream) {
		return nil, nil // a stream that is gone: drop its data
	}
	if s.peerStreams >= s.cfg.MaxStreams {
		return nil, fmt.Errorf("%w: peer opened more than %d streams", ErrStreamLimit, s.cfg.MaxStreams)
	}
	st := &Stream{s: s, id: id, rbuf: byteQueue{recycle: true}}
	s.streams[id] = st
	s.peerStreams++
	s.peerSeen, s.maxPeerStream = true, id
	s.acceptQ <- st // capacity MaxStreams ≥ peerStreams
	return st, nil
}

func (rs *recordSink) StreamData(id uint64, p []byte) error {
	st, err := rs.stream(id)
	if err != nil || st == nil {
		return err
	}
	s := (*Session)(rs)
	if st.fin || st.reset {
		return fmt.Errorf("data on stream %d after its end", id)
	}
	if st.closed {
		return nil
	}
	st.rbuf.Append(p)
	s.rcv.buffered += uint64(len(p))
	s.cond.Broadcast()
	return nil
}

func (rs *recordSink) StreamFin(id uint64) error {
	st, err := rs.stream(id)
	if err != nil || st == nil {
		return err
	}
	st.fin = true
	(*Session)(rs).cond.Broadcast()
	return nil
}

func (rs *recordSink) StreamReset(id uint64, _ uint64) error {
	st, err := rs.stream(id)
	if err != nil || st == nil {
		return err
	}
	st.reset = true
	(*Session)(rs).cond.Broadcast()
	return nil
}

var _ wire.RecordHandler = (*recordSink)(nil)
var _ io.ReadWriteCloser = (*Stream)(nil)
