// Package cc holds the coupled congestion-control rules of multipath
// transport as pure functions of the paths' state: uncoupled Reno ("none"
// and "reno-friendly"), LIA (RFC 6356), OLIA (Khalili et al., CoNEXT 2012;
// draft-khalili-mptcp-congestion-control) and BALIA (Peng, Walid, Hwang,
// Low, IEEE/ACM ToN 2016; draft-walid-mptcp-congestion-control).
//
// A rule answers two questions for path i, given a snapshot of every path:
// by how many bytes its window grows when bytes are acknowledged on it in
// congestion avoidance (Acked), and what its window is after a loss event on
// it (Lost). Slow start, loss detection, one-reduction-per-round (NewReno)
// and pacing stay with the caller: the papers couple only the
// congestion-avoidance increase (and, for BALIA, the decrease).
//
// The rules keep no state; everything they read is in Path, including the
// loss-interval counters OLIA needs (Path.OnAcked, Path.OnLoss). They do not
// allocate and never read the clock. docs/coupling.md describes how the
// session puts the coupled window on top of quic-go's own window.
package cc

import (
	"math"
	"time"
)

// Path is one path's state as the coupling sees it. Windows and counters are
// in bytes; the zero value is a path that is left out of every sum.
type Path struct {
	// Window is the path's congestion window in bytes (the session-level
	// window the coupling governs).
	Window float64
	// RTT is the path's smoothed round-trip time. Zero means no sample yet:
	// the path is then left out of the coupled sums and grows as Reno.
	RTT time.Duration
	// MSS is the path's maximum segment size in bytes: the payload of one
	// full-sized packet, the unit of the per-packet formulas.
	MSS float64
	// BetweenLosses is OLIA's l1r, in bytes: the bytes acknowledged between
	// the path's last two loss events. Only OLIA reads it.
	BetweenLosses float64
	// SinceLoss is OLIA's l2r, in bytes: the bytes acknowledged since the
	// path's last loss event. Only OLIA reads it.
	SinceLoss float64
	// Off leaves the path out of every coupled sum: a failed or abandoned
	// path, or a backup path that carries no data.
	Off bool
}

// Coupling is one window rule. Implementations are stateless values, safe
// for concurrent use, and do not allocate. Bad input (an index out of range,
// NaN, infinities, negative or zero sizes) never panics: it yields 0 from
// Acked and at worst the minimum window from Lost.
type Coupling interface {
	// Name is the rule's name in the registry (New, Names).
	Name() string
	// Acked returns the change of path i's window, in bytes, when acked
	// bytes of new data are acknowledged on it in congestion avoidance,
	// given every path's state. OLIA's change can be negative: it moves
	// window away from the paths with the largest windows. The caller adds
	// it to the window and keeps the result at or above MinWindow.
	Acked(i int, acked float64, paths []Path) float64
	// Lost returns path i's new window, in bytes, after one loss event on it
	// (the caller reduces at most once per round trip, as NewReno does). It
	// never goes below MinWindow(paths[i].MSS).
	Lost(i int, paths []Path) float64
}

// Beta is the standard Reno multiplicative decrease: the window is
// multiplied by Beta on a loss event (RFC 5681 §3.1, equation 4). quic-go's
// NewReno uses 0.7 instead (renoBeta in its internal/congestion).
const Beta = 0.5

// MinWindowSegments is the smallest window after a loss, in segments:
// ssthresh = max(FlightSize/2, 2*SMSS) (RFC 5681 §3.1, equation 4), the same
// floor as quic-go's minCongestionWindowPackets.
const MinWindowSegments = 2

// MinWindow returns the smallest window after a loss, in bytes, for a path
// whose segments are mss bytes: MinWindowSegments·mss, or 0 for a
// non-positive or non-finite mss.
func MinWindow(mss float64) float64 {
	if !positive(mss) {
		return 0
	}
	return MinWindowSegments * mss
}

// positive reports whether x is a finite number above zero (false for NaN).
func positive(x float64) bool { return x > 0 && x <= math.MaxFloat64 }

// finite reports whether x is neither NaN nor an infinity.
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// coupled reports whether p takes part in the coupled sums: on, with a
// positive finite window, MSS and RTT.
func (p *Path) coupled() bool {
	return !p.Off && positive(p.Window) && positive(p.MSS) && p.RTT > 0
}

// packets returns p's window in segments (Window/MSS).
func (p *Path) packets() float64 { return p.Window / p.MSS }

// rtt returns p's smoothed RTT in seconds.
func (p *Path) rtt() float64 { return p.RTT.Seconds() }
