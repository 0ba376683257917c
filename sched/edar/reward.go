package edar

import (
	"time"

	"github.com/mpqsched/mpqsched/sched"
)

// RewardConfig holds the weights and scales of the reward (paper §IV.B.3;
// how V_w and F_t are read from the receiver report: see Reward):
//
//	r_t = V_g − α·V_w − β·V_o
//	V_g = G_t  (distinct bytes received per second, see Reward)
//	V_w = (Σ_i Y_t^i − G_t) / Σ_i Y_t^i
//	V_o = O_t / B_t + F_t / TI_t
//
// The zero value is not useful; start from DefaultReward.
type RewardConfig struct {
	Alpha float64 // α, weight of the redundancy overhead V_w (paper: 1.0)
	Beta  float64 // β, weight of the buffer occupancy V_o (paper: 0.5)
	// GoodputScale normalises V_g: V_g = goodput (bytes/s) / GoodputScale.
	// With the default, 10 Mbit/s of goodput gives V_g = 1, the same order
	// as V_w and V_o, which lie in [0, 1] and [0, 2].
	GoodputScale float64
	// ReceiveBuffer is B_t, the receiver's buffer for out-of-order data,
	// bytes. The ReceiverReport does not carry it: the paper notes B_t "is
	// usually remaining stable", so it is configuration.
	ReceiveBuffer uint64
}

// FullBuffer is the occupancy, a fraction of B_t, at which the receive
// buffer counts as "fully occupied by out-of-order packets" (the paper's
// F_t): 0.9, leaving room for the last segments in flight.
const FullBuffer = 0.9

// DefaultReward is α = 1, β = 0.5 (paper §VI), V_g in units of 10 Mbit/s,
// and B_t = 512 KiB (quic-go's default initial stream receive window).
var DefaultReward = RewardConfig{Alpha: 1, Beta: 0.5, GoodputScale: 1.25e6, ReceiveBuffer: 512 << 10}

// RewardTerms is the reward and its parts, for logs and tests.
type RewardTerms struct {
	Vg, Vw, Vo float64 // V_g, V_w, V_o as defined on RewardConfig
	R          float64 // r_t = V_g − α·V_w − β·V_o
}

// Reward computes r_t from one receiver report (or several merged with
// mergeReport). Mapping of the paper's symbols to the report:
//
//   - G_t: the paper's "average goodput of the entire MPTCP connection",
//     read as the distinct bytes that arrived: (Σ_i Y_t^i − DuplicateBytes)
//     / Interval (bytes/s), divided by GoodputScale. In-order delivery
//     (GoodputBytes) is the same over a run but not per TI: a copy that
//     fills a gap releases the whole reorder buffer at once, so with
//     in-order delivery as G_t a switch to redundant mode earned a spike
//     one TI later and paid for the lost capacity only afterwards, beyond
//     the γ = 0.6 horizon (a model trained that way on the space of issue
//     33 still copied 22% of its bytes on hetero-2path).
//   - V_w: the paper defines it as (Σ_i Y_t^i − G_t) / Σ_i Y_t^i and says
//     what it is for: "V_w denotes the waste of bandwidth by sending
//     redundant packets" (§IV.B.3). Within one TI, Σ Y − G also counts the
//     bytes that arrived but wait behind a gap, which are not waste (they
//     are delivered in a later TI): measured on hetero-2path, minRTT with
//     no copies at all scored V_w = 0.15 per TI (issue 33). So V_w here is
//     DuplicateBytes / Σ_i Y_t^i, the bytes that arrived twice over the
//     bytes received (PathBytes summed), 0 when nothing was received,
//     clipped to [0, 1].
//   - O_t: ReorderBytes, the out-of-order bytes held at the end of the
//     interval, so O_t/B_t is the buffer occupancy in [0, 1] (clipped).
//   - F_t: the paper's "time that the receive buffer is fully occupied by
//     out-of-order packets". The report has the time data waited behind a
//     gap (HoLBlocked), which under any scheduler that spreads segments over
//     paths of different RTTs is nearly the whole TI (0.99 × TI for minRTT
//     on hetero-2path) although the buffer is far from full, so that term
//     alone made every copy pay β·1 per TI. F_t is therefore HoLBlocked
//     only in a TI that ends with the buffer at least FullBuffer of B_t,
//     else 0; F_t/TI_t is clipped to [0, 1].
//
// An Interval of 0 gives V_g = 0 and F_t/TI_t = 0.
func Reward(rep *sched.ReceiverReport, cfg *RewardConfig) RewardTerms {
	var t RewardTerms
	sec := rep.Interval.Seconds()
	var y uint64
	for _, b := range rep.PathBytes {
		y += b
	}
	if sec > 0 && cfg.GoodputScale > 0 && y > rep.DuplicateBytes {
		t.Vg = float64(y-rep.DuplicateBytes) / sec / cfg.GoodputScale
	}
	if y > 0 {
		t.Vw = min(float64(rep.DuplicateBytes)/float64(y), 1)
	}
	full := false
	if cfg.ReceiveBuffer > 0 {
		occ := float64(rep.ReorderBytes) / float64(cfg.ReceiveBuffer)
		t.Vo = min(occ, 1)
		full = occ >= FullBuffer
	}
	if rep.Interval > 0 && full {
		t.Vo += min(float64(rep.HoLBlocked)/float64(rep.Interval), 1)
	}
	t.R = t.Vg - cfg.Alpha*t.Vw - cfg.Beta*t.Vo
	return t
}

// mergeReport adds report r to the running aggregate a: counts and durations
// add up, ReorderBytes (a level, not a count) takes the latest value.
func mergeReport(a *sched.ReceiverReport, r *sched.ReceiverReport) {
	a.Interval += r.Interval
	a.GoodputBytes += r.GoodputBytes
	for i := range a.PathBytes {
		a.PathBytes[i] += r.PathBytes[i]
	}
	a.OutOfOrder += r.OutOfOrder
	a.ReorderBytes = r.ReorderBytes
	a.HoLBlocked += r.HoLBlocked
	a.DuplicateBytes += r.DuplicateBytes
}

// reportWindow collects the receiver reports that arrive during one TI.
type reportWindow struct {
	agg   sched.ReceiverReport
	count int
	last  time.Time
}

func (w *reportWindow) add(now time.Time, r *sched.ReceiverReport) {
	mergeReport(&w.agg, r)
	w.count++
	w.last = now
}

func (w *reportWindow) reset() { *w = reportWindow{} }

// RewardWithBuffer is DefaultReward with B_t = buf, the receiver's actual
// buffer in bytes (the receive window the session was configured with).
func RewardWithBuffer(buf uint64) RewardConfig {
	c := DefaultReward
	if buf > 0 {
		c.ReceiveBuffer = buf
	}
	return c
}
