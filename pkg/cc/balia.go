package cc

// NameBALIA is the registry name of BALIA.
const NameBALIA = "balia"

// baliaMaxDecrease caps alpha_r in BALIA's decrease: min(alpha_r, 1.5).
const baliaMaxDecrease = 1.5

// BALIA is the Balanced Linked Adaptation algorithm (Peng, Walid, Hwang,
// Low, "Multipath TCP: Analysis, Design, and Implementation", IEEE/ACM ToN
// 24(1), 2016; draft-walid-mptcp-congestion-control-04 §3). With windows
// w_k in segments, smoothed RTTs tau_k, rates x_k = w_k/tau_k and
// alpha_r = max_k x_k / x_r:
//
//	for each ACK on path r, increase w_r by
//	    (x_r/tau_r) / (Σ_k x_k)²  ·  (1+alpha_r)/2  ·  (4+alpha_r)/5
//	for each loss on path r, decrease w_r by
//	    (w_r/2) · min(alpha_r, 1.5)
//
// With one path (alpha = 1) both are Reno's. A path slower than the fastest
// (alpha_r > 1) grows faster than LIA would let it and backs off by up to
// three quarters of its window. As for OLIA, acked bytes on path r are
// acked/MSS_r segments, so the increase in bytes is acked × the per-ACK
// formula.
type BALIA struct{}

var _ Coupling = BALIA{}

// Name returns NameBALIA.
func (BALIA) Name() string { return NameBALIA }

// Alpha returns BALIA's alpha_r = max_k x_k / x_r of path i
// (dimensionless, at least 1), or 0 if i is not a coupled path.
func (BALIA) Alpha(i int, paths []Path) float64 {
	if i < 0 || i >= len(paths) || !paths[i].coupled() {
		return 0
	}
	_, maxRate := baliaRates(paths)
	return clean(maxRate / baliaRate(&paths[i]))
}

// Acked returns BALIA's increase of path i in bytes. A path that is not
// coupled (no RTT sample yet, or Off) grows as Reno.
func (b BALIA) Acked(i int, acked float64, paths []Path) float64 {
	if i < 0 || i >= len(paths) || !positive(acked) {
		return 0
	}
	p := &paths[i]
	if !p.coupled() {
		return uncoupledIncrease(acked, p)
	}
	sum, maxRate := baliaRates(paths)
	x := baliaRate(p)
	a := maxRate / x
	perSegment := (x / p.rtt()) / (sum * sum) * (1 + a) / 2 * (4 + a) / 5
	return clean(acked * perSegment)
}

// Lost returns path i's window less (Window/2)·min(alpha_i, 1.5), at least
// MinWindow. A path that is not coupled halves, as Reno.
func (b BALIA) Lost(i int, paths []Path) float64 {
	if i < 0 || i >= len(paths) {
		return 0
	}
	p := &paths[i]
	if !p.coupled() {
		return halved(p)
	}
	a := min(b.Alpha(i, paths), baliaMaxDecrease)
	if a == 0 { // overflowed rates: fall back to Reno's halving
		return halved(p)
	}
	return max(p.Window-p.Window/2*a, MinWindow(p.MSS))
}

// baliaRate is x_r = w_r/tau_r in segments per second.
func baliaRate(p *Path) float64 { return p.packets() / p.rtt() }

// baliaRates returns Σ_k x_k and max_k x_k over the coupled paths.
func baliaRates(paths []Path) (sum, maxRate float64) {
	for k := range paths {
		if p := &paths[k]; p.coupled() {
			x := baliaRate(p)
			sum += x
			maxRate = max(maxRate, x)
		}
	}
	return sum, maxRate
}
