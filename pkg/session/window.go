package session

import (
	"math"
	"time"

	"github.com/quic-go/quic-go/qlog"
)

// sessWindow is a path's session-level window: the session hands the path
// no more than min(quic-go's congestion window, this window), and shows the
// scheduler the smaller one. quic-go lets no caller shrink its own window,
// so this is where the session applies its own limits on top of it:
// penalisation (Linux MPTCP's halving of a subflow that holds up the
// connection's receive window), and the coupled congestion control built on
// it. Unlimited until something limits it. Guarded by Session.mu.
type sessWindow struct {
	bytes       float64   // the window, bytes; +Inf: unlimited
	penalisedAt time.Time // the last halving

	// Coupled congestion control (coupling.go).
	coupled bool              // the rule governs the window (after the first loss)
	cutPN   qlog.PacketNumber // the largest packet sent at the last reduction
	cutBy   qlog.PacketNumber // the lost packet that caused the last reduction
	undo    float64           // the window before the last reduction, bytes; 0: nothing to undo
	l1, l2  float64           // bytes acknowledged between the last two losses, and since the last (OLIA)
}

// unlimited is the window of a path the session does not limit.
var unlimited = math.Inf(1)

func (w *sessWindow) init() { w.bytes = unlimited }

// limit is the window to apply on top of quic-go's cwnd, bytes.
func (w *sessWindow) limit(cwnd uint64) uint64 {
	if math.IsInf(w.bytes, 1) || w.bytes >= float64(cwnd) {
		return cwnd
	}
	return uint64(w.bytes)
}

// penalise halves the window, starting from quic-go's cwnd when unlimited,
// at most once per srtt (as Linux MPTCP penalises a subflow at most once per
// its RTT), and never below two segments. It reports whether it halved.
func (w *sessWindow) penalise(now time.Time, cwnd uint64, srtt time.Duration, mss uint64) bool {
	if !w.penalisedAt.IsZero() && now.Sub(w.penalisedAt) < srtt {
		return false
	}
	cur := math.Min(w.bytes, float64(cwnd))
	w.bytes = math.Max(cur/2, float64(2*mss))
	w.penalisedAt = now
	return true
}

// acked grows a limited window as Reno's congestion avoidance does (one
// segment per window acknowledged) and lifts the limit once quic-go's own
// window is the smaller.
func (w *sessWindow) acked(n, cwnd, mss uint64) {
	if math.IsInf(w.bytes, 1) || w.coupled {
		return // unlimited, or the coupling grows it (coupling.go)
	}
	w.bytes += float64(mss) * float64(n) / w.bytes
	if w.bytes >= float64(cwnd) {
		w.bytes = unlimited
	}
}
