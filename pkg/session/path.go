package session

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/quicvarint"

	"github.com/mpqsched/mpqsched/pkg/wire"
	"github.com/mpqsched/mpqsched/sched"
)

// path is one subflow: a quic-go connection with one data stream each way.
// Fields below "sender" and "receiver" are guarded by Session.mu.
type path struct {
	id     sched.PathID
	slot   int
	conn   *quic.Conn
	out    *quic.SendStream
	in     *bufio.Reader
	tr     *tracer       // nil: the path reads ConnectionStats and keeps sv (signals.go)
	sv     statsView     // the signals of a path without a tracer, guarded by Session.mu
	pw     pullWriter    // what quic-go's packetizer sees of the writer (pull.go)
	clog   commitLog     // when the limiter passed how many bytes (commitlog.go), guarded by Session.mu
	backup bool          // this end wants the path used only as a backup (guarded by Session.mu)
	early  bool          // server: attached on an early Join before its handshake completed (join_early.go)
	shook  bool          // an early path's handshake has completed (guarded by Session.mu): earlyWindow no longer applies
	notify chan struct{} // pokes the writer

	// Path status (RFC 10069 §3.3-style), guarded by Session.mu.
	statusSeq    uint64 // sequence number of this end's latest status
	statusQueued bool   // in streamSet.statusQ
	peerBackup   bool   // the peer wants the path used only as a backup
	peerSeq      uint64 // 1 + the sequence number of the peer's latest status (0: none)

	// Client side: what rejoining the path needs, and its probing state
	// (guarded by Session.mu; see probe.go).
	qtr    *quic.Transport
	remote net.Addr
	probe  probeState

	// sendDatagram is conn.SendDatagram; it may block (quic-go queues 32
	// datagrams), so it is never called with Session.mu held.
	sendDatagram func([]byte) error

	// sender
	queue         []*segment // handed to the path, not yet taken by its writer
	queuedBytes   uint64     // segment frame bytes (header and payload) in queue
	outstanding   uint64     // segment frame bytes handed to the path and not yet acknowledged by the peer
	bytesSent     uint64     // segment payload bytes handed to the path, copies included
	copiedSent    uint64     // bytesSent when copyAtPTOLocked last copied the path's segments (failure.go)
	ptoCopyAt     time.Time  // when it did
	bytesAcked    uint64
	segsInFlight  uint64
	failed        bool
	failedAt      time.Time
	failedSince   time.Time // when the path last made progress before it failed
	graceUntil    time.Time // no tracer: quic-go's backed-off probe timer after a recovery (failure.go)
	silentHint    time.Time // when the peer last reported the path silent
	sendErrs      *sendErrs // where its socket notes sends that failed for want of a route (senderr.go); nil: none
	lastProgress  time.Time // last connection-level acknowledgement of data this path carried
	firstInFlight uint64    // segments first sent on this path and not yet acknowledged
	firstBusyAt   time.Time // when firstInFlight last rose from 0
	firstAckAt    time.Time // last acknowledgement of a segment first sent on this path
	rate          rateEstimator
	window        sessWindow // on top of quic-go's congestion window (window.go)
	dg            *dgLoss    // Config.DatagramData: the path's segments go in datagrams, and this detects their loss (dgdata.go); nil: its stream

	// receiver
	recvBytes  uint64 // segment payload bytes received on this path
	dgTop      uint64 // 1 + the highest segment number received in a datagram on this path (0: none; recv.go)
	reportBase uint64 // recvBytes at the last report
}

// localAddr and remoteAddr are the path connection's addresses (nil for a
// path without one, as in unit tests).
func (p *path) localAddr() net.Addr {
	if p.conn == nil {
		return nil
	}
	return p.conn.LocalAddr()
}

func (p *path) remoteAddr() net.Addr {
	if p.conn == nil {
		return nil
	}
	return p.conn.RemoteAddr()
}

// rateEstimator is an EWMA of the acknowledged-bytes rate of a path.
type rateEstimator struct {
	start time.Time
	bytes uint64
	bps   float64 // bytes/s
}

func (r *rateEstimator) acked(now time.Time, n uint64, minInterval time.Duration) {
	if r.start.IsZero() {
		r.start = now
	}
	r.bytes += n
	el := now.Sub(r.start)
	if el < minInterval || el <= 0 {
		return
	}
	sample := float64(r.bytes) / el.Seconds()
	if r.bps == 0 {
		r.bps = sample
	} else {
		r.bps = 0.75*r.bps + 0.25*sample
	}
	r.start, r.bytes = now, 0
}

// info fills a scheduler snapshot of the path at now; s.mu is held.
//
// BytesQueued is what the path was handed and quic-go has not yet taken
// (segment frames, pull.go). BytesInFlight is quic-go's with a tracer;
// without one it is the session's estimate (signals.go), and for a path
// that asked for data (pulled: quic-go was packing with room to spare) at
// most the congestion window less one segment, since quic-go asks only
// when it has room for a packet, if r.prime covers it (the session's paths
// that carry data and refill their windows soonest, or whose segment beyond
// the window would wait no longer than the fastest path's one-way delay:
// primeBound) or its
// estimate is stale (quietLocked); for the others the scheduler is asked
// again when their window may have room (primeRetryLocked). A path being
// joined again shows as potentially failed if r says so (snapRules).
func (p *path) info(mss uint64, now time.Time, r snapRules) sched.PathInfo {
	pi, _ := p.infoHeard(mss, now, r)
	return pi
}

// infoHeard is info, and whether the path heard from the peer (or made
// progress) within one probe timeout: no probe timeout would have fired
// since (ptoEstimate), so its RTT still describes it.
func (p *path) infoHeard(mss uint64, now time.Time, r snapRules) (sched.PathInfo, bool) {
	v := p.viewLocked(now)
	pto := p.ptosLocked(now, v)
	if tap := viewTap; tap != nil {
		tap(p, now, v)
	}
	if p.tr == nil && p.dg != nil {
		// Datagrams: what the path took and the peer has neither
		// acknowledged nor been declared to have lost (RFC 9002's
		// bytes_in_flight; dgdata.go). The time-based estimate never
		// falls while nothing comes back, and no pull says the path has
		// room, so a path whose last segments were all lost stayed full.
		v.inflight = p.inflightByAcks()
	}
	if p.tr == nil && p.dg == nil && p.pw.pulled.Load() && v.cwnd > mss && (r.prime.covers(v.srtt, v.cwnd) || p.quietLocked(now, v)) {
		v.inflight = min(v.inflight, v.cwnd-mss)
	}
	if p.early && !p.shook {
		// 0.5-RTT data: at most earlyWindow segments until the handshake
		// completes (join_early.go).
		v.cwnd = min(v.cwnd, earlyWindow*mss)
		v.inflight = max(v.inflight, p.pw.committed.Load())
	}
	return sched.PathInfo{
		ID:                   p.id,
		SmoothedRTT:          v.srtt,
		MinRTT:               v.minRTT,
		LatestRTT:            v.latestRTT,
		RTTVar:               v.rttVar,
		CongestionWindow:     p.window.limit(v.cwnd),
		BytesInFlight:        v.inflight,
		BytesQueued:          p.queued(),
		MSS:                  mss,
		PacketsSent:          v.packetsSent,
		PacketsLost:          v.packetsLost,
		PacketsRetransmitted: v.packetsLost,
		BytesSent:            p.bytesSent,
		BytesAcked:           p.bytesAcked,
		DeliveryRate:         p.rate.bps,
		LossRate:             v.lossRate,
		PTOCount:             v.ptoCount,
		SegmentsInFlight:     p.segsInFlight,
		Backup:               p.backup || p.peerBackup,
		PotentiallyFailed:    p.failed || p.probe.rejoining && r.holdRejoining || p.dg != nil && p.dg.suspectLocked(v), // being replaced (probe.go), or its datagrams' tail lost (dgdata.go)
	}, pto == 0
}

// snapRules is what path.info needs of the session as a whole, computed
// once per snapshot under Session.mu (Session.snapRulesLocked).
type snapRules struct {
	prime primeBound // the pull rule's bound (pull.go)
	// holdRejoining: a path being joined again after an outage is shown
	// potentially failed, so it takes no new segments (probe.go). Only
	// while another path is neither failed nor being joined again: the
	// rejoin's dial may take up to Config.HandshakeTimeout, and holding
	// back the only live path for that long stopped the session, its
	// window updates too (TestSoleRejoiningPathStillCarries).
	holdRejoining bool
}

// allPaths is the snapRules that leaves every path as it is: the pull rule
// on every path that pulled, and a path being joined again not held back.
var allPaths = snapRules{prime: primeAll}

// outLocked reports whether p is out of service: potentially failed, or
// being replaced by a fresh connection after an outage (probe.go). Such a
// path sets no pull-rule bound, carries no Acks, and does not count as the
// live path that lets a rejoining one be held back. Session.mu is held.
func (p *path) outLocked() bool { return p.failed || p.probe.rejoining }

// snapRulesLocked computes the snapRules of s's paths now; Session.mu is
// held.
func (s *Session) snapRulesLocked() snapRules {
	r := snapRules{prime: s.primeBoundLocked()}
	for _, p := range s.slots {
		if p != nil && !p.outLocked() {
			r.holdRejoining = true
			break
		}
	}
	return r
}

// datagramLoop receives Ack and Report frames on one path.
func (s *Session) datagramLoop(p *path) {
	var d datagramDecoder
	for {
		b, err := p.conn.ReceiveDatagram(context.Background())
		if err != nil {
			// The connection is gone; readLoop reports it, except the
			// peer's close of the whole session, decided here once every
			// datagram that came before it (its last Ack) was handled.
			if ae, ok := peerCloseCode(err); ok {
				s.mu.Lock()
				now := s.now()
				if err := s.drainLocked(now); err != nil { // the Acks that came before the close first
					s.closeLocked(err, codeForErr(err))
				}
				s.receivedLocked(now) // and the segments the readers posted (rxbatch.go)
				s.peerClosedLocked(ae)
				s.mu.Unlock()
			}
			return
		}
		if err := s.datagramReceived(p, &d, b); err != nil {
			s.fail(err)
			return
		}
	}
}

// datagramDecoder holds the frames a datagram loop decodes into, and the
// batches it posts the segments in datagrams in (rxbatch.go).
type datagramDecoder struct {
	ack  wire.Ack
	rep  wire.Report
	rx   [rxDepth]*rxBatch // posted in turn
	next int               // the batch to post next, once the loop has taken the last one
	last *rxBatch          // the batch posted last
}

// datagramReceived handles one datagram from the peer; an error is a
// connection error.
func (s *Session) datagramReceived(p *path, d *datagramDecoder, b []byte) error {
	if len(b) == 0 {
		return protocolErr(errors.New("empty datagram"))
	}
	switch b[0] {
	case wire.TypeSegment: // the peer's DatagramData (dgdata.go)
		seg, n, err := wire.ParseSegment(b)
		if err == nil && n != len(b) {
			err = errors.New("a partial or trailing frame")
		}
		if err == nil && p == nil {
			err = errors.New("no path")
		}
		if err != nil {
			return protocolErr(fmt.Errorf("segment datagram: %w", err))
		}
		return s.postDatagramSegment(p, d, seg)
	case wire.TypeAck:
		if err := wire.ParseAck(b, &d.ack); err != nil {
			return protocolErr(err)
		}
		return s.controlArrived(wire.TypeAck, &d.ack, nil, 0)
	case wire.TypeAckReq:
		if len(b) != 1 {
			return protocolErr(errors.New("ack request with a payload"))
		}
		return s.controlArrived(wire.TypeAckReq, nil, nil, 0)
	case wire.TypePing:
		if len(b) != 1 {
			return protocolErr(errors.New("ping with a payload"))
		}
	case wire.TypeSilent:
		id, n, err := quicvarint.Parse(b[1:])
		if err != nil || 1+n != len(b) {
			return protocolErr(errors.New("malformed silence report"))
		}
		return s.controlArrived(wire.TypeSilent, nil, nil, id)
	case wire.TypeAppDatagram:
		return s.appDatagramReceived(b)
	case wire.TypeReport:
		if err := wire.ParseReport(b, &d.rep); err != nil {
			return protocolErr(err)
		}
		if s.robs == nil {
			return nil // no scheduler reads reports
		}
		return s.controlArrived(wire.TypeReport, nil, &d.rep, 0)
	default:
		return protocolErr(errors.New("unknown datagram type"))
	}
	return nil
}

// wrapDatagram, if set (by tests, before any session starts), wraps every
// path's sendDatagram.
var wrapDatagram func(s *Session, send func([]byte) error) func([]byte) error

// attach installs a path whose handshake is complete and starts its
// goroutines. It fails if the session has no free slot.
func (s *Session) attach(p *path) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	slot := -1
	if s.npaths < s.cfg.MaxPaths {
		for i, q := range s.slots {
			if q == nil {
				slot = i
				break
			}
		}
	}
	if slot < 0 {
		s.mu.Unlock()
		return ErrTooManyPaths
	}
	p.slot = slot
	p.notify = make(chan struct{}, 1)
	p.window.init()
	p.pw.init()
	if s.cfg.DatagramData {
		p.dg = new(dgLoss)
	}
	p.sendDatagram = s.tapDatagrams(p, p.conn.SendDatagram)
	if wrapDatagram != nil {
		p.sendDatagram = wrapDatagram(s, p.sendDatagram)
	}
	p.lastProgress = s.now()
	s.slots[slot] = p
	s.npaths++
	if s.npaths == 1 {
		s.keepAddrs(p)
	}
	if len(s.allPaths) < 4*sched.MaxPaths {
		s.allPaths = append(s.allPaths, p)
	}
	s.snd.pathAdded(slot)
	if p.backup {
		s.setStatusLocked(p, true) // the peer's scheduler must know too
	}
	// An Ack as the path opens (on the best path, ackPathLocked): it
	// announces the whole connection credit, of which the handshake
	// granted InitialWindow (streamSet.params). Version 5's first design
	// sent none, and granted the whole window in the handshake; this Ack
	// alone brought rtt10x-256k's PRS from −11% to −4% of version 4's
	// goodput (docs/data-plane.md). What else it does there (an early
	// acknowledgement that the sender's timers and the path's RTT see)
	// was not isolated.
	s.rcv.ackDue = p.lastProgress
	if s.firstConn == nil {
		s.firstConn = p.conn
	}
	s.pathEventLocked(p, PathJoined)
	s.mu.Unlock()
	poke(s.ackWake)
	if p.tr != nil {
		p.tr.setWake(s.wake)
	}
	s.wg.Add(3)
	go func() { defer s.wg.Done(); s.writeLoop(p) }()
	go func() { // nothing is read from an early path before its handshake completes
		defer s.wg.Done()
		if s.awaitHandshake(p, true) {
			s.readLoop(p)
		}
	}()
	go func() {
		defer s.wg.Done()
		if s.awaitHandshake(p, false) {
			s.datagramLoop(p)
		}
	}()
	poke(s.wake)
	return nil
}

// pathGone removes a path whose connection or stream failed.
func (s *Session) pathGone(p *path, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.slots[p.slot] != p {
		return
	}
	if _, ok := peerCloseCode(err); ok {
		// The peer closed the whole session (it removes single paths with
		// codePathRemoved): the path's datagramLoop ends the session once
		// it has handled the datagrams that came before the close.
		return
	}
	s.logf("session %x: path %d gone: %v", s.id[:4], p.id, err)
	s.removeLocked(p, s.now())
	if s.npaths == 0 {
		s.closeLocked(errors.Join(ErrNoPaths, err), codeInternal)
	}
}

// removeLocked takes p out of the session and reinjects its data.
func (s *Session) removeLocked(p *path, now time.Time) {
	s.stats.reinjected += s.reinjectLocked(p, now, false)
	s.snd.pathRemoved(p.slot)
	s.slots[p.slot] = nil
	s.npaths--
	s.keepAddrs(p)
	s.pathEventLocked(p, PathRemoved)
	p.queue = nil
	poke(p.notify)
	poke(s.wake)
	c := p.conn
	go closeConn(c, codePathRemoved, "path removed")
}

// RemovePath closes the path with the given ID; its unacknowledged data is
// sent again on the other paths.
func (s *Session) RemovePath(id sched.PathID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.slots {
		if p != nil && p.id == id {
			s.removeLocked(p, s.now())
			if s.npaths == 0 {
				s.closeLocked(ErrNoPaths, codeNoError)
			}
			return nil
		}
	}
	return ErrNoSuchPath
}

// Paths returns the IDs of the session's current paths, in slot order. Once
// the session has ended (either end closed it, or every path failed), it
// returns the paths the session had when it ended. Safe for concurrent use.
func (s *Session) Paths() []sched.PathID {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return slices.Clone(s.endPaths)
	}
	var ids []sched.PathID
	for _, p := range s.slots {
		if p != nil {
			ids = append(ids, p.id)
		}
	}
	return ids
}
