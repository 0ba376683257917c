package session

import (
	"fmt"
	"os"
	"time"

	"github.com/mpqsched/mpqsched/pkg/wire"
)

// sendState is a stream's send side (RFC 9000 §3.1, collapsed: the session
// retransmits segments, not streams, so a stream is done with sending once
// its end has been framed into the connection byte stream).
type sendState uint8

const (
	sendOpen    sendState = iota // Writes accepted
	sendClosing                  // Close called: the end follows the buffered data
	sendDone                     // the end (FIN) or a RESET has been framed
)

// streamSend is the send side of a stream, guarded by Session.mu.
type streamSend struct {
	state    sendState
	buf      sendBuf // data written and not yet acknowledged (framedq.go); unframed, at most Config.SendBuffer bytes
	framed   uint64  // stream bytes framed into the connection byte stream
	limit    uint64  // the peer admits stream bytes below limit (MAX_STREAM_DATA)
	err      error   // why Writes fail (a cancel by either end)
	code     uint64  // RESET_STREAM code to send
	finEnd   uint64  // connection offset where the frame with its FIN ends (0: no FIN framed)
	deadline time.Time
	timer    *time.Timer
}

func (ss *streamSend) init(window uint64) {
	ss.limit = window
}

// unframed is how many written bytes are not framed yet.
func (ss *streamSend) unframed() int { return int(ss.buf.end - ss.framed) }

func (ss *streamSend) done() bool { return ss.state == sendDone }

// sendable reports whether the framer can take something from the stream.
func (ss *streamSend) sendable() bool {
	switch {
	case ss.state == sendDone:
		return false
	case ss.unframed() > 0:
		return ss.framed < ss.limit
	}
	return ss.state == sendClosing
}

// release stops the stream's send timer. Its buffer keeps the bytes that
// unacknowledged segments refer to, and frees them as those are
// acknowledged (sendBuf.ackedRange); a reset gave them back already.
func (ss *streamSend) release() {
	if ss.timer != nil {
		ss.timer.Stop()
	}
}

// ctlBits are the control frames a stream has to send.
type ctlBits uint8

const (
	ctlReset   ctlBits = 1 << iota // RESET_STREAM with streamSend.code
	ctlStop                        // STOP_SENDING with streamRecv.stopCode
	ctlMaxData                     // MAX_STREAM_DATA with streamRecv.limit
)

// ctrlReserve is the part of what the sender may hold unacknowledged
// (sender.segLimit) that only control frames may use, bytes: segments full
// of data waiting for their Acks must not also hold back the credit
// updates (MAX_STREAM_DATA, MAX_STREAMS) that let the peer's data flow.
// Control frames take no connection credit (RFC 9000 §4.1 counts stream
// bytes), so only this bound applies to them.
const ctrlReserve = 4 << 10

// streamWriteLocked is Stream.Write with s.mu held and the Write's turn
// taken. It waits on st.wgate, with s.mu released, for room in the
// stream's buffer and in the send budgets (stream_budget.go).
func (s *Session) streamWriteLocked(st *Stream, p []byte) (int, error) {
	ss := &st.send
	written := 0
	defer func() {
		st.waitRoom = false
		s.streams.wakeRoomLocked() // pass room this Write leaves on to the next
	}()
	for len(p) > 0 {
		var n int
		for {
			if err := s.writeErrLocked(st); err != nil {
				return written, err
			}
			if free := s.snd.bufCap - ss.unframed(); free > 0 {
				if n = s.streams.reserveLocked(st, min(len(p), free)); n > 0 {
					break
				}
			} else if st.waitRoom {
				// Waiting for its own buffer, not for a budget: another
				// Write may use the room it was woken for.
				st.waitRoom = false
				s.streams.wakeRoomLocked()
			}
			if !ss.deadline.IsZero() && !s.now().Before(ss.deadline) {
				return written, os.ErrDeadlineExceeded
			}
			st.wgate.waitLocked(&s.mu)
			s.handoffs.add()
		}
		ss.buf.write(p[:n])
		countCopyOut(n)
		p = p[n:]
		written += n
		s.streams.markReady(st)
	}
	return written, nil
}

// writeErrLocked is why a Write on st cannot proceed, or nil.
func (s *Session) writeErrLocked(st *Stream) error {
	switch {
	case s.closed:
		return s.closedErrLocked()
	case s.life.state == lifeFlushing:
		return errFlushing
	case st.send.err != nil:
		return st.send.err
	case st.send.state != sendOpen:
		return fmt.Errorf("session: write on closed stream %d", st.id)
	}
	return nil
}

// closeSendLocked queues the stream's end after its buffered data.
func (s *Session) closeSendLocked(st *Stream) {
	if st.send.state != sendOpen {
		return
	}
	st.send.state = sendClosing
	s.sendEndedLocked(st, ErrStreamClosed)
	s.streams.finsPending++
	s.streams.markReady(st)
	st.wgate.signal() // a blocked Write returns what it queued
}

// cancelWriteLocked drops the stream's unsent data and queues a RESET.
func (s *Session) cancelWriteLocked(st *Stream, code uint64, remote bool) {
	ss := &st.send
	if ss.state == sendDone {
		if !remote && ss.err == nil && ss.finEnd > 0 && !s.snd.ackedThrough(ss.finEnd) {
			// "Data Sent": the FIN went out, not all of it is
			// acknowledged. RFC 9000 §3.1: "From any of the "Ready",
			// "Send", or "Data Sent" states, an application can signal
			// that it wishes to abandon transmission of stream data [...]
			// the endpoint sends a RESET_STREAM frame". Acknowledged is
			// judged by the cumulative part of the Acks, so a stream whose
			// data arrived out of order may still be reset: the peer,
			// in "Data Recvd", may ignore it (§3.2). The peer's
			// STOP_SENDING in this state needs no reset ("MAY defer",
			// §3.5), so remote cancels keep doing nothing.
			ss.code = code
			ss.err = &StreamError{StreamID: st.id, ErrorCode: code, Remote: remote}
			ss.buf.drop(ss.framed) // its frames go as PADDING from now on (appendPayload)
			s.sendEndedLocked(st, ss.err)
			s.streams.markCtl(st, ctlReset)
		}
		return
	}
	if ss.state == sendClosing {
		s.streams.finsPending--
	}
	s.streams.unqueueLocked(uint64(ss.unframed()))
	ss.buf.drop(ss.framed)
	ss.state = sendDone
	ss.code = code
	ss.err = &StreamError{StreamID: st.id, ErrorCode: code, Remote: remote}
	s.sendEndedLocked(st, ss.err)
	s.streams.markCtl(st, ctlReset)
	st.wgate.signal()
	s.streams.maybeFree(st)
}

// fillLocked frames stream and control frames (protocol version 5,
// pkg/wire/frame.go) into snd.pend until it holds target bytes or nothing
// more can go: control frames first, then stream data and ends, at most
// one segment's worth per frame, in the streams' priority order
// (readyQueue, stream_prio.go). Each frame is whole within one segment
// (cut), so the receiver can process every segment on arrival. Frames are
// framed only within what the sender may hold unacknowledged (segLimit),
// stream data only below the control reserve, within the peer's stream
// windows and within its connection credit (RFC 9000 §4.1:
// streamSet.connCredit).
func (s *Session) fillLocked(target int) {
	sn := &s.snd
	ss := &s.streams
	for sn.pend.Len() < target {
		off := sn.pendOff + uint64(sn.pend.Len())
		if ss.ctlPending() {
			if !s.frameCtlLocked(off) {
				return // the window is full even for control frames
			}
			continue
		}
		if ss.ready.Len() == 0 {
			return
		}
		st := ss.ready.Front()
		if !st.send.sendable() {
			ss.popReady(false)
			continue
		}
		room := sn.streamRoom(off)
		if target <= int(sn.segSize) {
			// One segment's fill: its frames fill the segment and no more,
			// so that nothing framed is left over for a path it was not
			// framed for (pathfill.go), and the segment goes out full.
			room = min(room, int64(target-sn.pend.Len()))
		}
		if !sn.frameFits(st, room, ss.connCredit()) {
			return
		}
		snd := &st.send
		if snd.unframed() == 0 { // the end alone
			sn.marks.add(off, st)
			sn.appendFrame(wire.AppendStreamFrameHeader(sn.hdr[:0], st.id, snd.framed, 0, true))
			s.finFramedLocked(st)
			continue
		}
		hl := int64(wire.StreamFrameHeaderLen(st.id, snd.framed, int(sn.segSize)))
		n := min(uint64(snd.unframed()), snd.limit-snd.framed, sn.segSize-uint64(hl), uint64(room-hl), ss.connCredit())
		fin := snd.state == sendClosing && n == uint64(snd.unframed())
		sn.marks.add(off, st)
		sn.pend.appendData(off, wire.AppendStreamFrameHeader(sn.hdr[:0], st.id, snd.framed, int(n), fin), st, snd.framed, int(n))
		snd.buf.sent(snd.framed, int(n), fin) // no copy: the path writer copies from the buffer (framedq.go)
		sn.frameEnded()
		s.dataFramedLocked()
		snd.framed += n
		ss.connSent += n // new bytes: a frame is framed once (RFC 9000 §4.1 counts the highest offset sent)
		ss.unqueueLocked(n)
		if free, wake := s.snd.bufCap-snd.unframed(), writeWake(s.snd.bufCap); free >= wake && free-int(n) < wake {
			st.wgate.signal() // a Write waiting for its buffer has room worth a wake-up
		}
		if fin {
			s.finFramedLocked(st)
			continue
		}
		ss.popReady(st.send.sendable())
	}
}

// fillCtlLocked frames the pending control frames into snd.pend until it
// holds target bytes, the peer's window is full, or none is left.
func (s *Session) fillCtlLocked(target int) {
	sn := &s.snd
	for sn.pend.Len() < target && s.streams.ctlPending() {
		if !s.frameCtlLocked(sn.pendOff + uint64(sn.pend.Len())) {
			return
		}
	}
}

// streamFramableLocked reports whether fillLocked would frame stream data
// or an end now: the first ready stream that can send fits within segLimit
// and the peer's connection credit. It drops the ready streams that cannot
// send, as fillLocked does.
func (s *Session) streamFramableLocked() bool {
	sn := &s.snd
	ss := &s.streams
	for ss.ready.Len() > 0 {
		st := ss.ready.Front()
		if !st.send.sendable() {
			ss.popReady(false)
			continue
		}
		return sn.frameFits(st, sn.streamRoom(sn.pendOff+uint64(sn.pend.Len())), ss.connCredit())
	}
	return false
}

// streamRoom is the room for stream frames framed at segment offset off:
// what the sender may hold unacknowledged (segLimit) less the control
// reserve, bytes (negative: none). The peer's connection credit bounds the
// stream data in them apart (streamSet.connCredit).
func (sn *sender) streamRoom(off uint64) int64 {
	return int64(sn.segLimit) - ctrlReserve - int64(off)
}

// frameFits reports whether st's next frame fits in room bytes: its end
// alone when nothing is buffered (a header), else a header and at least a
// byte of data, which the peer's connection credit must allow too (an end
// alone takes none: its final size is what was framed).
func (sn *sender) frameFits(st *Stream, room int64, credit uint64) bool {
	if st.send.unframed() == 0 {
		return room >= int64(wire.StreamFrameHeaderLen(st.id, st.send.framed, 0))
	}
	return credit > 0 && room > int64(wire.StreamFrameHeaderLen(st.id, st.send.framed, int(sn.segSize)))
}

// writeWake is the room in a stream's send buffer of bufCap bytes that
// wakes a Write waiting for it: roomWake (64 KiB), at most a sixteenth of
// the buffer. The framer wakes the Write when the room reaches it, not for
// every frame: a Write larger than the buffer (a bulk upload) was woken
// once per segment, each time to copy one segment's bytes and wait again,
// two goroutine switches and a lock per segment (lockcount_test.go).
func writeWake(bufCap int) int { return min(roomWake, bufCap/16) }

// finFramedLocked is done with st's send side once its FIN is framed.
func (s *Session) finFramedLocked(st *Stream) {
	ss := &s.streams
	s.dataFramedLocked()
	st.send.state = sendDone
	st.send.finEnd = s.snd.pendOff + uint64(s.snd.pend.Len())
	ss.finsPending--
	ss.popReady(false)
	ss.maybeFree(st)
}

// popReady is done with the ready stream the framer took (ready.Front):
// it stays queued if again (readyQueue.done), else it leaves the queue.
func (ss *streamSet) popReady(again bool) {
	if st := ss.ready.done(again); !again {
		st.inReady = false
	}
}

// frameCtlLocked frames the next control frame at segment offset off, if
// segLimit leaves room; it reports whether it did.
func (s *Session) frameCtlLocked(off uint64) bool {
	sn := &s.snd
	ss := &s.streams
	var st *Stream
	var ps *path
	f := sn.hdr[:0]
	var bit ctlBits
	switch {
	case len(ss.statusQ) > 0:
		ps = ss.statusQ[0]
		f = wire.AppendPathStatus(f, uint64(ps.id), ps.statusSeq, ps.backup)
	case ss.peer[bidi].maxDue:
		f = wire.AppendMaxStreams(f, ss.peer[bidi].limit, false)
	case ss.peer[uni].maxDue:
		f = wire.AppendMaxStreams(f, ss.peer[uni].limit, true)
	default:
		st = ss.ctl[0]
		switch {
		case st.ctl&ctlReset != 0:
			// RFC 9000 §19.4: "Final Size: ... the final size of the
			// stream by the RESET_STREAM sender, in units of bytes".
			bit, f = ctlReset, wire.AppendResetStream(f, st.id, st.send.code, st.send.framed)
		case st.ctl&ctlStop != 0:
			bit, f = ctlStop, wire.AppendStopSending(f, st.id, st.recv.stopCode)
		case st.ctl&ctlMaxData != 0:
			bit, f = ctlMaxData, wire.AppendMaxStreamData(f, st.id, st.recv.limit)
		}
	}
	if off+uint64(len(f)) > sn.segLimit {
		return false
	}
	sn.appendFrame(f)
	switch {
	case ps != nil:
		ps.statusQueued = false
		ss.statusQ[0] = nil
		ss.statusQ = ss.statusQ[1:]
	case st == nil && ss.peer[bidi].maxDue:
		ss.peer[bidi].maxDue = false
	case st == nil:
		ss.peer[uni].maxDue = false
	default:
		st.ctl &^= bit
	}
	if st != nil && st.ctl == 0 {
		st.inCtl = false
		ss.ctl[0] = nil
		ss.ctl = ss.ctl[1:]
		if len(ss.ctl) == 0 {
			ss.ctl = ss.ctl[:0:0]
		}
	}
	return true
}

// ctlPending reports whether control records wait to be framed.
func (ss *streamSet) ctlPending() bool {
	return ss.peer[bidi].maxDue || ss.peer[uni].maxDue || len(ss.ctl) > 0 || len(ss.statusQ) > 0
}
