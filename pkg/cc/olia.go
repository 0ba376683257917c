package cc

import "math"

// NameOLIA is the registry name of OLIA.
const NameOLIA = "olia"

// OLIA is the Opportunistic Linked-Increases Algorithm (Khalili, Gast,
// Popovic, Le Boudec, "MPTCP is not Pareto-optimal: performance issues and
// a possible solution", CoNEXT 2012 and IEEE/ACM ToN 2013;
// draft-khalili-mptcp-congestion-control-05). On each ACK on path r it
// increases the window, in segments, by
//
//	(w_r/rtt_r²) / (Σ_p w_p/rtt_p)²  +  alpha_r/w_r
//
// and halves it on a loss. alpha_r moves window from the paths with the
// largest windows to the paths that are presumably best but have smaller
// windows:
//
//	all_paths       P: the established paths (here: the coupled paths)
//	l_r             max(l1r, l2r): bytes acknowledged between the last two
//	                losses, and since the last loss (Path.BetweenLosses,
//	                Path.SinceLoss)
//	best_paths      B: the paths with the largest l_r/rtt_r²
//	max_w_paths     M: the paths with the largest window
//	collected_paths B \ M
//	alpha_r  = (1/|P|) / |B \ M|   if r ∈ B \ M
//	alpha_r  = -(1/|P|) / |M|      if r ∈ M and B \ M is not empty
//	alpha_r  = 0                   otherwise
//
// The first term is the LIA-like coupled term without LIA's alpha; the
// alpha_r terms sum to zero over the paths. Windows enter the formula in
// segments (Window/MSS); acked bytes on path r are acked/MSS_r segments each
// adding the formula's value in segments of MSS_r bytes, so the increase in
// bytes is acked × the formula. l_r/rtt_r² ranks paths by the TCP rate they
// can sustain (l_r ≈ 1/loss probability; TCP's rate ∝ 1/(rtt·√p)), which is
// also how the authors' Linux implementation (mptcp_olia.c) compares them.
// Windows and ranks within a relative 1e-9 of the maximum count as equal.
type OLIA struct{}

var _ Coupling = OLIA{}

// Name returns NameOLIA.
func (OLIA) Name() string { return NameOLIA }

// Alpha returns OLIA's alpha_r of path i (dimensionless, see OLIA), or 0 if
// i is not a coupled path.
func (OLIA) Alpha(i int, paths []Path) float64 {
	if i < 0 || i >= len(paths) || !paths[i].coupled() {
		return 0
	}
	n, maxW, best := 0, 0.0, 0.0
	for k := range paths {
		p := &paths[k]
		if !p.coupled() {
			continue
		}
		n++
		maxW = max(maxW, p.packets())
		best = max(best, oliaRank(p))
	}
	inM := func(p *Path) bool { return near(p.packets(), maxW) }
	inC := func(p *Path) bool { return near(oliaRank(p), best) && !inM(p) }
	m, c := 0, 0
	for k := range paths {
		p := &paths[k]
		if !p.coupled() {
			continue
		}
		if inM(p) {
			m++
		} else if inC(p) {
			c++
		}
	}
	p := &paths[i]
	switch {
	case inC(p):
		return 1 / float64(n) / float64(c)
	case inM(p) && c > 0:
		return -1 / float64(n) / float64(m)
	}
	return 0
}

// Acked returns OLIA's increase of path i in bytes; it is negative for a
// max-window path while some best path has a smaller window. A path that is
// not coupled (no RTT sample yet, or Off) grows as Reno.
func (o OLIA) Acked(i int, acked float64, paths []Path) float64 {
	if i < 0 || i >= len(paths) || !positive(acked) {
		return 0
	}
	p := &paths[i]
	if !p.coupled() {
		return uncoupledIncrease(acked, p)
	}
	rateSum := 0.0
	for k := range paths {
		if q := &paths[k]; q.coupled() {
			rateSum += q.packets() / q.rtt()
		}
	}
	w, r := p.packets(), p.rtt()
	perSegment := (w/(r*r))/(rateSum*rateSum) + o.Alpha(i, paths)/w
	return clean(acked * perSegment)
}

// Lost returns max(Window/2, MinWindow) of path i: "For each loss on path
// r, decrease w_r by w_r/2" (as LIA).
func (OLIA) Lost(i int, paths []Path) float64 {
	if i < 0 || i >= len(paths) {
		return 0
	}
	return halved(&paths[i])
}

// oliaRank is l_r/rtt_r² in bytes per second², the quantity best_paths
// maximises.
func oliaRank(p *Path) float64 {
	r := p.rtt()
	return p.lossInterval() / (r * r)
}

// near reports whether a is within a relative 1e-9 of b.
func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}
