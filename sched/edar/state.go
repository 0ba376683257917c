package edar

import (
	"time"

	"github.com/mpqsched/mpqsched/sched"
)

// Shape of the state (paper §IV.B.1): s_t = (M_t, E_t^1, …, E_t^n) with
// 3 + 6·n·(k+1) observations.
const (
	// K is the paper's history hyperparameter k (§VI: k = 5).
	K = 5
	// HistoryLen is k+1, the number of TIs of history per subflow feature.
	HistoryLen = K + 1
	// SubflowFeatures is the number of per-subflow series: d, o, x, w, l, f.
	SubflowFeatures = 6
	// ConnFeatures is the size of the connection state M_t = (a_{t-1}, b_t, I_t).
	ConnFeatures = 3
	// MaxSubflows caps the subflows a State holds. Paths beyond the first
	// MaxSubflows of the snapshot still carry traffic but are not observed.
	MaxSubflows = 8
)

// Indices of the per-subflow features in State.Sub[i][step].
const (
	FeatRTT        = iota // d: smoothed RTT / RTTScale
	FeatRTO               // o: RFC 9002 PTO with backoff / RTTScale
	FeatThroughput        // x: acknowledged bytes per second over the TI / RateScale
	FeatCwnd              // w: congestion window in segments / SegmentScale
	FeatLoss              // l: lost/sent packets over the TI, fraction in [0,1]
	FeatInFlight          // f: bytes in flight in segments / SegmentScale
)

// Indices of the connection features in State.Conn.
const (
	ConnPrevAction = iota // a_{t-1}: 0 normal, 1 redundant
	ConnRecvWindow        // b_t: peer receive window (ConnInfo.PeerWindow) / WindowScale
	ConnInFlight          // I_t: connection-level unacknowledged segments / SegmentScale
)

// Normalisation scales. Every feature is divided by its scale and clipped to
// [0, FeatureClip], so the network sees values of order 1.
const (
	RTTScale     = 100 * time.Millisecond // RTT and RTO: 100 ms → 1.0
	RateScale    = 12.5e6                 // throughput, bytes/s: 100 Mbit/s → 1.0
	SegmentScale = 100                    // cwnd and in-flight, segments: 100 → 1.0
	WindowScale  = 1 << 20                // receive window, bytes: 1 MiB → 1.0
	FeatureClip  = 10                     // upper clip of every normalised feature
	// DefaultSegment is the segment size, bytes, assumed when a path reports
	// MSS 0 and the connection SegmentSize is 0.
	DefaultSegment = 1200
)

// State is one observation s_t, normalised as documented on the feature
// constants. It is a fixed-size value: copying it never allocates.
type State struct {
	// N is the number of subflows observed, 0..MaxSubflows; rows Sub[N:]
	// are zero.
	N int
	// Conn is M_t; see ConnPrevAction, ConnRecvWindow, ConnInFlight.
	Conn [ConnFeatures]float32
	// Sub[i][j][f] is feature f of subflow i (the i-th path of the snapshot)
	// at TI t−k+j: j = 0 is the oldest step, j = HistoryLen−1 is t. Steps
	// before the path existed are zero.
	Sub [MaxSubflows][HistoryLen][SubflowFeatures]float32
}

// pathHist is the per-path history the scheduler keeps between TIs.
type pathHist struct {
	id    sched.PathID
	used  bool // slot holds a path
	seen  bool // path was in the latest snapshot
	steps int  // rows filled, ≤ HistoryLen
	// rows is a ring of the last HistoryLen feature rows; head is the
	// index of the oldest row once steps == HistoryLen.
	rows [HistoryLen][SubflowFeatures]float32
	head int
	// counters at the previous TI boundary, for per-TI rates
	acked, sent, lost uint64
}

// observer turns snapshots taken once per TI into States.
type observer struct {
	hist [MaxSubflows]pathHist
	last time.Time // previous TI boundary; zero before the first
}

// clip normalises v by scale into [0, FeatureClip].
func clip(v float64) float32 {
	if !(v > 0) { // also NaN
		return 0
	}
	if v > FeatureClip {
		return FeatureClip
	}
	return float32(v)
}

// pto is the RFC 9002 §6.2.1 probe timeout without max_ack_delay,
// srtt + max(4·rttvar, 1 ms), doubled per consecutive PTO.
func pto(p *sched.PathInfo) time.Duration {
	v := 4 * p.RTTVar
	if v < time.Millisecond {
		v = time.Millisecond
	}
	d := p.SmoothedRTT + v
	for i := uint32(0); i < p.PTOCount && i < 16; i++ {
		d *= 2
	}
	return d
}

// row computes the feature row of path p for a TI of length dt, updating the
// slot's counters. first reports that the slot has no previous counters.
func (h *pathHist) row(p *sched.PathInfo, dt time.Duration, first bool, segment uint64) [SubflowFeatures]float32 {
	var r [SubflowFeatures]float32
	mss := p.MSS
	if mss == 0 {
		mss = segment
	}
	r[FeatRTT] = clip(float64(p.SmoothedRTT) / float64(RTTScale))
	r[FeatRTO] = clip(float64(pto(p)) / float64(RTTScale))
	rate := p.DeliveryRate
	if !first && dt > 0 && p.BytesAcked >= h.acked {
		rate = float64(p.BytesAcked-h.acked) / dt.Seconds()
	}
	r[FeatThroughput] = clip(rate / RateScale)
	r[FeatCwnd] = clip(float64(p.CongestionWindow) / float64(mss) / SegmentScale)
	loss := p.LossRate
	if !first {
		var sent, lost uint64
		if p.PacketsSent >= h.sent {
			sent = p.PacketsSent - h.sent
		}
		if p.PacketsLost >= h.lost {
			lost = p.PacketsLost - h.lost
		}
		switch {
		case lost == 0:
			loss = 0
		case lost >= sent:
			loss = 1
		default:
			loss = float64(lost) / float64(sent)
		}
	}
	r[FeatLoss] = clip(loss)
	r[FeatInFlight] = clip(float64(p.BytesInFlight) / float64(mss) / SegmentScale)
	h.acked, h.sent, h.lost = p.BytesAcked, p.PacketsSent, p.PacketsLost
	return r
}

// slot finds the history slot of path id, or claims a free one. It returns
// nil if all MaxSubflows slots are held by paths of this snapshot.
func (o *observer) slot(id sched.PathID) (h *pathHist, fresh bool) {
	var free *pathHist
	for i := range o.hist {
		h := &o.hist[i]
		if h.used && h.id == id {
			return h, false
		}
		if free == nil && (!h.used || !h.seen) {
			free = h
		}
	}
	if free == nil {
		return nil, false
	}
	*free = pathHist{id: id, used: true}
	return free, true
}

// observe samples the snapshots at a TI boundary into s. prev is a_{t-1}.
// Each path's history advances by one row; paths that left the snapshot
// free their slot for new paths.
func (o *observer) observe(s *State, conn *sched.ConnInfo, paths []sched.PathInfo, prev Mode) {
	dt := time.Duration(0)
	if !o.last.IsZero() {
		dt = conn.Now.Sub(o.last)
	}
	o.last = conn.Now
	segment := conn.SegmentSize
	if segment == 0 {
		segment = DefaultSegment
	}
	// Mark the slots still in use before claiming new ones, so that a
	// departed path's slot can be reused within this snapshot.
	for i := range o.hist {
		o.hist[i].seen = false
	}
	n := min(len(paths), MaxSubflows)
	for i := 0; i < n; i++ {
		for j := range o.hist {
			if o.hist[j].used && o.hist[j].id == paths[i].ID {
				o.hist[j].seen = true
			}
		}
	}
	*s = State{N: n}
	for i := 0; i < n; i++ {
		p := &paths[i]
		h, fresh := o.slot(p.ID)
		if h == nil { // cannot happen: n ≤ MaxSubflows distinct IDs
			continue
		}
		h.seen = true
		r := h.row(p, dt, fresh, segment)
		if h.steps < HistoryLen {
			h.rows[h.steps] = r
			h.steps++
		} else {
			h.rows[h.head] = r
			h.head = (h.head + 1) % HistoryLen
		}
		// Copy oldest→newest, right-aligned: missing steps stay zero.
		off := HistoryLen - h.steps
		for j := 0; j < h.steps; j++ {
			s.Sub[i][off+j] = h.rows[(h.head+j)%HistoryLen]
		}
	}
	for i := range o.hist {
		if o.hist[i].used && !o.hist[i].seen {
			o.hist[i] = pathHist{}
		}
	}
	s.Conn[ConnPrevAction] = float32(prev)
	s.Conn[ConnRecvWindow] = clip(float64(conn.PeerWindow) / WindowScale)
	s.Conn[ConnInFlight] = clip(float64(conn.UnackedSegments) / SegmentScale)
}
