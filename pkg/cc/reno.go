package cc

// NameNone is the uncoupled rule: every path runs its own Reno.
const NameNone = "none"

// NameRenoFriendly is the TCP-friendly mode: standard Reno (β = 0.5, no undo)
// on each path's session-level window, even with one path.
const NameRenoFriendly = "reno-friendly"

// Reno is uncoupled Reno: each path grows by MSS·acked/Window per
// acknowledgement and halves on a loss event, whatever the other paths do.
//
// The same rule answers to two names. "none" is the default: the session
// adds nothing beyond quic-go's own window. "reno-friendly" asks the session
// to run this rule as a second window under quic-go's, because quic-go's
// NewReno is not standard Reno: it backs off to 0.7 of its window
// (renoBeta), undoes a cutback when the loss is later judged spurious
// (OnSpuriousLoss), starts from 32 packets and paces. The session-level
// window of reno-friendly backs off to 0.5 and never undoes, so where it is
// the smaller window, the path reacts to loss as a kernel TCP reno flow does.
type Reno struct {
	// Friendly selects the name NameRenoFriendly instead of NameNone; the
	// rule is the same.
	Friendly bool
}

var _ Coupling = Reno{}

// Name returns NameRenoFriendly if r.Friendly, else NameNone.
func (r Reno) Name() string {
	if r.Friendly {
		return NameRenoFriendly
	}
	return NameNone
}

// Acked returns Reno's increase in bytes: acked·MSS/Window of path i
// (RFC 5681 §3.1, cwnd += SMSS*SMSS/cwnd per full-sized ACK, counted in
// bytes as RFC 3465 does). The other paths do not matter.
func (Reno) Acked(i int, acked float64, paths []Path) float64 {
	if i < 0 || i >= len(paths) || !positive(acked) {
		return 0
	}
	return uncoupledIncrease(acked, &paths[i])
}

// Lost returns max(Window/2, MinWindow) of path i (RFC 5681 §3.1, eq. 4).
func (Reno) Lost(i int, paths []Path) float64 {
	if i < 0 || i >= len(paths) {
		return 0
	}
	return halved(&paths[i])
}
