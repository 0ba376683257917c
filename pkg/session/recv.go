package session

import (
	"fmt"
	"time"

	"github.com/mpqsched/mpqsched/pkg/wire"
	"github.com/mpqsched/mpqsched/sched"
)

// receiver is the connection-level receive state, guarded by Session.mu.
type receiver struct {
	window uint64 // RecvWindow, bytes

	next     uint64  // next in-order sequence number
	nextOff  uint64  // connection offset the next in-order segment must start at
	runs     segRuns // segments that arrived ahead of next (their frames processed already)
	ahead    uint64  // bytes of those segments: the sum of runs' offset spans
	buffered uint64  // stream bytes held by the streams' receive buffers, unread (at most the window)

	// Connection flow control, RFC 9000 §4.1 (connflow.go).
	maxData  uint64 // the peer may send stream bytes while counted stays at or below it: Params.MaxData, then the last Ack's MaxData
	counted  uint64 // the sum over the streams of the highest offset received, or the final size
	consumed uint64 // of counted, what the applications read or the session discarded: the credit returned

	// Head-of-line blocking is per stream (protocol version 4): a stream is
	// blocked while it holds bytes behind a gap of its own.
	blocked  int    // streams holding bytes they cannot deliver yet
	gapBytes uint64 // bytes those streams hold past their gaps

	unacked    int       // segments received since the last Ack
	ackEvery   int       // segments that make an Ack due at once
	ackDue     time.Time // when an Ack must go out (zero: none pending)
	lastReqAck time.Time // when the last Ack answering an AckReq was due

	holStart  time.Time // when a stream started holding bytes behind a gap of its own (blocked became non-zero)
	holTotal  time.Duration
	delivered uint64 // bytes delivered in order

	// report interval accumulators
	repStart    time.Time
	repGoodput  uint64
	repOOO      uint64
	repHoL      time.Duration
	repDupBytes uint64
	repArmed    bool // the ack pass saw something received in this interval (reportDueLocked)

	// series
	nextSample  time.Time     // end of the series step in progress
	seriesStep  time.Duration // series step (Config.SeriesInterval, doubled at each compaction)
	sampleBase  uint64        // delivered at the previous sample
	sampleMaxRB uint64        // largest gapBytes since the previous sample
}

func (r *receiver) init(cfg Config, now time.Time) {
	r.window = uint64(cfg.RecvWindow)
	// Ack every 1/8 of the window, between DefaultAckEvery and 4× that many
	// segments: large windows need fewer acks, small ones prompt updates.
	r.ackEvery = min(max(cfg.RecvWindow/(8*cfg.SegmentSize), DefaultAckEvery), 4*DefaultAckEvery)
	r.maxData = InitialWindow // granted in the handshake (streamSet.params); the first Ack grants the window
	r.repStart = now
	r.seriesStep = cfg.SeriesInterval
	if r.seriesStep <= 0 {
		r.seriesStep = DefaultSeriesInterval
	}
	r.nextSample = now.Add(r.seriesStep)
}

// segmentReceivedLocked handles one segment from path p, received at now
// (in a datagram if dgram, which makes an out-of-order one urgent to Ack);
// s.mu is held. The segment's frames are processed at once, whatever its
// place in the sequence: a segment late on a slow path delays only the
// streams whose bytes it carries (RFC 9000 §2.2: "Endpoints MUST be able to
// deliver stream data to an application as an ordered byte stream", per
// stream). It keeps nothing that seg.Payload points to.
func (s *Session) segmentReceivedLocked(p *path, seg wire.Segment, now time.Time, dgram bool) error {
	if s.closed {
		return nil
	}
	s.sample(now, false) // close the series steps that ended before this segment (stats.go)
	r := &s.rcv
	n := uint64(len(seg.Payload))
	p.recvBytes += n
	s.stats.recvBytes += n
	if seg.Seq < r.next || r.runs.has(seg.Seq) {
		s.stats.dupBytes += n
		r.repDupBytes += n
		s.noteAckLocked(now, false)
		return nil
	}
	if err := r.runs.fits(seg.Seq, seg.Offset, n, r.next, r.nextOff); err != nil {
		return err
	}
	inOrder := seg.Seq == r.next
	if inOrder && seg.Offset != r.nextOff {
		return fmt.Errorf("%w: segment %d at offset %d, want %d", ErrProtocol, seg.Seq, seg.Offset, r.nextOff)
	}
	if !inOrder {
		if err := r.runs.insert(seg.Seq, seg.Offset, n); err != nil {
			return err
		}
		r.ahead += n
		s.stats.oooSegments++
		r.repOOO++
	}
	// RFC 9000 §13.2.1 for the datagram transport (dgdata.go), where a
	// missing segment may be lost: an Ack goes without delay for a segment
	// after a gap, and for one below a segment this path already brought
	// (a retransmission that fills a gap), so that the sender learns of both
	// at once. The second is judged per path, as RFC 10069 numbers packets
	// per path: segments of two paths interleave in sequence all the time,
	// and an Ack for each one that came after another path's higher one
	// cost hetero-2path 5% of its goodput (TestDatagramDataNoSpuriousLoss).
	urgent := dgram && (!inOrder || seg.Seq+1 < p.dgTop)
	if dgram {
		p.dgTop = max(p.dgTop, seg.Seq+1)
	}
	if err := s.framesLocked(seg.Payload, now); err != nil {
		return err
	}
	if inOrder {
		r.next++
		r.nextOff += n
		r.delivered += n
		r.repGoodput += n
		if run, ok := r.runs.popFront(r.next); ok {
			r.ahead -= run.endOff - run.off
			r.delivered += run.endOff - run.off
			r.repGoodput += run.endOff - run.off
			r.next, r.nextOff = run.end, run.endOff
		}
	}
	s.noteAckLocked(now, urgent)
	return nil
}

// framesLocked processes a segment's frames (frameSink, stream_recv.go).
func (s *Session) framesLocked(b []byte, now time.Time) error {
	if err := wire.ParseFrames(b, (*frameSink)(s)); err != nil {
		return protocolErr(err)
	}
	r := &s.rcv
	r.sampleMaxRB = max(r.sampleMaxRB, r.gapBytes)
	switch {
	case r.blocked > 0 && r.holStart.IsZero():
		r.holStart = now
	case r.blocked == 0 && !r.holStart.IsZero():
		d := now.Sub(r.holStart)
		r.holTotal += d
		r.repHoL += d
		r.holStart = time.Time{}
	}
	return nil
}

// noteAckLocked schedules an Ack: at once after DefaultAckEvery segments or
// an out-of-order arrival, else within AckDelay.
func (s *Session) noteAckLocked(now time.Time, urgent bool) {
	r := &s.rcv
	r.unacked++
	if urgent || r.unacked >= r.ackEvery {
		r.ackDue = now
		poke(s.ackWake)
		return
	}
	if r.ackDue.IsZero() {
		r.ackDue = now.Add(s.cfg.AckDelay)
		poke(s.ackWake)
	}
}

// buildAckLocked encodes the current acknowledgement state.
func (s *Session) buildAckLocked(buf []byte, a *wire.Ack) []byte {
	r := &s.rcv
	r.maxData = r.nextMaxData()
	a.Cum, a.MaxData = r.next, r.maxData
	a.Ranges = r.runs.appendRanges(a.Ranges[:0])
	r.unacked, r.ackDue = 0, time.Time{}
	return wire.AppendAck(buf, a)
}

// finalAckLocked builds the last Ack and lists the paths to send it on:
// every path, since a peer that misses it retries with AckReqs, which only
// the draining sockets will answer (with the close). The caller sends it
// after releasing s.mu.
func (s *Session) finalAckLocked() ([]byte, []*path) {
	if s.rcv.next == 0 || s.closed {
		return nil, nil
	}
	var a wire.Ack
	b := s.buildAckLocked(nil, &a)
	var ps []*path
	for _, p := range s.slots {
		if p != nil {
			ps = append(ps, p)
		}
	}
	return b, ps
}

// ackPathLocked picks the path for Acks and reports: the lowest-RTT live path
// that received a packet recently, else the one that received most recently.
// A path being joined again (probe.go) is not live here: an Ack on it would
// wait behind quic-go's backed-off probe timer, or be lost if its link went
// dark again (TestRejoiningPathTakesNoAcks).
func (s *Session) ackPathLocked() *path {
	now := s.now()
	var best, recent *path
	var bestRTT time.Duration
	var recentT time.Time
	for _, p := range s.slots {
		if p == nil {
			continue
		}
		v := p.viewLocked(now)
		srtt, last := v.srtt, v.lastRecv
		if recent == nil || last.After(recentT) {
			recent, recentT = p, last
		}
		if p.outLocked() || now.Sub(last) > max(3*srtt, 200*time.Millisecond) {
			continue
		}
		if best == nil || (srtt > 0 && (bestRTT == 0 || srtt < bestRTT)) {
			best, bestRTT = p, srtt
		}
	}
	if best != nil {
		return best
	}
	return recent
}

// reportDueLocked is the receiver reports' timer function: whether a
// report is due at now, and when the next one will be (zero: none until
// something arrives).
//
// A report covers one ReportInterval (reportIntervalLocked: shorter with
// Config.ReportPerMinRTT) in which segments arrived, or in
// which data waited for a missing segment (its head-of-line time is the
// news). An interval in which neither happened is not reported, and no
// timer runs while nothing arrives: an idle session sends no reports. The
// interval that follows an idle one starts at the ack pass's first run
// after data came back (the first segment pokes it at once), not at the
// last report, so that its goodput is not averaged over the idle time.
func (s *Session) reportDueLocked(now time.Time) (due bool, next time.Time) {
	r := &s.rcv
	iv := s.reportIntervalLocked()
	if iv <= 0 {
		return false, time.Time{}
	}
	active := r.repGoodput > 0 || r.repDupBytes > 0 || r.repOOO > 0 || !r.holStart.IsZero()
	if !active {
		r.repArmed = false
		return false, time.Time{}
	}
	if !r.repArmed {
		// The first wake-up of this interval with something received:
		// if the interval began more than one report ago, nothing was
		// received in between, so it begins now.
		r.repArmed = true
		if now.Sub(r.repStart) >= iv {
			r.repStart = now
		}
	}
	end := r.repStart.Add(iv)
	if now.Before(end) {
		return false, end
	}
	r.repArmed = false
	return true, time.Time{} // call again after reportLocked for the next interval's deadline
}

// reportLocked fills rep with the receiver's measurements since the last
// report and starts a new interval.
func (s *Session) reportLocked(now time.Time, rep *wire.Report) *wire.Report {
	r := &s.rcv
	hol := r.repHoL
	if !r.holStart.IsZero() {
		from := r.holStart
		if from.Before(r.repStart) {
			from = r.repStart
		}
		hol += max(0, now.Sub(from))
	}
	*rep = wire.Report{
		IntervalMicros: uint64(max(0, now.Sub(r.repStart)).Microseconds()),
		GoodputBytes:   r.repGoodput,
		OutOfOrder:     r.repOOO,
		ReorderBytes:   r.gapBytes,
		HoLMicros:      uint64(hol.Microseconds()),
		DuplicateBytes: r.repDupBytes,
	}
	for _, p := range s.slots {
		if p != nil && p.id < 8 {
			rep.PathBytes[p.id] = p.recvBytes - p.reportBase
			p.reportBase = p.recvBytes
		}
	}
	r.repStart, r.repGoodput, r.repOOO, r.repHoL, r.repDupBytes = now, 0, 0, 0, 0
	return rep
}

// reportReceivedLocked hands the peer's receiver report, received by now,
// to the scheduler (through the observation queue, delivered by the send
// pass); Session.mu is held. The scheduler takes reports (s.robs): the
// datagram reader posts them only then (datagramReceived).
func (s *Session) reportReceivedLocked(now time.Time, w *wire.Report) {
	rep := sched.ReceiverReport{
		Interval:       time.Duration(w.IntervalMicros) * time.Microsecond,
		GoodputBytes:   w.GoodputBytes,
		PathBytes:      w.PathBytes,
		OutOfOrder:     w.OutOfOrder,
		ReorderBytes:   w.ReorderBytes,
		HoLBlocked:     time.Duration(w.HoLMicros) * time.Microsecond,
		DuplicateBytes: w.DuplicateBytes,
	}
	s.obsReportLocked(now, rep) // delivered by the send pass (obsqueue.go)
}

// ackReqInterval is the least time between two Acks that answer AckReqs.
const ackReqInterval = 5 * time.Millisecond

// ackReqDue answers the peer's AckReq, received at now (its last Ack may
// have been lost; the loop processes it, inbox.go): an Ack is due at once,
// or ackReqInterval after the last one that answered one, so that at most
// one Ack per ackReqInterval answers AckReqs, however many come. An Ack
// already due answers the request too.
func (r *receiver) ackReqDue(now time.Time) {
	if !r.ackDue.IsZero() {
		return
	}
	r.ackDue = max2(now, r.lastReqAck.Add(ackReqInterval))
	r.lastReqAck = r.ackDue
}
