package session

import (
	"time"

	"github.com/mpqsched/mpqsched/sched"
)

// counters are the session-wide totals, guarded by Session.mu.
type counters struct {
	sentBytes       uint64 // segment payload bytes sent on all paths, copies included
	redundantBytes  uint64 // bytes sent beyond each segment's first transmission
	retransSegments uint64 // segments sent again after loss or reinjection
	reinjected      uint64 // segments queued again because their path failed or left
	opportunistic   uint64 // copies sent by opportunistic reinjection
	pathFailures    uint64 // times a path was marked potentially failed
	recvBytes       uint64 // segment payload bytes received, duplicates included
	dupBytes        uint64 // bytes received more than once
	oooSegments     uint64 // segments that arrived out of order
	maxReorder      uint64 // peak reorder-buffer occupancy, bytes
	ackRequests     uint64 // AckReqs sent (acks presumed lost)
}

// PathStats is one path's share of a session's traffic.
type PathStats struct {
	ID                sched.PathID
	Backup            bool
	PotentiallyFailed bool
	BytesSent         uint64        // segment payload bytes sent, copies included
	BytesAcked        uint64        // of those, bytes acknowledged
	BytesReceived     uint64        // segment payload bytes received from the peer
	PacketsSent       uint64        // QUIC 1-RTT packets sent
	PacketsLost       uint64        // QUIC packets declared lost (quic-go re-sends their data on this path)
	SmoothedRTT       time.Duration // latest smoothed RTT
	CongestionWindow  uint64        // latest congestion window, bytes
}

// Stats is a snapshot of what a session measured, sender and receiver side.
type Stats struct {
	Scheduler string
	Elapsed   time.Duration // since the session started

	// Sender.
	SentBytes         uint64 // segment payload bytes sent on all paths, copies included
	RedundantBytes    uint64 // SentBytes beyond the first transmission of each segment
	RetransSegments   uint64 // segments sent again after a path failed or left
	ReinjectedSegs    uint64 // segments queued for reinjection
	OpportunisticSegs uint64 // copies sent on a faster path because they held the peer's window (Config.OpportunisticReinjection)
	PathFailures      uint64 // times a path was marked potentially failed
	AckRequests       uint64 // times the sender asked for an Ack it presumed lost
	PacketsLost       uint64 // QUIC packets lost on all current paths
	UnackedSegments   uint64 // segments sent or cut and not yet acknowledged
	SendBufferedBytes uint64 // application bytes waiting to be cut into segments

	// Receiver.
	DeliveredBytes  uint64        // bytes delivered in order (records included)
	ReceivedBytes   uint64        // segment bytes received, duplicates included
	DuplicateBytes  uint64        // bytes received more than once
	OOOSegments     uint64        // segments that arrived out of order
	HoLBlocked      time.Duration // total time data waited for a missing segment
	ReorderBytes    uint64        // bytes in the reorder buffer now
	MaxReorderBytes uint64        // the reorder buffer's peak occupancy

	Paths []PathStats // current paths, in slot order
}

// Sample is one point of a session's time series.
type Sample struct {
	T            time.Duration // since the session started
	Delivered    uint64        // bytes delivered in order so far
	GoodputBps   float64       // in-order delivery rate over the sample step, bits/s
	ReorderBytes uint64        // peak reorder-buffer occupancy in the step, bytes
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
		Elapsed:           now.Sub(s.start),
		SentBytes:         s.stats.sentBytes,
		RedundantBytes:    s.stats.redundantBytes,
		RetransSegments:   s.stats.retransSegments,
		ReinjectedSegs:    s.stats.reinjected,
		OpportunisticSegs: s.stats.opportunistic,
		PathFailures:      s.stats.pathFailures,
		AckRequests:       s.stats.ackRequests,
		UnackedSegments:   uint64(len(s.snd.segs)),
		SendBufferedBytes: uint64(s.snd.pend.Len()),
		DeliveredBytes:    r.delivered,
		ReceivedBytes:     s.stats.recvBytes,
		DuplicateBytes:    s.stats.dupBytes,
		OOOSegments:       s.stats.oooSegments,
		HoLBlocked:        hol,
		ReorderBytes:      r.held,
		MaxReorderBytes:   s.stats.maxReorder,
	}
	for _, p := range s.allPaths {
		pi := p.info(s.snd.segSize)
		st.PacketsLost += pi.PacketsLost
		st.Paths = append(st.Paths, PathStats{
			ID:                p.id,
			Backup:            p.backup,
			PotentiallyFailed: p.failed,
			BytesSent:         p.bytesSent,
			BytesAcked:        p.bytesAcked,
			BytesReceived:     p.recvBytes,
			PacketsSent:       pi.PacketsSent,
			PacketsLost:       pi.PacketsLost,
			SmoothedRTT:       pi.SmoothedRTT,
			CongestionWindow:  pi.CongestionWindow,
		})
	}
	return st
}

// Series returns the session's time series so far, one Sample per
// Config.SeriesInterval while data was being delivered.
func (s *Session) Series() []Sample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Sample(nil), s.series...)
}

// sample appends the samples due at now; final appends a last partial one.
func (s *Session) sample(now time.Time, final bool) {
	r := &s.rcv
	s.stats.maxReorder = max(s.stats.maxReorder, r.sampleMaxRB)
	step := s.cfg.SeriesInterval
	for !now.Before(r.nextSample) || final {
		t := r.nextSample
		el := step
		if final && now.Before(t) {
			el = step - t.Sub(now)
			t = now
		}
		if r.delivered == 0 && !final {
			r.nextSample = r.nextSample.Add(step)
			continue
		}
		var bps float64
		if el > 0 {
			bps = float64(r.delivered-r.sampleBase) * 8 / el.Seconds()
		}
		s.series = append(s.series, Sample{T: t.Sub(s.start), Delivered: r.delivered, GoodputBps: bps, ReorderBytes: r.sampleMaxRB})
		r.sampleBase, r.sampleMaxRB = r.delivered, r.held
		r.nextSample = r.nextSample.Add(step)
		if final {
			break
		}
		if len(s.series) > 1<<20 {
			s.series = s.series[:0] // bound memory of very long sessions
		}
	}
}
