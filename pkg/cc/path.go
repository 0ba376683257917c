package cc

// OnAcked counts bytes newly acknowledged on the path into SinceLoss (OLIA's
// l2r). Non-positive or non-finite counts are ignored.
func (p *Path) OnAcked(bytes float64) {
	if positive(bytes) {
		p.SinceLoss += bytes
	}
}

// OnLoss records one loss event on the path (call it once per window
// reduction, where Lost is applied): SinceLoss becomes BetweenLosses (l1r)
// and SinceLoss starts again from 0.
func (p *Path) OnLoss() {
	p.BetweenLosses = p.SinceLoss
	p.SinceLoss = 0
}

// lossInterval is OLIA's l_r in bytes, max(l1r, l2r): the smoothed estimate
// of the bytes delivered between losses. NaN or negative counters read as 0.
func (p *Path) lossInterval() float64 {
	l := 0.0
	if positive(p.BetweenLosses) {
		l = p.BetweenLosses
	}
	if positive(p.SinceLoss) && p.SinceLoss > l {
		l = p.SinceLoss
	}
	return l
}

// uncoupledIncrease is Reno's congestion-avoidance increase in bytes for
// acked bytes on p: acked·MSS/Window (RFC 5681 §3.1 with byte counting,
// RFC 3465), or 0 for a path without a usable window or MSS.
func uncoupledIncrease(acked float64, p *Path) float64 {
	if !positive(p.Window) || !positive(p.MSS) {
		return 0
	}
	return clean(acked * p.MSS / p.Window)
}

// halved is Reno's window after a loss event: max(Beta·Window, MinWindow).
func halved(p *Path) float64 {
	floor := MinWindow(p.MSS)
	if !positive(p.Window) {
		return floor
	}
	return max(Beta*p.Window, floor)
}

// clean returns v, or 0 if v is NaN or infinite (from overflowing sums).
func clean(v float64) float64 {
	if !finite(v) {
		return 0
	}
	return v
}
