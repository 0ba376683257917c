package session

import (
	"math"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/mpqsched/mpqsched/sched"
)

// Where a path's transport signals come from.
//
// A path reads them from its tracer (tracer.go) when the session keeps one:
// quic-go then builds a qlog event for every packet it sends and receives,
// which costs it about a quarter more CPU per packet (docs/performance.md).
// The session keeps tracers only where something needs them (tracerNeeded):
//   - Config.QlogDir asks for qlog files;
//   - a coupled congestion control (Config.Coupling, Config.RenoFriendly)
//     needs loss epochs and spurious-loss reports (coupling.go);
//   - the scheduler needs per-ACK signals (sched.PerAckSignals: PTOCount and
//     LossRate after every acknowledgement; LLHD and EdAR).
//
// Otherwise a path has no tracer (p.tr == nil) and the same view comes from
// quic-go's ConnectionStats (RTTs, congestion window, packets sent, received
// and lost: atomics, safe from any goroutine) and the session's own
// accounting:
//   - bytes in flight: the segment bytes quic-go took through the pull
//     writer's limiter (pull.go) within the last RTT (inflightByTime);
//   - PTO count: 0 for the scheduler; failure detection counts the probe
//     timeouts quic-go would have fired since the path last heard from the
//     peer (ptoEstimate);
//   - whether quic-go still holds segments it took earlier (lost packets it
//     sends again, which do not pass the limiter and which the estimate of
//     bytes in flight no longer counts one RTT on): for failure detection,
//     yes if it sent two packets or more since the path last heard from the
//     peer (statsView.probing: quic-go arms its probe timer only while it
//     has packets outstanding, and sends two probes when it fires; an
//     acknowledgement of the peer's packets is one), no if its first probe
//     is overdue by half a PTO without them (failure.go, quicHoldsLocked);
//   - the loss rate: the tracer's moving average over lossWindow packets,
//     advanced by the packets sent and lost since the last reading;
//   - when a packet last arrived: when the count of packets received last
//     changed (read at every view), or when the path's reader last took
//     segments, whichever is later; the mean gap between packets from the
//     same readings;
//   - a wake-up per ACK: none. A path asks for data itself when quic-go has
//     room for it (pull.go), and the session's Acks wake the send pass. A
//     path that asked has room for a segment in the scheduler's view
//     (path.info), as quic-go sends a full packet whenever its bytes in
//     flight are below its window, unless another path refills its window
//     sooner and a segment beyond this one's would wait there longer than
//     the fastest path's one-way delay (primeBound, pull.go); with a tracer
//     a path needs a full segment of room by the tracer's count
//     (docs/performance.md shows what that changes).

// tracerNeeded reports whether the session's path connections carry a
// tracer, and why (for the log).
func tracerNeeded(cfg *Config, sch sched.Scheduler) (bool, string) {
	switch {
	case forceTracer:
		return true, "forced (test)"
	case cfg.QlogDir != "":
		return true, "qlog output (QlogDir)"
	case couplingOn(cfg):
		return true, "coupled congestion control (loss epochs)"
	case sch != nil && sched.NeedsPerAckSignals(sch):
		return true, "the scheduler needs per-ACK signals"
	}
	return false, ""
}

// forceTracer, set by tests before any session starts, gives every path a
// tracer whatever the configuration (to compare the two views).
var forceTracer bool

// couplingOn reports whether cfg selects a coupled congestion control.
func couplingOn(cfg *Config) bool {
	return cfg.RenoFriendly || (cfg.Coupling != "" && cfg.Coupling != "none")
}

// linkView is what the session knows of one path's QUIC connection at a
// moment: from the tracer, or from ConnectionStats and the session's own
// accounting (see above). Sizes are bytes; times are the session's clock.
type linkView struct {
	srtt, minRTT, latestRTT, rttVar time.Duration
	cwnd                            uint64 // quic-go's congestion window
	inflight                        uint64 // bytes in flight (tracer: quic-go's; else the session's estimate)
	ptoCount                        uint32 // tracer only; 0 without
	packetsSent, packetsLost        uint64
	lossRate                        float64
	lastRecv                        time.Time // a packet last arrived (zero: none yet)
	lastData                        time.Time // a packet with segments (STREAM frames) last arrived
	dataSince                       time.Time // first packet with data of the current run
	gap                             time.Duration
}

// statsView is a tracer-less path's signal state, guarded by Session.mu:
// what the last reading of ConnectionStats found, and what the session
// derives from the readings and from its own reader.
type statsView struct {
	read       bool      // read at least once
	recvd      uint64    // PacketsReceived at the last reading
	sent, lost uint64    // PacketsSent, PacketsLost at the last reading
	sentAtRecv uint64    // PacketsSent at the reading that found PacketsReceived grown (or the first reading)
	readAt     time.Time // when the last reading was taken
	lastRecv   time.Time // when PacketsReceived was last seen to grow, or segments arrived
	lastData   time.Time // segments last arrived (path_read.go)
	dataSince  time.Time
	dataWake   bool // poke the send pass at the next segments (probe.go)
	gap        time.Duration
	lossRate   float64
}

// viewLocked returns p's view at now; Session.mu is held. Without a tracer
// it reads quic-go's ConnectionStats (a few atomic loads) and updates p.sv.
func (p *path) viewLocked(now time.Time) linkView {
	if t := p.tr; t != nil {
		t.mu.Lock()
		v := linkView{
			srtt: t.srtt, minRTT: t.minRTT, latestRTT: t.latestRTT, rttVar: t.rttVar,
			cwnd: uint64(max(t.cwnd, 0)), inflight: uint64(max(t.inflight, 0)), ptoCount: t.ptoCount,
			packetsSent: t.packetsSent, packetsLost: t.packetsLost, lossRate: t.lossRate,
			lastRecv: t.lastRecv, lastData: t.lastData, dataSince: t.dataSince, gap: t.gap,
		}
		t.mu.Unlock()
		p.clog.add(now, p.pw.committed.Load(), v.srtt/16) // for TestInflightEstimateAgainstQlog
		return v
	}
	var st quic.ConnectionStats
	if p.conn != nil {
		st = p.conn.ConnectionStats()
	}
	sv := &p.sv
	sv.update(&st, now)
	p.clog.add(now, p.pw.committed.Load(), st.SmoothedRTT/16)
	return linkView{
		srtt: st.SmoothedRTT, minRTT: st.MinRTT, latestRTT: st.LatestRTT, rttVar: st.MeanDeviation,
		cwnd: st.CongestionWindow, inflight: p.inflightByTime(now, st.LatestRTT, sv.lastRecv),
		packetsSent: st.PacketsSent, packetsLost: st.PacketsLost, lossRate: sv.lossRate,
		lastRecv: sv.lastRecv, lastData: sv.lastData, dataSince: sv.dataSince, gap: sv.gap,
	}
}

// inflightByTime is the session's estimate of the bytes in flight on p
// without a tracer: the segment bytes quic-go took through the limiter
// since w (the latest RTT sample) before the last packet from the peer
// arrived (lastRecv; now if later). While acknowledgements come in, that is
// what quic-go took in the last RTT, which is in flight if each packet's
// acknowledgement comes one RTT after it left; when they stop (an outage),
// everything taken since stays in flight, as in quic-go, and the path does
// not look empty to the scheduler or to failure detection. Readings of the
// limiter's count at the session's views (commitLog) date the bytes, so the
// estimate errs by what quic-go took between two readings; before the log
// reaches back far enough it is inflightByAcks. TestInflightEstimateAgainstQlog measures it
// against quic-go's own count: within about an eighth of the congestion
// window either way on a lossy pair of paths, where the estimate from the
// peer's acknowledgements (inflightByAcks) was a fifth of the window too
// high on the fast path (the peer acknowledges in batches, after up to
// AckDelay) and a fifth too low on the slow one (its data is acknowledged
// over the fast path, well before quic-go's own ACK comes back). Session.mu
// is held.
func (p *path) inflightByTime(now time.Time, w time.Duration, lastRecv time.Time) uint64 {
	c := p.pw.committed.Load()
	if !lastRecv.IsZero() && lastRecv.Before(now) {
		now = lastRecv
	}
	old, ok := p.clog.at(now.Add(-w))
	if p.clog.n == 0 || !ok {
		return p.inflightByAcks()
	}
	return c - min(old, c)
}

// rttLocked is p's smoothed RTT (0 before the first sample with a tracer);
// s.mu is held.
func (p *path) rttLocked() (srtt, rttVar time.Duration) {
	if t := p.tr; t != nil {
		t.mu.Lock()
		defer t.mu.Unlock()
		return t.srtt, t.rttVar
	}
	if p.conn == nil {
		return 0, 0
	}
	st := p.conn.ConnectionStats()
	return st.SmoothedRTT, st.MeanDeviation
}

// minRTTLocked is the smallest RTT quic-go has measured on p (0 before the
// first sample); s.mu is held.
func (p *path) minRTTLocked() time.Duration {
	if t := p.tr; t != nil {
		t.mu.Lock()
		defer t.mu.Unlock()
		return t.minRTT
	}
	if p.conn == nil {
		return 0
	}
	return p.conn.ConnectionStats().MinRTT
}

// cwndLocked is quic-go's congestion window of p, bytes, with its smoothed
// RTT; s.mu is held.
func (p *path) cwndLocked() (uint64, time.Duration) {
	if t := p.tr; t != nil {
		t.mu.Lock()
		defer t.mu.Unlock()
		return uint64(max(t.cwnd, 0)), t.srtt
	}
	if p.conn == nil {
		return 0, 0
	}
	st := p.conn.ConnectionStats()
	return st.CongestionWindow, st.SmoothedRTT
}

// update takes a reading of ConnectionStats at now: a packet arrived since
// the last reading if PacketsReceived grew (then lastRecv is now, and the
// readings' interval over the packets in it is a sample of the mean gap),
// and the loss-rate average advances by the packets sent and lost since.
func (sv *statsView) update(st *quic.ConnectionStats, now time.Time) {
	if !sv.read {
		sv.read = true
		sv.recvd, sv.sent, sv.lost, sv.readAt = st.PacketsReceived, st.PacketsSent, st.PacketsLost, now
		sv.sentAtRecv = st.PacketsSent
		if st.PacketsReceived > 0 {
			sv.lastRecv = now
		}
		return
	}
	if d := st.PacketsReceived - sv.recvd; st.PacketsReceived > sv.recvd {
		if el := now.Sub(sv.readAt); !sv.lastRecv.IsZero() && el > 0 && el < time.Second {
			// The tracer's EWMA moves 1/8 of the way per packet.
			w := 1 - math.Pow(7.0/8, float64(d))
			sv.gap += time.Duration(w * float64(el/time.Duration(d)-sv.gap))
		}
		sv.recvd = st.PacketsReceived
		sv.lastRecv = max2(sv.lastRecv, now)
		sv.sentAtRecv = st.PacketsSent
	}
	if st.PacketsSent > sv.sent || st.PacketsLost > sv.lost {
		// The tracer's average: each packet sent decays it by 1/lossWindow,
		// each loss adds 1/lossWindow.
		ds := float64(st.PacketsSent - min(sv.sent, st.PacketsSent))
		dl := float64(st.PacketsLost - min(sv.lost, st.PacketsLost))
		sv.lossRate = min(1, sv.lossRate*math.Pow(1-1.0/lossWindow, ds)+dl/lossWindow)
		sv.sent, sv.lost = st.PacketsSent, st.PacketsLost
	}
	sv.readAt = now
}

// probing reports whether quic-go sent two packets or more since the
// reading that last found a packet from the peer (as of the last reading):
// more than the one acknowledgement its packets may call for. A connection
// sends nothing else unasked but probes, which it sends (two at a time)
// only while it has packets outstanding, and what the session hands it:
// segments (counted by the limiter) and datagrams, which are outstanding
// too until acknowledged.
func (sv *statsView) probing() bool {
	return sv.sent >= sv.sentAtRecv+2
}

// segmentsArrived records that p's reader took segments at now (s.mu held):
// a packet with data arrived. It reports whether the send pass asked to be
// woken by it (probe.go).
func (sv *statsView) segmentsArrived(now time.Time) (wake bool) {
	if sv.lastData.IsZero() || now.Sub(sv.lastData) >= activeWindow {
		sv.dataSince = now
	}
	sv.lastData = now
	sv.lastRecv = max2(sv.lastRecv, now)
	wake, sv.dataWake = sv.dataWake, false
	return wake
}

// ptoEstimate is how many probe timeouts quic-go has fired, counted as
// quic-go backs its probe timer off (RFC 9002 §6.2.1: pto = srtt +
// max(4·rttvar, granularity) + max_ack_delay, doubled after each timeout),
// when nothing arrived for silent while data was outstanding: 0 below one
// pto, 1 below three, 2 below seven, and so on. A tracer-less path's stand-in
// for the tracer's PTO count in failure detection.
func ptoEstimate(silent, srtt, rttVar time.Duration) uint32 {
	pto := probeTimeout(srtt, rttVar)
	var n uint32
	for span := pto; silent >= span && n < 16; span = 2*span + pto {
		n++
	}
	return n
}

// ptosLocked is the count of probe timeouts without an acknowledgement on
// p as of now, from its view v: the tracer's, or without one, those
// quic-go would have fired since the path last heard from the peer (or
// made progress).
func (p *path) ptosLocked(now time.Time, v linkView) uint32 {
	if p.tr != nil {
		return v.ptoCount
	}
	return ptoEstimate(now.Sub(max2(v.lastRecv, p.lastProgress)), v.srtt, v.rttVar)
}

// probeTimeout is quic-go's probe timeout on a path of smoothed RTT srtt
// and RTT variation rttVar, before any backoff (RFC 9002 §6.2.1): srtt +
// max(4·rttvar, 1 ms) + max_ack_delay, or twice quic-go's initial RTT
// (100 ms) before the first RTT sample, when ConnectionStats reads an srtt
// of 0 (a server's connection before its handshake completes; quic-go v0.65
// utils.RTTStats.PTO).
func probeTimeout(srtt, rttVar time.Duration) time.Duration {
	if srtt == 0 {
		return 2 * initialRTT
	}
	return srtt + max(4*rttVar, time.Millisecond) + maxAckDelay
}

// initialRTT is quic-go's RTT before the first sample
// (protocol.DefaultInitialRTT in v0.65).
const initialRTT = 100 * time.Millisecond
