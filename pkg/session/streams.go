package session

import (
	"fmt"
	"sync"

	"github.com/mpqsched/mpqsched/pkg/wire"
)

// streamSet is the session's table of streams and stream-count credit (RFC
// 9000 §2.1, §3.2 and §4.6), guarded by Session.mu.
//
// Bounds: the peer can open at most Config.MaxStreams streams that are not
// yet done at a time (its credit grows only as streams end), so the table,
// the accept queue and the ready and control queues hold at most
// Config.MaxStreams peer-initiated streams plus the ones the application
// opened.
type streamSet struct {
	s        *Session
	byID     map[uint64]*Stream
	isClient bool
	acceptQ  chan *Stream // peer streams not yet accepted; capacity Config.MaxStreams
	openCond sync.Cond    // on Session.mu: wakes OpenStreamSync

	// Locally initiated streams.
	nextLocal  uint64 // index (ID/2) of the next stream we open
	localLimit uint64 // we may open indices below it (the peer's credit)
	peerWindow uint64 // the peer's initial window for each stream, bytes

	// Peer-initiated streams.
	nextPeer   uint64 // index of the lowest peer stream not yet opened
	peerLimit  uint64 // the peer may open indices below it (our credit)
	peerFreed  uint64 // peer streams done and forgotten
	maxStreams uint64 // Config.MaxStreams
	window     uint64 // Config.StreamWindow: our initial window per stream, bytes
	maxWindow  uint64 // Config.MaxStreamWindow, bytes

	ready        streamFIFO // streams with data or an end to send, round-robin
	ctl          []*Stream  // streams with control records to send, FIFO
	ctlMaxStream bool       // a MAX_STREAMS record is due
	statusQ      []*path    // paths whose status the peer must learn (at most one entry per path)

	queued      uint64 // bytes in every stream's send buffer
	finsPending int    // streams closed whose end has not gone out yet
}

func (ss *streamSet) init(s *Session, cfg Config, isClient bool) {
	ss.s = s
	ss.byID = make(map[uint64]*Stream)
	ss.isClient = isClient
	ss.acceptQ = make(chan *Stream, cfg.MaxStreams)
	ss.openCond.L = &s.mu
	ss.maxStreams = uint64(cfg.MaxStreams)
	ss.peerLimit = ss.maxStreams
	ss.window = uint64(cfg.StreamWindow)
	ss.maxWindow = uint64(cfg.MaxStreamWindow)
}

// params are the grants this end announces in its handshake.
func (ss *streamSet) params() wire.Params {
	return wire.Params{MaxStreams: ss.maxStreams, StreamWindow: ss.window}
}

// peerParams installs the grants of the peer's handshake.
func (ss *streamSet) peerParams(p wire.Params) {
	ss.localLimit = p.MaxStreams
	ss.peerWindow = p.StreamWindow
}

// streamID is the ID of the stream with index i opened by the client
// (client) or the server.
func streamID(i uint64, client bool) uint64 {
	if client {
		return 2 * i
	}
	return 2*i + 1
}

// local reports whether this end opened stream id.
func (ss *streamSet) local(id uint64) bool { return (id%2 == 0) == ss.isClient }

func (ss *streamSet) newStream(id uint64) *Stream {
	st := &Stream{s: ss.s, id: id}
	st.rcond.L = &ss.s.mu
	st.wcond.L = &ss.s.mu
	st.recv.init(ss.window)
	st.send.init(ss.peerWindow)
	ss.byID[id] = st
	return st
}

// openLocked opens a local stream if the peer's credit allows.
func (ss *streamSet) openLocked() (*Stream, error) {
	if ss.s.closed {
		return nil, ss.s.closedErrLocked()
	}
	if ss.nextLocal >= ss.localLimit {
		return nil, ErrStreamLimitReached
	}
	st := ss.newStream(streamID(ss.nextLocal, ss.isClient))
	ss.nextLocal++
	return st, nil
}

// lookup returns the stream a record names, opening every peer stream up to
// it (RFC 9000 §3.2: "Before a stream is created, all streams of the same
// type with lower-numbered stream IDs MUST be created"). It returns nil for
// a stream already done and forgotten, whose late records are dropped.
func (ss *streamSet) lookup(id uint64) (*Stream, error) {
	if st := ss.byID[id]; st != nil {
		return st, nil
	}
	idx := id / 2
	if ss.local(id) {
		if idx >= ss.nextLocal {
			return nil, fmt.Errorf("%w: record for stream %d, which this end never opened", ErrProtocol, id)
		}
		return nil, nil
	}
	if idx < ss.nextPeer {
		return nil, nil
	}
	if idx >= ss.peerLimit {
		return nil, fmt.Errorf("%w: %w: stream %d beyond the %d streams granted", ErrProtocol, ErrStreamLimit, id, ss.peerLimit)
	}
	for ; ss.nextPeer <= idx; ss.nextPeer++ {
		st := ss.newStream(streamID(ss.nextPeer, !ss.isClient))
		select {
		case ss.acceptQ <- st: // capacity MaxStreams ≥ open peer streams
		default:
			return nil, fmt.Errorf("%w: accept queue full", ErrStreamLimit)
		}
	}
	return ss.byID[id], nil
}

// maybeFree forgets st once both its sides are done and, for a peer
// stream, returns its credit to the peer (a MAX_STREAMS record once an
// eighth of the limit came back).
func (ss *streamSet) maybeFree(st *Stream) {
	if !st.send.done() || !st.recv.done || ss.byID[st.id] != st {
		return
	}
	delete(ss.byID, st.id)
	st.recv.release()
	st.send.release()
	if ss.local(st.id) {
		return
	}
	ss.peerFreed++
	if ss.peerFreed+ss.maxStreams >= ss.peerLimit+max(1, ss.maxStreams/8) {
		ss.peerLimit = ss.peerFreed + ss.maxStreams
		ss.ctlMaxStream = true
		poke(ss.s.wake)
	}
}

// markReady queues st for the framer if it has something to send.
func (ss *streamSet) markReady(st *Stream) {
	if !st.inReady && st.send.sendable() {
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

// maxStreamsReceived raises our credit for opening streams.
func (ss *streamSet) maxStreamsReceived(n uint64) {
	if n > ss.localLimit {
		ss.localLimit = n
		ss.openCond.Broadcast()
	}
}

// wakeAll wakes every blocked stream operation (the session ended).
func (ss *streamSet) wakeAll() {
	for _, st := range ss.byID {
		st.rcond.Broadcast()
		st.wcond.Broadcast()
	}
	ss.openCond.Broadcast()
}

// Len is the number of streams the session keeps.
func (ss *streamSet) Len() int { return len(ss.byID) }
