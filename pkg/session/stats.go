package session

import (
	"net"
	"time"

	"github.com/mpqsched/mpqsched/sched"
)

// counters are the session-wide totals, guarded by Session.mu.
type counters struct {
	sentBytes       uint64 // segment payload bytes sent on all paths, copies included
	redundantBytes  uint64 // bytes sent beyond each segment's first transmission
	retransSegments uint64 // segments sent again after loss or reinjection
	dgLost          uint64 // segments declared lost on datagram paths (dgdata.go)
	reinjected      uint64 // segments queued again because their path failed or left
	ptoCopies       uint64 // segments queued to go again on other paths after their path's probe timeout (failure.go)
	opportunistic   uint64 // copies sent by opportunistic reinjection
	pathFailures    uint64 // times a path was marked potentially failed
	recvBytes       uint64 // segment payload bytes received, duplicates included
	dupBytes        uint64 // bytes received more than once
	oooSegments     uint64 // segments that arrived out of order
	maxReorder      uint64 // peak reorder-buffer occupancy, bytes
	ackRequests     uint64 // AckReqs sent (acks presumed lost)
	pings           uint64 // pings sent on silent paths (client)
	probeAnswers    uint64 // path probes answered (client; probe_udp.go)
	penalised       uint64 // session-window halvings of paths that held up the peer's window
	ccCuts          uint64 // coupled-window reductions on loss events
	ccUndos         uint64 // coupled-window reductions undone (the loss was spurious)
	ccAcked         uint64 // bytes acknowledged on paths whose coupled window is in force
	ccGoverned      uint64 // of those, bytes acknowledged while the coupled window was below quic-go's
	rejoins         uint64 // paths joined again after an outage (client)
	passedOver      uint64 // streams passed over for a segment on a slower path (pathfill.go)
}

// PathStats is one path's share of a session's traffic.
type PathStats struct {
	ID                sched.PathID  // the path's ID (Session.Paths)
	Backup            bool          // the path is a backup (SetPathStatus, PathOptions.Backup)
	PotentiallyFailed bool          // the path made no progress for several RTOs; its data is being reinjected
	BytesSent         uint64        // segment payload bytes sent, copies included
	BytesAcked        uint64        // of those, bytes acknowledged
	BytesReceived     uint64        // segment payload bytes received from the peer
	PacketsSent       uint64        // QUIC 1-RTT packets sent (with no tracer, Stats.Traced false: every QUIC packet sent, the handshake's included)
	PacketsLost       uint64        // QUIC packets declared lost (quic-go re-sends their data on this path)
	SmoothedRTT       time.Duration // latest smoothed RTT
	CongestionWindow  uint64        // latest congestion window, bytes (quic-go's, or the session window if smaller)
	LocalAddr         net.Addr      // this end's address on the path (a path joined again after an outage keeps it)
	RemoteAddr        net.Addr      // the peer's address on the path
}

// Stats is a snapshot of what a session measured, sender and receiver side.
type Stats struct {
	Scheduler string        // the scheduler's name
	Traced    bool          // the path connections carry a qlog tracer: Config.QlogDir, a coupled congestion control, or a scheduler that needs per-ACK signals (otherwise quic-go's ConnectionStats and the session's own accounting give the signals)
	Elapsed   time.Duration // since the session started

	// Sender.
	SentBytes         uint64 // segment payload bytes sent on all paths, copies included
	RedundantBytes    uint64 // SentBytes beyond the first transmission of each segment
	RetransSegments   uint64 // segments sent again after a path failed or left
	ReinjectedSegs    uint64 // segments queued for reinjection
	PTOCopies         uint64 // segments queued to go again on other paths because their only path's probe timer fired (the path stays live; failure.go)
	LostSegs          uint64 // segments the session declared lost on a path that carries them in datagrams (Config.DatagramData), each queued for retransmission unless another path carries it
	OpportunisticSegs uint64 // copies sent on a faster path because they held the peer's window (Config.OpportunisticReinjection)
	PathFailures      uint64 // times a path was marked potentially failed
	AckRequests       uint64 // times the sender asked for an Ack it presumed lost
	Pings             uint64 // pings sent to probe silent paths (client)
	ProbeAnswers      uint64 // path probes sent with the pings that the server answered (client; probe_udp.go)
	CouplingCuts      uint64 // reductions of coupled windows on loss events (Config.Coupling)
	CouplingUndos     uint64 // of those, reductions undone because quic-go found the loss spurious
	CoupledAcked      uint64 // bytes acknowledged on paths whose coupled window is in force (after their first loss)
	CoupledGoverned   uint64 // of CoupledAcked, bytes acknowledged while the coupled window was the smaller of the two (it governed, not quic-go's)
	Penalisations     uint64 // halvings of a path's session window because it held up the peer's window (Config.OpportunisticReinjection)
	Rejoins           uint64 // paths joined again with a fresh connection after an outage (client)
	PassedOver        uint64 // times a stream's data waited for the fastest path while another stream's filled a segment on a slower one (pathfill.go)
	PacketsLost       uint64 // QUIC packets lost on all current paths
	UnackedSegments   uint64 // segments sent or cut and not yet acknowledged
	SendBufferedBytes uint64 // application bytes not yet cut into segments: in the streams' send buffers (also those a stream window holds back) and framed

	// Receiver.
	DeliveredBytes  uint64        // bytes of the session's byte stream delivered in order: every record, its header and control records included, so more than the streams' data (5,016,744 for 5,000,000 bytes read from one stream); count application bytes from Stream.Read
	ReceivedBytes   uint64        // segment bytes received, duplicates included
	DuplicateBytes  uint64        // bytes received more than once
	OOOSegments     uint64        // segments that arrived out of order
	HoLBlocked      time.Duration // total time some stream held bytes behind a gap of its own (head-of-line blocking per stream, RFC 9000 §2.2)
	ReorderBytes    uint64        // bytes streams hold behind gaps of their own now (out of order within their stream)
	MaxReorderBytes uint64        // the peak of ReorderBytes

	Datagrams DatagramStats // application datagrams, both directions

	Paths []PathStats // every path the session has had (at most 4·sched.MaxPaths), also after it closed, when Session.Paths lists none
}

// Sample is one interval of a session's time series. Sample k covers
// (T of sample k−1, T], sample 0 from the session's open; every interval is
// one step long (Config.SeriesInterval, doubled each time the series is
// compacted, see Series) except the last one of a closed session or of a
// Series() snapshot, which ends at the close or at the snapshot.
type Sample struct {
	T            time.Duration // end of the interval, since the session opened
	Delivered    uint64        // bytes delivered in order by T, records included
	GoodputBps   float64       // bytes delivered in order within the interval ·8 / its length, bits/s
	ReorderBytes uint64        // peak of Stats.ReorderBytes in the interval, bytes
}

// Stats returns the session's measurements.
func (s *Session) Stats() Stats {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	r := &s.rcv
	hol := r.holTotal
	if !r.holStart.IsZero() {
		hol += now.Sub(r.holStart)
	}
	st := Stats{
		Scheduler:         s.sch.Name(),
		Traced:            s.traced,
		Elapsed:           now.Sub(s.start),
		SentBytes:         s.stats.sentBytes,
		RedundantBytes:    s.stats.redundantBytes,
		RetransSegments:   s.stats.retransSegments,
		ReinjectedSegs:    s.stats.reinjected,
		PTOCopies:         s.stats.ptoCopies,
		LostSegs:          s.stats.dgLost,
		OpportunisticSegs: s.stats.opportunistic,
		PassedOver:        s.stats.passedOver,
		PathFailures:      s.stats.pathFailures,
		AckRequests:       s.stats.ackRequests,
		Pings:             s.stats.pings,
		ProbeAnswers:      s.stats.probeAnswers,
		Penalisations:     s.stats.penalised,
		CouplingCuts:      s.stats.ccCuts,
		CouplingUndos:     s.stats.ccUndos,
		CoupledAcked:      s.stats.ccAcked,
		CoupledGoverned:   s.stats.ccGoverned,
		Rejoins:           s.stats.rejoins,
		UnackedSegments:   uint64(len(s.snd.segs)),
		SendBufferedBytes: uint64(s.snd.pend.Len()) + s.streams.queued,
		DeliveredBytes:    r.delivered,
		ReceivedBytes:     s.stats.recvBytes,
		DuplicateBytes:    s.stats.dupBytes,
		OOOSegments:       s.stats.oooSegments,
		HoLBlocked:        hol,
		ReorderBytes:      r.gapBytes,
		MaxReorderBytes:   max(s.stats.maxReorder, r.sampleMaxRB),
	}
	rules := s.snapRulesLocked()
	for _, p := range s.allPaths {
		pi := p.info(s.snd.segSize, now, rules)
		st.PacketsLost += pi.PacketsLost
		st.Paths = append(st.Paths, PathStats{
			ID:                p.id,
			Backup:            p.backup || p.peerBackup,
			PotentiallyFailed: p.failed,
			BytesSent:         p.bytesSent,
			BytesAcked:        p.bytesAcked,
			BytesReceived:     p.recvBytes,
			PacketsSent:       pi.PacketsSent,
			PacketsLost:       pi.PacketsLost,
			SmoothedRTT:       pi.SmoothedRTT,
			CongestionWindow:  pi.CongestionWindow,
			LocalAddr:         p.localAddr(),
			RemoteAddr:        p.remoteAddr(),
		})
	}
	st.Datagrams = s.dgram.stats()
	return st
}

// maxSeries bounds a session's series: when it holds this many samples
// (an even number), adjacent pairs merge into one and the step doubles.
const maxSeries = 1 << 20

// Series returns the session's time series: one Sample per step from the
// session's open, zeros before the first delivery included, and a last
// partial interval up to now (or up to the close, for a closed session), so
// that the samples account for every byte delivered so far. The series is
// bounded: once it reaches 2^20 samples, adjacent pairs merge and the step
// doubles, so a very long session keeps its whole history at a coarser step.
func (s *Session) Series() []Sample {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return append([]Sample(nil), s.series...)
	}
	s.sample(now, false)
	out := make([]Sample, len(s.series), len(s.series)+1)
	copy(out, s.series)
	if smp, ok := s.partialLocked(now); ok {
		out = append(out, smp)
	}
	return out
}

// sample appends the samples of the steps that ended by now; final also
// appends the partial interval up to now (at Close).
//
// No timer drives it: the series changes only when a segment arrives, so
// segmentReceivedLocked samples before it counts each segment, and Series
// and Close sample up to their own time. The steps that ended while
// nothing arrived are appended together, each with the values they had.
func (s *Session) sample(now time.Time, final bool) {
	r := &s.rcv
	s.stats.maxReorder = max(s.stats.maxReorder, r.sampleMaxRB)
	for !now.Before(r.nextSample) {
		t := r.nextSample
		s.series = append(s.series, Sample{T: t.Sub(s.start), Delivered: r.delivered,
			GoodputBps: float64(r.delivered-r.sampleBase) * 8 / r.seriesStep.Seconds(), ReorderBytes: r.sampleMaxRB})
		r.sampleBase, r.sampleMaxRB = r.delivered, r.gapBytes
		if len(s.series) >= maxSeries {
			s.series = compactSeries(s.series)
			r.seriesStep *= 2
		}
		r.nextSample = t.Add(r.seriesStep)
	}
	if final {
		if smp, ok := s.partialLocked(now); ok {
			s.series = append(s.series, smp)
		}
	}
}

// partialLocked is the sample of the interval in progress, from the end of
// the last full step to now; false if that interval is empty.
func (s *Session) partialLocked(now time.Time) (Sample, bool) {
	r := &s.rcv
	from := r.nextSample.Add(-r.seriesStep)
	el := now.Sub(from)
	if el <= 0 {
		return Sample{}, false
	}
	return Sample{T: now.Sub(s.start), Delivered: r.delivered,
		GoodputBps: float64(r.delivered-r.sampleBase) * 8 / el.Seconds(), ReorderBytes: r.sampleMaxRB}, true
}

// compactSeries merges adjacent pairs of full-step samples in place: each
// merged sample ends where the second of its pair ended and keeps the
// pair's bytes, so the series still integrates to the bytes delivered.
func compactSeries(ss []Sample) []Sample {
	var prevT time.Duration
	var prevD uint64
	n := len(ss) / 2
	for i := range n {
		a, b := ss[2*i], ss[2*i+1]
		el := b.T - prevT
		ss[i] = Sample{T: b.T, Delivered: b.Delivered, ReorderBytes: max(a.ReorderBytes, b.ReorderBytes)}
		if el > 0 {
			ss[i].GoodputBps = float64(b.Delivered-prevD) * 8 / el.Seconds()
		}
		prevT, prevD = b.T, b.Delivered
	}
	return ss[:n]
}
