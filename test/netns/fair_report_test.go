package netns

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// fairIdleGate waits, for a normal-class run, until the machine is quiet:
// CPU idle (idle + iowait over all CPUs, /proc/stat) at least fairIdleMin
// over a fairIdleSample, for at most MPQ_FAIR_IDLE_WAIT (default 60 s) per
// run and MPQ_FAIR_IDLE_BUDGET (default 45 min) over the whole matrix
// (budget: the time waited so far, updated); after that it only samples.
// It returns the last sample's idle fraction and how long it waited. An
// rt-class run only samples (real-time flows preempt the rest).
func fairIdleGate(class string, budget *time.Duration) (float64, time.Duration) {
	start := time.Now()
	limit := 60 * time.Second
	if v, err := time.ParseDuration(os.Getenv("MPQ_FAIR_IDLE_WAIT")); err == nil {
		limit = v
	}
	total := 45 * time.Minute
	if v, err := time.ParseDuration(os.Getenv("MPQ_FAIR_IDLE_BUDGET")); err == nil {
		total = v
	}
	for {
		idle := idleOver(fairIdleSample)
		waited := time.Since(start)
		if class != "normal" || idle >= fairIdleMin || waited >= limit || *budget+waited >= total {
			if class == "normal" {
				*budget += waited
			}
			return idle, waited
		}
	}
}

const (
	fairIdleMin    = 0.90
	fairIdleSample = time.Second
)

// idleOver is the machine's idle CPU fraction over d.
func idleOver(d time.Duration) float64 {
	a, ta := cpuIdle()
	time.Sleep(d)
	b, tb := cpuIdle()
	if tb <= ta {
		return 0
	}
	return float64(b-a) / float64(tb-ta)
}

// cpuIdle reads the "cpu" line of /proc/stat: idle+iowait and total
// jiffies.
func cpuIdle() (idle, total uint64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	return parseCPUIdle(string(b))
}

// parseCPUIdle reads idle+iowait and the total from /proc/stat's first
// line ("cpu user nice system idle iowait irq softirq steal …"; guest
// time is already in user).
func parseCPUIdle(s string) (idle, total uint64) {
	line, _, _ := strings.Cut(s, "\n")
	f := strings.Fields(line)
	if len(f) < 6 || f[0] != "cpu" {
		return 0, 0
	}
	for i, v := range f[1:] {
		if i >= 8 { // guest, guest_nice are counted in user, nice
			break
		}
		n, _ := strconv.ParseUint(v, 10, 64)
		total += n
		if i == 3 || i == 4 {
			idle += n
		}
	}
	return idle, total
}

// fairRec is one run as runs.jsonl records it: what the report is made
// of, so that a report can be made again from the file
// (TestFairnessReport).
type fairRec struct {
	N          int     `json:"n"`
	Class      string  `json:"class"`
	QueueBDP   float64 `json:"queue_bdp"`
	RTTms      int     `json:"rtt_ms"` // the flow's RTT; 0: mixed (fairRTTMixed, paths of 20 and 60 ms)
	Flow       string  `json:"flow"`
	Kind       string  `json:"kind"`
	Paths      int     `json:"paths"`
	OursFirst  bool    `json:"ours_first"`
	WindowS    float64 `json:"window_s"`
	OursMbit   float64 `json:"ours_mbit"`
	CompMbit   float64 `json:"comp_mbit"`
	Ratio      float64 `json:"ratio"`
	Idle       float64 `json:"idle"`
	IdleWaitS  float64 `json:"idle_wait_s"`
	Load       string  `json:"load"`
	LossOurs   float64 `json:"loss_ours"`
	LossComp   float64 `json:"loss_comp"`
	CutsOurs   float64 `json:"cuts_ours"`
	CutsComp   float64 `json:"cuts_comp"`
	CutsWinO   float64 `json:"cuts_window_ours"` // reductions in the window: TCP, MPTCP from tcp_info (20 ms), QUIC from qlog
	CutsWinC   float64 `json:"cuts_window_comp"`
	FCTOurs    float64 `json:"fct_ours_s"`
	FCTComp    float64 `json:"fct_comp_s"`
	UndoOurs   float64 `json:"undo_ours"`
	UndoComp   float64 `json:"undo_comp"`
	SSOurs     float64 `json:"slow_start_ours"`
	SSComp     float64 `json:"slow_start_comp"`
	AppLimited float64 `json:"app_limited_ours"`
	CwndLim    float64 `json:"cwnd_limited_ours"`
	BurstOurs  float64 `json:"burst_ours"`
	BurstComp  float64 `json:"burst_comp"`
	In5Ours    float64 `json:"in5_ours"`
	In5Comp    float64 `json:"in5_comp"`
	AckOurs    float64 `json:"pkts_per_ack_ours"`
	AckComp    float64 `json:"pkts_per_ack_comp"`
	SessCuts   float64 `json:"session_cuts,omitempty"`
	SessUndos  float64 `json:"session_undos,omitempty"`
	Governed   float64 `json:"coupled_governed,omitempty"`
	Retrans    uint64  `json:"retrans_ours"`
	Redundant  uint64  `json:"redundant_bytes_ours"`
	Detail     string  `json:"detail"`
}

// cell is the record's bottleneck condition.
func (r *fairRec) cell() fairCell {
	return fairCell{queue: r.QueueBDP, rttX: r.RTTms / fairCompRTTms, class: r.Class}
}

// quic reports whether the flow is QUIC (its diagnostics come from qlog).
func (r *fairRec) quic() bool { return r.Kind == "quic" || r.Kind == "session" }

// recOf turns a run into its record.
func recOf(r *fairRun) fairRec {
	g := &r.diag
	undo := float64(g.tcpOurs.undos)
	if r.flow.kind == "quic" || r.flow.kind == "session" {
		undo = float64(g.quic.spurious)
	}
	return fairRec{
		N: r.n, Class: r.cell.class, QueueBDP: r.cell.queue, RTTms: fairCompRTTms * r.cell.rttX, Flow: r.flow.name(), Kind: r.flow.kind, Paths: r.flow.paths,
		OursFirst: r.oursFirst, WindowS: r.to.Sub(r.from).Seconds(), OursMbit: r.oursBps / 1e6, CompMbit: r.compBps / 1e6, Ratio: r.ratio(),
		Idle: r.idle, IdleWaitS: r.idleWaited.Seconds(), Load: r.load, LossOurs: g.lossOurs, LossComp: g.lossComp,
		CutsOurs: g.reductions(r.flow.kind), CutsComp: float64(g.tcpComp.recoveries + g.tcpComp.rtos), UndoOurs: undo, UndoComp: float64(g.tcpComp.undos),
		CutsWinO: g.cutsInWindow(r.flow.kind), CutsWinC: float64(g.tiComp.cuts), FCTOurs: r.ours.FCTSeconds, FCTComp: r.comp.FCTSeconds,
		SSOurs: g.slowStart(r.flow.kind), SSComp: g.tiComp.slowStart, AppLimited: g.quic.appLimited, CwndLim: g.quic.cwndLimited,
		BurstOurs: g.bOurs.mean, BurstComp: g.bComp.mean, In5Ours: g.bOurs.in5, In5Comp: g.bComp.in5, AckOurs: g.ackOurs, AckComp: g.ackComp,
		SessCuts: g.ccCuts, SessUndos: g.ccUndos, Governed: g.ccGoverned,
		Retrans: g.retransOurs, Redundant: g.redundantOurs, Detail: g.line(),
	}
}

// orderStats are one flow's runs in one cell and start order.
type orderStats struct {
	n           int
	med, lo, hi float64
	recs        []*fairRec
}

// cellFlow are a flow's runs in a cell, by start order (0: competitor
// first, 1: flow first).
type cellFlow struct {
	cell  fairCell
	flow  string
	kind  string
	paths int
	order [2]orderStats
}

// geo is the geometric mean of the two orders' medians, with the range
// the orders' extremes give: √(lo₀·lo₁) to √(hi₀·hi₁). 0 if an order has
// no run.
func (cf *cellFlow) geo() (g, lo, hi float64) {
	a, b := &cf.order[0], &cf.order[1]
	if a.n == 0 || b.n == 0 {
		return 0, 0, 0
	}
	return math.Sqrt(a.med * b.med), math.Sqrt(a.lo * b.lo), math.Sqrt(a.hi * b.hi)
}

// recs are all the flow's records in the cell.
func (cf *cellFlow) recs() []*fairRec {
	return append(slices.Clone(cf.order[0].recs), cf.order[1].recs...)
}

// groupFair groups records by cell and flow, in first-seen order.
func groupFair(recs []fairRec) []*cellFlow {
	var out []*cellFlow
	idx := map[string]*cellFlow{}
	for i := range recs {
		r := &recs[i]
		k := r.cell().String() + "|" + r.Flow
		cf := idx[k]
		if cf == nil {
			cf = &cellFlow{cell: r.cell(), flow: r.Flow, kind: r.Kind, paths: r.Paths}
			idx[k] = cf
			out = append(out, cf)
		}
		o := &cf.order[0]
		if r.OursFirst {
			o = &cf.order[1]
		}
		o.recs = append(o.recs, r)
	}
	for _, cf := range out {
		for i := range cf.order {
			o := &cf.order[i]
			o.n = len(o.recs)
			if o.n > 0 {
				x := medOf(o.recs, func(r *fairRec) float64 { return r.Ratio })
				o.med = x
				o.lo, o.hi = math.Inf(1), math.Inf(-1)
				for _, r := range o.recs {
					o.lo, o.hi = min(o.lo, r.Ratio), max(o.hi, r.Ratio)
				}
			}
		}
	}
	return out
}

// medOf is the median of f over rs (0 if none).
func medOf(rs []*fairRec, f func(*fairRec) float64) float64 {
	if len(rs) == 0 {
		return 0
	}
	x := make([]float64, len(rs))
	for i, r := range rs {
		x[i] = f(r)
	}
	return median(x)
}

// fairTarget is issue 23's target for one cell and path count: the
// geometric mean over both orders of olia + reno-friendly at most
// targetTCP × TCP's and at most kernel MPTCP's with the same paths.
// TCP's is 1.0 where the flow's RTT is the competitor's (the TCP control
// and the competitor are then the same flow on twin paths: 1.0 by
// symmetry, the measured figure being noise around it) and the TCP
// control's measured geometric mean where it is 3× longer.
type fairTarget struct {
	cell       fairCell
	paths      int
	rf, mptcp  float64 // geometric means
	tcp        float64 // the TCP control's measured geometric mean
	bound      float64 // targetTCP × TCP's
	met        bool
	missing    bool // a flow of the comparison did not run
	vsTCP, vsM bool // each half of the target
}

const targetTCP = 1.25

// fairTargets evaluates the target wherever olia-rf ran.
func fairTargets(cfs []*cellFlow) []fairTarget {
	find := func(c fairCell, name string) *cellFlow {
		for _, cf := range cfs {
			if cf.cell == c && cf.flow == name {
				return cf
			}
		}
		return nil
	}
	var out []fairTarget
	for _, cf := range cfs {
		if !strings.HasPrefix(cf.flow, "olia-rf/") {
			continue
		}
		tg := fairTarget{cell: cf.cell, paths: cf.paths}
		tg.rf, _, _ = cf.geo()
		m, tc := find(cf.cell, fmt.Sprintf("mptcp/%d", cf.paths)), find(cf.cell, "tcp")
		if m != nil {
			tg.mptcp, _, _ = m.geo()
		}
		if tc != nil {
			tg.tcp, _, _ = tc.geo()
		}
		ref := 1.0
		if cf.cell.rttX == 3 { // mixed: the one-path flows (TCP's control among them) run at 20 ms
			ref = tg.tcp
		}
		tg.bound = targetTCP * ref
		if tg.rf == 0 || tg.mptcp == 0 || tg.bound == 0 {
			tg.missing = true
			out = append(out, tg)
			continue
		}
		tg.vsTCP = tg.rf <= tg.bound
		tg.vsM = tg.rf <= tg.mptcp
		tg.met = tg.vsTCP && tg.vsM
		out = append(out, tg)
	}
	return out
}

// fairReport is the markdown report: the share table, the per-order
// table, the target per cell, and the diagnostics.
func fairReport(recs []fairRec, runs int, header string) string {
	cfs := groupFair(recs)
	var b strings.Builder
	fmt.Fprintf(&b, "# Fairness matrix (issue 23)\n\n")
	fmt.Fprintf(&b, "%d runs, %d per flow and cell (start order alternating), %d MiB per flow, the second flow %v after the first, window from %v after the second start until the first flow ends. Bottleneck %d Mbit/s tbf, queue in BDPs of the competitor's %d ms path (%d B); competitor TCP reno on %d ms. Normal-class runs wait for ≥ %.0f%% idle CPU (1 s samples). Figures: the flow's L2 rate over the competitor's in the window.\n\n",
		len(recs), runs, fairSize>>20, fairStagger, fairWarmup, fairRateMbit, fairCompRTTms, fairBDPBytes, fairCompRTTms, 100*fairIdleMin)
	if header != "" {
		fmt.Fprintf(&b, "%s\n\n", header)
	}
	var flows []string
	var cells []fairCell
	for _, cf := range cfs {
		if !slices.Contains(flows, cf.flow) {
			flows = append(flows, cf.flow)
		}
		if !slices.Contains(cells, cf.cell) {
			cells = append(cells, cf.cell)
		}
	}
	get := func(c fairCell, f string) *cellFlow {
		for _, cf := range cfs {
			if cf.cell == c && cf.flow == f {
				return cf
			}
		}
		return nil
	}
	fmt.Fprintf(&b, "## Geometric mean over both start orders: median (range)\n\n")
	fmt.Fprintf(&b, "Each entry: √(median competitor first × median flow first), and in brackets √(min·min) to √(max·max). idle: the machine's idle CPU before the runs, median (minimum).\n\n")
	fmt.Fprintf(&b, "| class | queue | RTT | idle | %s |\n|---|---|---|---|%s\n", strings.Join(flows, " | "), strings.Repeat("---|", len(flows)))
	for _, c := range cells {
		var idle []float64
		for i := range recs {
			if recs[i].cell() == c {
				idle = append(idle, recs[i].Idle)
			}
		}
		fmt.Fprintf(&b, "| %s | %g BDP | %s | %s |", c.class, c.queue, c.rttLabel(), idleRange(idle))
		for _, f := range flows {
			cf := get(c, f)
			g, lo, hi := 0.0, 0.0, 0.0
			if cf != nil {
				g, lo, hi = cf.geo()
			}
			if g == 0 {
				b.WriteString(" – |")
				continue
			}
			fmt.Fprintf(&b, " %.2f (%.2f-%.2f) |", g, lo, hi)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\n## Per start order: median (range), competitor first / flow first\n\n")
	fmt.Fprintf(&b, "| class | queue | RTT | %s |\n|---|---|---|%s\n", strings.Join(flows, " | "), strings.Repeat("---|", len(flows)))
	for _, c := range cells {
		fmt.Fprintf(&b, "| %s | %g BDP | %s |", c.class, c.queue, c.rttLabel())
		for _, f := range flows {
			cf := get(c, f)
			if cf == nil {
				b.WriteString(" – |")
				continue
			}
			var parts []string
			for _, o := range cf.order {
				if o.n == 0 {
					parts = append(parts, "–")
					continue
				}
				parts = append(parts, fmt.Sprintf("%.2f (%.2f-%.2f)", o.med, o.lo, o.hi))
			}
			fmt.Fprintf(&b, " %s |", strings.Join(parts, " / "))
		}
		b.WriteString("\n")
	}
	if tgs := fairTargets(cfs); len(tgs) > 0 {
		met := 0
		for _, tg := range tgs {
			if tg.met {
				met++
			}
		}
		fmt.Fprintf(&b, "\n## Target: olia-rf's geometric mean ≤ %.2f × TCP's (1.0 at equal RTTs, the TCP control's at 3×) and ≤ kernel MPTCP's (same paths): met in %d of %d\n\n", targetTCP, met, len(tgs))
		fmt.Fprintf(&b, "| class | queue | RTT | paths | olia-rf | bound | kernel MPTCP | TCP control | target |\n|---|---|---|---|---|---|---|---|---|\n")
		for _, tg := range tgs {
			verdict := "met"
			switch {
			case tg.missing:
				verdict = "not measured"
			case !tg.vsTCP && !tg.vsM:
				verdict = "**NOT met** (> bound, > MPTCP)"
			case !tg.vsTCP:
				verdict = "**NOT met** (> bound)"
			case !tg.vsM:
				verdict = "**NOT met** (> MPTCP)"
			}
			fmt.Fprintf(&b, "| %s | %g BDP | %s | %d | %.2f | %.2f | %.2f | %.2f | %s |\n", tg.cell.class, tg.cell.queue, tg.cell.rttLabel(), tg.paths, tg.rf, tg.bound, tg.mptcp, tg.tcp, verdict)
		}
	}
	b.WriteString(fairDiagReport(cfs))
	return b.String()
}

// idleRange is the idle fractions' median and minimum, "–" if none.
func idleRange(xs []float64) string {
	if len(xs) == 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f%% (min %.0f%%)", 100*median(xs), 100*slices.Min(xs))
}

// fairDiagReport is the diagnostics table: per cell and flow, medians
// over its runs.
func fairDiagReport(cfs []*cellFlow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n## Why: per flow (medians over the cell's runs; flow / competitor)\n\n")
	fmt.Fprintf(&b, "loss: packets dropped at the queue over the run; cuts: window reductions over the run (TCP, MPTCP: recovery episodes + RTOs, nstat of the flow's own server namespace; QUIC: quic-go's entries into recovery, server qlog, summed over paths; s: the session's coupled-window cuts, which govern once the coupled window is below quic-go's); undo: TCP undos, quic-go spurious losses; SS: share of the window in slow start (TCP: tcp_info every 20 ms; QUIC: qlog); app-lim: quic-go's application-limited share of the window (for the session: its own window, not quic-go's, held the path); burst: packets per back-to-back burst as a packet sees it (gaps ≤ 100 µs, capture before the queue); ≥5: share of packets in bursts of 5 or more; pkts/ACK: data packets per packet the client sent back.\n\n")
	fmt.Fprintf(&b, "| cell | flow | ratio | loss | cuts | undo | SS | app-lim | burst | ≥5 | pkts/ACK |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, cf := range cfs {
		rs := cf.recs()
		med := func(f func(*fairRec) float64) float64 { return medOf(rs, f) }
		appLim := "–"
		if rs[0].quic() {
			appLim = fmt.Sprintf("%.0f%%", 100*med(func(r *fairRec) float64 { return r.AppLimited }))
		}
		cuts := fmt.Sprintf("%.0f", med(func(r *fairRec) float64 { return r.CutsOurs }))
		if sc := med(func(r *fairRec) float64 { return r.SessCuts }); sc > 0 {
			cuts += fmt.Sprintf(" (s %.0f)", sc)
		}
		fmt.Fprintf(&b, "| %s | %s | %.2f | %.2f%% / %.2f%% | %s / %.0f | %.0f / %.0f | %.0f%% / %.0f%% | %s | %.1f / %.1f | %.0f%% / %.0f%% | %.2f / %.2f |\n",
			cf.cell, cf.flow, med(func(r *fairRec) float64 { return r.Ratio }),
			100*med(func(r *fairRec) float64 { return r.LossOurs }), 100*med(func(r *fairRec) float64 { return r.LossComp }),
			cuts, med(func(r *fairRec) float64 { return r.CutsComp }),
			med(func(r *fairRec) float64 { return r.UndoOurs }), med(func(r *fairRec) float64 { return r.UndoComp }),
			100*med(func(r *fairRec) float64 { return r.SSOurs }), 100*med(func(r *fairRec) float64 { return r.SSComp }),
			appLim,
			med(func(r *fairRec) float64 { return r.BurstOurs }), med(func(r *fairRec) float64 { return r.BurstComp }),
			100*med(func(r *fairRec) float64 { return r.In5Ours }), 100*med(func(r *fairRec) float64 { return r.In5Comp }),
			med(func(r *fairRec) float64 { return r.AckOurs }), med(func(r *fairRec) float64 { return r.AckComp }))
	}
	return b.String()
}

// writeFairOut writes report.md and runs.jsonl into dir.
func writeFairOut(dir, report string, recs []fairRec) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "report.md"), []byte(report), 0o644); err != nil {
		return err
	}
	var b strings.Builder
	for _, r := range recs {
		j, err := json.Marshal(r)
		if err != nil {
			return err
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	return os.WriteFile(filepath.Join(dir, "runs.jsonl"), []byte(b.String()), 0o644)
}

// readFairRecs reads a runs.jsonl.
func readFairRecs(path string) ([]fairRec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []fairRec
	for i, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r fairRec
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, i+1, err)
		}
		if r.Kind == "" { // records written before Kind existed
			r.Kind = kindOfFlow(r.Flow)
		}
		out = append(out, r)
	}
	return out, nil
}

// kindOfFlow is a flow name's kind: tcp, quic, mptcp or session.
func kindOfFlow(name string) string {
	switch {
	case name == "tcp":
		return "tcp"
	case name == "quic-go":
		return "quic"
	case strings.HasPrefix(name, "mptcp/"):
		return "mptcp"
	}
	return "session"
}
