package cc

// NameLIA is the registry name of LIA.
const NameLIA = "lia"

// LIA is the Linked Increases Algorithm of RFC 6356 §3. On each ACK on path
// i it increases the window by
//
//	min(alpha·bytes_acked·MSS_i/cwnd_total, bytes_acked·MSS_i/cwnd_i)   (RFC 6356, eq. 2)
//	alpha = cwnd_total · max_i(cwnd_i/rtt_i²) / (Σ_i cwnd_i/rtt_i)²    (RFC 6356, eq. 3)
//
// with windows in bytes. alpha makes the paths together take what one TCP
// flow would take on the best of them (goals 1 and 2 of RFC 6356 §2); the
// second term caps each path at what TCP would do on it. The decrease is
// standard TCP's: halve (RFC 6356 §3: "the multiplicative decrease of the
// congestion avoidance state [is] the same as in standard TCP").
type LIA struct{}

var _ Coupling = LIA{}

// Name returns NameLIA.
func (LIA) Name() string { return NameLIA }

// Alpha returns RFC 6356's alpha (eq. 3, dimensionless) over the coupled
// paths (see Path.Off and Path.RTT), or 0 if there are none.
func (LIA) Alpha(paths []Path) float64 {
	total, maxTerm, rateSum := 0.0, 0.0, 0.0
	for k := range paths {
		p := &paths[k]
		if !p.coupled() {
			continue
		}
		r := p.rtt()
		total += p.Window
		maxTerm = max(maxTerm, p.Window/(r*r))
		rateSum += p.Window / r
	}
	if total == 0 {
		return 0
	}
	return clean(total * maxTerm / (rateSum * rateSum))
}

// Acked returns RFC 6356's increase of path i in bytes (eq. 2). A path that
// is not coupled (no RTT sample yet, or Off) grows as Reno.
func (l LIA) Acked(i int, acked float64, paths []Path) float64 {
	if i < 0 || i >= len(paths) || !positive(acked) {
		return 0
	}
	p := &paths[i]
	if !p.coupled() {
		return uncoupledIncrease(acked, p)
	}
	total := 0.0
	for k := range paths {
		if paths[k].coupled() {
			total += paths[k].Window
		}
	}
	linked := l.Alpha(paths) * acked * p.MSS / total
	return clean(min(linked, acked*p.MSS/p.Window))
}

// Lost returns max(Window/2, MinWindow) of path i, as standard TCP.
func (LIA) Lost(i int, paths []Path) float64 {
	if i < 0 || i >= len(paths) {
		return 0
	}
	return halved(&paths[i])
}
