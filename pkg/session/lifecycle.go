package session

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/quic-go/quic-go"
)

// A session's life (issue 19, "the lifecycle as one state machine"):
//
//	open ──Close──▶ flushing ──acknowledged, or CloseTimeout──▶ closing
//	open, flushing ──CloseWithError/an error──▶ closing ──drain period──▶ closed
//	open, flushing ──the peer closed the session──▶ draining ─drain period──▶ closed
//
// Every change goes through setStateLocked, under s.mu. Flushing is
// Close's wait for what the application wrote to be acknowledged (issue
// 30): streams take no new data then (Write fails with ErrClosed, as a
// quic-go stream's once its connection closed), while paths may still
// join and everything else goes on. Leaving open or flushing for closing
// or draining happens once, in closeLocked: it records the
// error, closes Done, cancels the session's context (so an AddPath dialling
// or a rejoin in progress gives up at once), closes every path connection
// and takes the set of transports the session owns. Those transports (and
// their sockets) stay open for the drain period, three PTOs of the slowest
// path within [minDrain, maxDrain], so that quic-go answers a peer whose
// copy of the CONNECTION_CLOSE was lost (RFC 9000 §10.2.1-2); then they are
// closed and the session is closed. A transport registered while the
// session is no longer open is refused (own), so none is left behind.
type lifeState uint8

const (
	lifeOpen     lifeState = iota
	lifeFlushing           // Close waits for what was written to be acknowledged; streams take no new data
	lifeClosing            // this end closed; its sockets answer with its CONNECTION_CLOSE until the drain ends
	lifeDraining           // the peer closed; the sockets stay until the drain ends
	lifeClosed             // every socket the session owned is closed
)

// lifecycle is the session's life state; every field is guarded by
// Session.mu except ctx, which is set once in newSession.
type lifecycle struct {
	state  lifeState
	ctx    context.Context // cancelled when the session leaves open; its cause is the close error (ErrClosed after a clean close)
	cancel context.CancelCauseFunc
	owned  map[*quic.Transport]struct{} // client side: transports (and sockets) to close; at most MaxPaths plus those joining
	// dataEnd is the connection offset just past the last stream data or
	// stream end framed: acknowledging everything below it acknowledges
	// all the application wrote (finding 3).
	dataEnd uint64
}

// setStateLocked moves the session's life to state to, if the diagram
// above allows it from the current state, and reports whether it did; the
// only place the state changes. s.mu is held.
func (s *Session) setStateLocked(to lifeState) bool {
	from := s.life.state
	var ok bool
	switch to {
	case lifeFlushing:
		ok = from == lifeOpen
	case lifeClosing, lifeDraining:
		ok = from == lifeOpen || from == lifeFlushing
	case lifeClosed:
		ok = from == lifeClosing || from == lifeDraining
	}
	if ok {
		s.life.state = to
	}
	return ok
}

// errFlushing is what a Write gets while Close waits for acknowledgements.
var errFlushing = fmt.Errorf("%w: Close is waiting for what was written to be acknowledged", ErrClosed)

func (lc *lifecycle) init() {
	lc.ctx, lc.cancel = context.WithCancelCause(context.Background())
	lc.owned = make(map[*quic.Transport]struct{})
}

// own registers a transport the session must close, or returns ErrClosed
// (and registers nothing) once the session is no longer open: the caller
// then closes it itself. Finding 2 of issue 19: a transport registered
// after closing began was never closed.
func (s *Session) own(tr *quic.Transport) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.life.state > lifeFlushing { // a path may still join while Close waits
		return ErrClosed
	}
	s.life.owned[tr] = struct{}{}
	return nil
}

// disown closes a transport the session no longer needs (a failed dial),
// unless closing already took it, in which case the drain closes it. s.mu
// must not be held.
func (s *Session) disown(tr *quic.Transport) {
	s.mu.Lock()
	_, ok := s.life.owned[tr]
	delete(s.life.owned, tr)
	s.mu.Unlock()
	if ok {
		closeTransport(tr)
	}
}

// Context returns a context that is cancelled when the session ends. Its
// cause (context.Cause) is why: the error Err returns, or ErrClosed after
// a clean Close (or a clean close by the peer). Safe for concurrent use.
func (s *Session) Context() context.Context { return s.life.ctx }

// withLife returns ctx, also cancelled when the session ends (with
// ErrClosed as the cause), and its cancel function.
func (s *Session) withLife(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(s.life.ctx, func() { cancel(ErrClosed) })
	return ctx, func() { stop(); cancel(nil) }
}

// abort ends the session at once with one of the session's own errors and
// waits for its goroutines.
func (s *Session) abort(err error) {
	s.mu.Lock()
	s.closeLocked(err, codeInternal)
	s.mu.Unlock()
	s.waitClosed()
}

// waitClosed waits, after closeLocked, for the session's goroutines and for
// the log messages queued so far. s.mu must not be held.
func (s *Session) waitClosed() {
	s.wg.Wait()
	s.log.wait()
}

// isClosed reports whether the session has ended (closeLocked closed
// s.done), without Session.mu: for callers that do not hold it, as
// Stream.Read, which holds only its stream's lock.
func (s *Session) isClosed() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// closeLocked ends the session: open → closing (or draining, if the peer
// closed it first; see peerClosedLocked). Path connections are closed from
// a goroutine so that no quic-go call happens under s.mu. A local
// *ApplicationError goes to the peer as codeApplication (closeerr.go);
// other errors with code and their text as the reason.
func (s *Session) closeLocked(err error, code quic.ApplicationErrorCode) {
	if s.closed {
		return
	}
	if err != nil {
		s.logf("session %x: closing: %v", s.id[:4], err)
	}
	s.closed = true
	s.closeErr = err
	s.setStateLocked(lifeClosing) // unless peerClosedLocked made it draining
	cause := err
	if cause == nil {
		cause = ErrClosed
	}
	s.life.cancel(cause)
	s.sample(s.now(), true)
	close(s.done)
	s.closeWait.signal()
	s.streams.wakeAll()
	var conns []*quic.Conn
	var pto time.Duration
	for i, p := range s.slots {
		if p != nil {
			conns = append(conns, p.conn)
			s.endPaths = append(s.endPaths, p.id)
			s.slots[i] = nil
			s.keepAddrs(p)
			s.pathEventLocked(p, PathRemoved)
			srtt, rttVar := p.rttLocked()
			pto = max(pto, srtt+max(4*rttVar, time.Millisecond)+maxAckDelay)
		}
	}
	s.npaths = 0
	s.closeEventsLocked()
	owned := make([]*quic.Transport, 0, len(s.life.owned))
	for t := range s.life.owned {
		owned = append(owned, t)
	}
	s.life.owned = nil
	msg := "closed"
	var ae *ApplicationError
	switch {
	case errors.As(err, &ae) && !ae.Remote:
		code, msg = codeApplication, appCloseReason(ae)
	case err != nil:
		msg = err.Error()
	case code == codeNoError:
		msg = cleanCloseReason(s.rcv.next)
	}
	drain := min(max(3*pto, minDrain), maxDrain)
	go func() {
		for _, c := range conns {
			closeConn(c, code, msg)
		}
		// RFC 9000 §10.2.1: a closing endpoint answers the peer's packets
		// with its CONNECTION_CLOSE for three PTOs, which quic-go does only
		// while the Transport runs. Closing the sockets at once would
		// leave a peer whose copy of the close was lost (and maybe the
		// final Ack too) waiting for its idle timeout.
		// A timer, not a sleeping goroutine: a synctest bubble may end
		// (its emulator closed, which stops the Transports) before it fires.
		time.AfterFunc(drain, func() {
			for _, t := range owned {
				closeTransport(t)
			}
			s.mu.Lock()
			s.setStateLocked(lifeClosed)
			s.mu.Unlock()
		})
	}()
}

// peerClosedLocked ends the session because the peer closed it (ae, a
// remote close with codeNoError or codeApplication): open → draining.
//
// Finding 3 of issue 19: "after the peer closes gracefully, Close() and
// Err() return nil, though only 28,800 of 819,200 bytes that Write
// accepted were acknowledged". A clean close by the peer is a clean end
// only if everything this end wrote was acknowledged; otherwise Err, Close
// and every blocked stream call return ErrUnacknowledged with the count.
func (s *Session) peerClosedLocked(ae *quic.ApplicationError) {
	if s.closed {
		return
	}
	var err error
	if ae.ErrorCode == codeApplication {
		err = parseAppClose(ae.ErrorMessage)
	} else if n := s.unackedBytesLocked(receivedBelow(ae.ErrorMessage, s.snd.nextSeq)); n > 0 || s.streams.finsPending > 0 {
		err = fmt.Errorf("%w: %d bytes this end wrote were never acknowledged", ErrUnacknowledged, n)
	}
	s.setStateLocked(lifeDraining)
	s.closeLocked(err, codeNoError)
}

// ErrUnacknowledged is the peer closing the session cleanly while data this
// end wrote was not acknowledged yet: the error tells how many bytes.
var ErrUnacknowledged = errors.New("session: closed by peer with data unacknowledged")

// dataFramedLocked records that stream data or a stream's end was just
// framed into snd.pend: everything up to its end is data the application
// wrote (fillLocked calls it).
func (s *Session) dataFramedLocked() {
	s.life.dataEnd = s.snd.pendOff + uint64(s.snd.pend.Len())
}

// writtenAckedLocked reports whether the peer acknowledged everything the
// application wrote: no stream data or stream end waits to be framed, and
// no connection byte up to the end of the last data framed (dataEnd) is
// unacknowledged (unackedBytesLocked). Close waits for this, not for the
// control records framed after the last data (window updates, MAX_STREAMS,
// STOP_SENDING, path status, resets): they matter only while the session
// lives, and quic-go's own Close does not wait for its MAX_STREAM_DATA
// frames either. Waiting for them made Close wait out a path's failure for
// a window update sent just before its link went dark
// (TestCloseDoesNotWaitForWindowUpdates, TestCloseCancelsRejoin).
func (s *Session) writtenAckedLocked() bool {
	return s.streams.finsPending == 0 && s.unackedBytesLocked(0) == 0
}

// unackedBytesLocked counts the bytes the application wrote that the peer
// has not acknowledged: those still in stream buffers, plus the connection
// bytes (stream data with its framing, and the control records among it)
// up to the end of the last data framed that are not acknowledged. It is
// at most SendBuffer per stream plus MaxUnackedBytes.
//
// Segments below seq rcvd count as acknowledged: the peer's clean close
// said it received them all (cleanCloseReason), even if its last Ack was
// lost.
func (s *Session) unackedBytesLocked(rcvd uint64) uint64 {
	sn := &s.snd
	end := s.life.dataEnd
	n := s.streams.queued
	if end > sn.pendOff {
		n += end - sn.pendOff
	}
	for q := sn.base; q < sn.nextSeq; q++ {
		if g := sn.get(q); g != nil && !g.acked && g.off < end && q >= rcvd {
			n += min(g.off+g.size, end) - g.off
		}
	}
	return n
}
