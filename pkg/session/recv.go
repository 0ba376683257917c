package session

import (
	"fmt"
	"sync"
	"time"

	"github.com/mpqsched/mpqsched/pkg/wire"
	"github.com/mpqsched/mpqsched/sched"
)

// receiver is the connection-level receive state, guarded by Session.mu.
type receiver struct {
	window     uint64 // RecvWindow, bytes
	maxReorder int    // cap on buffered out-of-order segments

	next     uint64            // next in-order sequence number
	nextOff  uint64            // connection offset the next in-order segment must start at
	reorder  map[uint64][]byte // out-of-order segments by sequence number, with their offsets in ooff
	ooff     map[uint64]uint64
	maxBuf   uint64 // highest sequence number in reorder (meaningful while it is not empty)
	held     uint64 // bytes in reorder
	buffered uint64 // bytes delivered to streams and not yet read
	limit    uint64 // largest window limit advertised
	parser   wire.RecordParser

	unacked  int       // segments received since the last Ack
	ackEvery int       // segments that make an Ack due at once
	ackDue   time.Time // when an Ack must go out (zero: none pending)
	advLimit uint64    // limit in the last Ack sent

	holStart  time.Time // when data started waiting for a missing segment
	holTotal  time.Duration
	delivered uint64 // bytes delivered in order

	// report interval accumulators
	repStart    time.Time
	repGoodput  uint64
	repOOO      uint64
	repHoL      time.Duration
	repDupBytes uint64

	// series
	nextSample  time.Time     // end of the series step in progress
	seriesStep  time.Duration // series step (Config.SeriesInterval, doubled at each compaction)
	sampleBase  uint64        // delivered at the previous sample
	sampleMaxRB uint64        // largest reorder occupancy since the previous sample
}

func (r *receiver) init(cfg Config, now time.Time) {
	r.window = uint64(cfg.RecvWindow)
	// Ack every 1/8 of the window, between DefaultAckEvery and 4× that many
	// segments: large windows need fewer acks, small ones prompt updates.
	r.ackEvery = min(max(cfg.RecvWindow/(8*cfg.SegmentSize), DefaultAckEvery), 4*DefaultAckEvery)
	r.maxReorder = 1 << 16
	r.reorder = make(map[uint64][]byte)
	r.ooff = make(map[uint64]uint64)
	r.limit = InitialWindow
	r.repStart = now
	r.seriesStep = cfg.SeriesInterval
	if r.seriesStep <= 0 {
		r.seriesStep = DefaultSeriesInterval
	}
	r.nextSample = now.Add(r.seriesStep)
}

// currentLimit is the window limit the receiver can grant now.
func (r *receiver) currentLimit() uint64 {
	l := r.nextOff + r.window - min(r.buffered, r.window)
	return max(l, r.limit)
}

// segmentReceived handles one segment from path p.
func (s *Session) segmentReceived(p *path, seg wire.Segment) error {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	r := &s.rcv
	n := uint64(len(seg.Payload))
	p.recvBytes += n
	s.stats.recvBytes += n
	if seg.Offset+n > r.limit {
		return fmt.Errorf("%w: segment %d ends at offset %d beyond the window limit %d", ErrProtocol, seg.Seq, seg.Offset+n, r.limit)
	}
	if seg.Seq < r.next || r.reorder[seg.Seq] != nil {
		s.stats.dupBytes += n
		r.repDupBytes += n
		s.noteAckLocked(now, false)
		return nil
	}
	if seg.Seq != r.next {
		if seg.Offset < r.nextOff || seg.Seq-r.next > seg.Offset-r.nextOff {
			return fmt.Errorf("%w: segment %d at offset %d is inconsistent with segment %d at offset %d", ErrProtocol, seg.Seq, seg.Offset, r.next, r.nextOff)
		}
		if len(r.reorder) >= r.maxReorder {
			return fmt.Errorf("%w: more than %d out-of-order segments", ErrProtocol, r.maxReorder)
		}
		r.reorder[seg.Seq] = append(getSegBuf(len(seg.Payload)), seg.Payload...)
		r.ooff[seg.Seq] = seg.Offset
		r.maxBuf = max(r.maxBuf, seg.Seq)
		r.held += n
		r.sampleMaxRB = max(r.sampleMaxRB, r.held)
		s.stats.oooSegments++
		r.repOOO++
		if r.holStart.IsZero() {
			r.holStart = now
		}
		s.noteAckLocked(now, false)
		return nil
	}
	if seg.Offset != r.nextOff {
		return fmt.Errorf("%w: segment %d at offset %d, want %d", ErrProtocol, seg.Seq, seg.Offset, r.nextOff)
	}
	s.sample(now, false) // close the series steps that ended before these bytes
	if err := s.deliverLocked(seg.Payload); err != nil {
		return err
	}
	for {
		b, ok := r.reorder[r.next]
		if !ok {
			break
		}
		off := r.ooff[r.next]
		delete(r.reorder, r.next)
		delete(r.ooff, r.next)
		r.held -= uint64(len(b))
		if off != r.nextOff {
			return fmt.Errorf("%w: segment %d at offset %d, want %d", ErrProtocol, r.next, off, r.nextOff)
		}
		err := s.deliverLocked(b)
		putSegBuf(b)
		if err != nil {
			return err
		}
	}
	if len(r.reorder) == 0 && !r.holStart.IsZero() {
		d := now.Sub(r.holStart)
		r.holTotal += d
		r.repHoL += d
		r.holStart = time.Time{}
	}
	s.noteAckLocked(now, false)
	return nil
}

// deliverLocked passes the in-order segment b to the record parser.
func (s *Session) deliverLocked(b []byte) error {
	r := &s.rcv
	r.next++
	r.nextOff += uint64(len(b))
	r.delivered += uint64(len(b))
	r.repGoodput += uint64(len(b))
	if err := r.parser.Feed(b, (*recordSink)(s)); err != nil {
		return fmt.Errorf("%w: %w", ErrProtocol, err)
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

// windowReadLocked credits n bytes read by the application; a large enough
// credit triggers a window update.
func (s *Session) windowReadLocked(n uint64) {
	r := &s.rcv
	r.buffered -= n
	if r.currentLimit() >= r.advLimit+r.window/4 {
		r.ackDue = s.now()
		poke(s.ackWake)
	}
}

// buildAckLocked encodes the current acknowledgement state.
func (s *Session) buildAckLocked(buf []byte, a *wire.Ack) []byte {
	r := &s.rcv
	r.limit = r.currentLimit()
	a.Cum, a.Limit = r.next, r.limit
	a.Ranges = a.Ranges[:0]
	if len(r.reorder) > 0 {
		// SACK ranges from the lowest buffered segment up.
		q := r.next + 1
		for q <= r.maxBuf && len(a.Ranges) < wire.MaxAckRanges {
			if r.reorder[q] == nil {
				q++
				continue
			}
			start := q
			for r.reorder[q] != nil {
				q++
			}
			a.Ranges = append(a.Ranges, wire.Range{Start: start, End: q})
		}
	}
	r.unacked, r.ackDue, r.advLimit = 0, time.Time{}, r.limit
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
func (s *Session) ackPathLocked() *path {
	now := s.now()
	var best, recent *path
	var bestRTT time.Duration
	var recentT time.Time
	for _, p := range s.slots {
		if p == nil {
			continue
		}
		p.tr.mu.Lock()
		srtt, last := p.tr.srtt, p.tr.lastRecv
		p.tr.mu.Unlock()
		if recent == nil || last.After(recentT) {
			recent, recentT = p, last
		}
		if p.failed || now.Sub(last) > max(3*srtt, 200*time.Millisecond) {
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

// ackLoop sends Acks when due and receiver reports every ReportInterval.
func (s *Session) ackLoop() {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var a wire.Ack
	var rep wire.Report
	var buf []byte
	for {
		select {
		case <-s.ackWake:
		case <-timer.C:
		case <-s.done:
			return
		}
		s.mu.Lock()
		now := s.now() // under the lock: no event of the state read below is later
		if s.closed {
			s.mu.Unlock()
			return
		}
		var ack, report []byte
		var p *path
		r := &s.rcv
		if !r.ackDue.IsZero() && !now.Before(r.ackDue) {
			buf = s.buildAckLocked(buf[:0], &a)
			ack = buf
		}
		if s.cfg.ReportInterval > 0 && now.Sub(r.repStart) >= s.cfg.ReportInterval && r.delivered > 0 {
			report = wire.AppendReport(nil, s.reportLocked(now, &rep))
		}
		if ack != nil || report != nil {
			p = s.ackPathLocked()
		}
		next := r.ackDue
		if s.cfg.ReportInterval > 0 && r.delivered > 0 {
			if t := r.repStart.Add(s.cfg.ReportInterval); next.IsZero() || t.Before(next) {
				next = t
			}
		}
		s.mu.Unlock()
		if p != nil {
			if ack != nil {
				_ = p.sendDatagram(ack)
			}
			if report != nil {
				_ = p.sendDatagram(report)
			}
		}
		if !next.IsZero() {
			timer.Reset(max(next.Sub(s.now()), 100*time.Microsecond))
		}
	}
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
		ReorderBytes:   r.held,
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

// reportReceived hands the peer's receiver report to the scheduler.
func (s *Session) reportReceived(w *wire.Report) {
	if s.robs == nil {
		return
	}
	rep := sched.ReceiverReport{
		Interval:       time.Duration(w.IntervalMicros) * time.Microsecond,
		GoodputBytes:   w.GoodputBytes,
		PathBytes:      w.PathBytes,
		OutOfOrder:     w.OutOfOrder,
		ReorderBytes:   w.ReorderBytes,
		HoLBlocked:     time.Duration(w.HoLMicros) * time.Microsecond,
		DuplicateBytes: w.DuplicateBytes,
	}
	s.mu.Lock()
	s.robs.ReceiverReport(s.now(), rep)
	s.mu.Unlock()
	poke(s.wake)
}

// ackRequested answers the peer's AckReq: its last Ack may have been lost.
func (s *Session) ackRequested() {
	s.mu.Lock()
	s.rcv.ackDue = s.now()
	s.mu.Unlock()
	poke(s.ackWake)
}

// segBufPool recycles the buffers of out-of-order segments (most segments,
// on heterogeneous paths).
var segBufPool = sync.Pool{New: func() any { b := make([]byte, 0, segBufCap); return &b }}

const segBufCap = 2048 // bytes: a default segment and its slack

func getSegBuf(n int) []byte {
	if n > segBufCap {
		return make([]byte, 0, n)
	}
	return (*segBufPool.Get().(*[]byte))[:0]
}

func putSegBuf(b []byte) {
	if cap(b) == segBufCap {
		b = b[:0]
		segBufPool.Put(&b)
	}
}
