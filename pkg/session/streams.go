package session

import (
	"fmt"

	"github.com/mpqsched/mpqsched/pkg/wire"
)

// Stream types: the second-lowest bit of a stream ID (RFC 9000 §2.1: "The
// second least significant bit (0x02) of the stream ID distinguishes
// between bidirectional streams (with the bit set to 0) and unidirectional
// streams (with the bit set to 1)").
const (
	bidi = 0 // bidirectional streams
	uni  = 1 // unidirectional streams
)

// maxStreamWindow is the largest receive window one stream may have on a
// connection whose receive window is recv bytes: two thirds of it (quic-go's
// connection window is 1.5× its stream window). A stream nobody reads holds
// at most its window in the connection's, so at least recv/3 − ctrlReserve
// bytes (17 KiB at the smallest RecvWindow, InitialWindow) stay for the
// other streams: one unread stream never blocks another. Streams that are
// never read keep their initial window (Config.StreamWindow: auto-tuning
// grows a window only as the application reads), so k of them block the
// others only once k × StreamWindow ≥ RecvWindow − ctrlReserve: with the
// defaults (4 MiB, 512 KiB) 7 unread streams leave room, 8 fill the window.
func maxStreamWindow(recv int) int { return recv / 3 * 2 }

// streamSet is the session's table of streams and stream-count credit (RFC
// 9000 §2.1, §3.2 and §4.6), guarded by Session.mu.
//
// Bounds: for each stream type, the peer can open at most its Config limit
// (MaxStreams, MaxUniStreams) of streams that the application has not both
// accepted and finished: a stream's credit comes back only once it was
// accepted and both its sides are done (quic-go's rule). So the table and
// the accept queues hold at most MaxStreams + MaxUniStreams peer-initiated
// streams plus the ones the application opened, and the ready and control
// queues no more than the table.
type streamSet struct {
	s        *Session
	byID     map[uint64]*Stream
	isClient bool

	local [2]localStreams // by type: streams this end opens
	peer  [2]peerStreams  // by type: streams the peer opens

	peerWindow uint64 // the peer's initial window for each stream, bytes
	connMax    uint64 // the peer's connection credit (RFC 9000 §4.1): stream bytes framed for the first time, all streams together, stay below it (Params.MaxData, raised by Acks' MaxData and MAX_DATA frames)
	connSent   uint64 // stream bytes framed for the first time, all streams: the sum of their highest offsets sent
	window     uint64 // Config.StreamWindow: our initial window per stream, bytes
	maxWindow  uint64 // Config.MaxStreamWindow, bytes

	ready   readyQueue // streams with data or an end to send, by priority (stream_prio.go)
	ctl     []*Stream  // streams with control records to send, FIFO
	statusQ []*path    // paths whose status the peer must learn (at most one entry per path)

	queued      uint64 // bytes in every stream's send buffer (at most maxQueued)
	finsPending int    // streams closed whose end has not gone out yet

	// Send-buffer budgets (stream_budget.go).
	maxQueued  uint64      // Config.MaxSendBuffered, bytes
	roomQ      streamFIFO  // streams with a Write waiting for room (at most once each)
	budget     *sendBudget // the Listener's, shared by its sessions; nil for Dial's
	budgetWait bool        // registered in budget.waiting (guarded by Session.mu)
	budgetGone bool        // the session ended and gave its share back
}

// localStreams is the credit for one type of the streams this end opens.
type localStreams struct {
	next   uint64    // index of the next stream we open
	limit  uint64    // we may open indices below it (the peer's credit)
	credit broadcast // wakes OpenStreamSync / OpenUniStreamSync when limit rises or the session ends
}

// peerStreams is the credit and the accept queue for one type of the
// streams the peer opens.
type peerStreams struct {
	next  uint64 // index of the lowest peer stream not yet opened
	limit uint64 // the peer may open indices below it (our credit)
	freed uint64 // streams accepted and done: their credit went back
	max   uint64 // Config.MaxStreams or Config.MaxUniStreams

	// acceptQ holds the streams opened and not yet accepted, in ID order.
	// It grows on demand and holds at most max streams: a stream's credit
	// comes back only after it left the queue.
	acceptQ streamFIFO
	signal  chan struct{} // capacity 1: poked when acceptQ gains a stream
	maxDue  bool          // a MAX_STREAMS record for this type is due
}

func (ss *streamSet) init(s *Session, cfg Config, isClient bool) {
	ss.s = s
	ss.byID = make(map[uint64]*Stream)
	ss.isClient = isClient
	for k, n := range [2]int{cfg.MaxStreams, cfg.MaxUniStreams} {
		ss.peer[k].max = uint64(n)
		ss.peer[k].limit = uint64(n)
		ss.peer[k].signal = make(chan struct{}, 1)
	}
	ss.window = uint64(cfg.StreamWindow)
	ss.maxWindow = uint64(cfg.MaxStreamWindow)
	ss.maxQueued = uint64(cfg.MaxSendBuffered)
}

// params are the grants this end announces in its handshake.
func (ss *streamSet) params() wire.Params {
	// The connection's credit starts at InitialWindow (no RecvWindow is
	// smaller; receiver.init holds the peer to it), and the Ack the
	// session sends as each path opens raises it to the whole RecvWindow
	// half a round trip later (path.go), as version 4 did: granting the
	// whole window in the handshake let PRS put a window's worth on the
	// slow path of rtt10x-256k at once, 11% slower (docs/data-plane.md).
	return wire.Params{MaxStreams: ss.peer[bidi].max, StreamWindow: ss.window, MaxUniStreams: ss.peer[uni].max, MaxData: InitialWindow}
}

// peerParams installs the grants of the peer's handshake.
func (ss *streamSet) peerParams(p wire.Params) {
	ss.local[bidi].limit = p.MaxStreams
	ss.local[uni].limit = p.MaxUniStreams
	ss.peerWindow = p.StreamWindow
	ss.raiseConnMax(p.MaxData)
}

// raiseConnMax raises the peer's connection credit to n, from the
// handshake, an Ack's MaxData or a MAX_DATA frame, and reports whether it
// rose. RFC 9000 §4.1: "A sender MUST ignore any MAX_DATA or
// MAX_STREAM_DATA frames that do not increase flow control limits."
func (ss *streamSet) raiseConnMax(n uint64) bool {
	if n <= ss.connMax {
		return false
	}
	ss.connMax = n
	return true
}

// connCredit is the peer's connection credit left, bytes of new stream
// data (RFC 9000 §4.1).
func (ss *streamSet) connCredit() uint64 {
	if ss.connSent >= ss.connMax {
		return 0
	}
	return ss.connMax - ss.connSent
}

// streamID is the ID of the stream with index i of its type, opened by the
// client (client) or the server, unidirectional (uni) or not (RFC 9000
// §2.1: "The least significant bit (0x01) of the stream ID identifies the
// initiator of the stream. Client-initiated streams have even-numbered
// stream IDs (with the bit set to 0), and server-initiated streams have
// odd-numbered stream IDs").
func streamID(i uint64, client, isUni bool) uint64 {
	id := i << 2
	if !client {
		id |= 1
	}
	if isUni {
		id |= 2
	}
	return id
}

// streamType is bidi or uni, from a stream ID.
func streamType(id uint64) int { return int(id>>1) & 1 }

// local reports whether this end opened stream id.
func (ss *streamSet) isLocal(id uint64) bool { return (id&1 == 0) == ss.isClient }

func (ss *streamSet) newStream(id uint64) *Stream {
	st := &Stream{s: ss.s, id: id}
	st.prio.urgency, st.prio.incremental = DefaultUrgency, true // quic-go's round-robin until the application says otherwise
	st.rgate.init()
	st.wgate.init()
	st.recv.init(ss.window)
	st.send.init(ss.peerWindow)
	if streamType(id) == uni {
		if ss.isLocal(id) {
			st.recv.done = true // send-only
		} else {
			st.send.state = sendDone // receive-only
		}
	}
	ss.byID[id] = st
	return st
}

// openLocked opens a local stream of type k if the peer's credit allows.
func (ss *streamSet) openLocked(k int) (*Stream, error) {
	if ss.s.closed {
		return nil, ss.s.closedErrLocked()
	}
	ls := &ss.local[k]
	if ls.next >= ls.limit {
		return nil, ErrStreamLimitReached
	}
	st := ss.newStream(streamID(ls.next, ss.isClient, k == uni))
	st.accepted = true
	ls.next++
	return st, nil
}

// lookup returns the stream a record names, opening every peer stream of
// its type up to it (RFC 9000 §3.2: "Before a stream is created, all
// streams of the same type with lower-numbered stream IDs MUST be
// created"). It returns nil for a stream already done and forgotten, whose
// late records are dropped.
func (ss *streamSet) lookup(id uint64) (*Stream, error) {
	if st := ss.byID[id]; st != nil {
		return st, nil
	}
	k, idx := streamType(id), id>>2
	if ss.isLocal(id) {
		if idx >= ss.local[k].next {
			return nil, fmt.Errorf("%w: record for stream %d, which this end never opened", ErrProtocol, id)
		}
		return nil, nil
	}
	ps := &ss.peer[k]
	if idx < ps.next {
		return nil, nil
	}
	if idx >= ps.limit {
		return nil, fmt.Errorf("%w: %w: stream %d beyond the %d streams granted", ErrProtocol, ErrStreamLimit, id, ps.limit)
	}
	for ; ps.next <= idx; ps.next++ {
		st := ss.newStream(streamID(ps.next, !ss.isClient, k == uni))
		ps.acceptQ.Push(st) // at most ps.max: see peerStreams.acceptQ
		poke(ps.signal)
	}
	return ss.byID[id], nil
}

// acceptLocked takes the first stream of type k off the accept queue, or
// returns nil. A stream that is done already gives its credit back now.
func (ss *streamSet) acceptLocked(k int) *Stream {
	ps := &ss.peer[k]
	if ps.acceptQ.Len() == 0 {
		return nil
	}
	st := ps.acceptQ.Pop()
	if ps.acceptQ.Len() > 0 {
		poke(ps.signal) // for another goroutine waiting in Accept
	}
	st.accepted = true
	if st.forgotten {
		ss.creditLocked(k)
	}
	return st
}

// maybeFree forgets st once both its sides are done and, for a peer
// stream the application accepted, returns its credit to the peer.
func (ss *streamSet) maybeFree(st *Stream) {
	if !st.send.done() || !st.recv.done || ss.byID[st.id] != st {
		return
	}
	delete(ss.byID, st.id)
	st.forgotten = true // (the receive side's buffer went when it was done: recvDoneLocked)
	st.send.release()
	st.stopDeadlines()
	if ss.isLocal(st.id) || !st.accepted {
		return // an unaccepted stream's credit comes back in acceptLocked
	}
	ss.creditLocked(streamType(st.id))
}

// creditLocked returns one stream of type k to the peer (a MAX_STREAMS
// record once an eighth of the limit came back).
func (ss *streamSet) creditLocked(k int) {
	ps := &ss.peer[k]
	ps.freed++
	if ps.freed+ps.max >= ps.limit+max(1, ps.max/8) {
		ps.limit = ps.freed + ps.max
		ps.maxDue = true
		poke(ss.s.wake)
	}
}

// markReady queues st for the framer if it has something to send.
func (ss *streamSet) markReady(st *Stream) {
	if !st.inReady && !st.prio.parked && st.send.sendable() {
		st.inReady = true
		ss.ready.Push(st)
		poke(ss.s.wake)
	}
}

// markCtl queues control record bits for st.
func (ss *streamSet) markCtl(st *Stream, bits ctlBits) {
	st.ctl |= bits
	if !st.inCtl {
		st.inCtl = true
		ss.ctl = append(ss.ctl, st)
	}
	poke(ss.s.wake)
}

// maxStreamsReceived raises our credit for opening streams of type k.
func (ss *streamSet) maxStreamsReceived(k int, n uint64) {
	if ls := &ss.local[k]; n > ls.limit {
		ls.limit = n
		ls.credit.signal()
	}
}

// wakeAll wakes every blocked stream operation, cancels every stream's
// Context and returns the session's share of the Listener's send budget
// (the session ended).
func (ss *streamSet) wakeAll() {
	ss.returnBudgetLocked()
	err := ss.s.closedErrLocked()
	for _, st := range ss.byID {
		ss.s.sendEndedLocked(st, err)
		st.stopDeadlines() // Reads and Writes fail with err from now on
		st.signalRead()
		st.wgate.signal()
	}
	for k := range ss.local {
		ss.local[k].credit.signal()
	}
}

// Len is the number of streams the session keeps.
func (ss *streamSet) Len() int { return len(ss.byID) }
