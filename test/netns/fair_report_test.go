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

// orderStats are one flow's ratios in one cell and start order.
type orderStats struct {
	n        int
	med, lo  float64
	hi       float64
	ratios   []float64
	idle     []float64
	diags    []*fairRun
	finished bool
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

// groupFair groups runs by cell and flow, in first-seen order.
func groupFair(runs []*fairRun) []*cellFlow {
	var out []*cellFlow
	idx := map[string]*cellFlow{}
	for _, r := range runs {
		k := r.cell.String() + "|" + r.flow.name()
		cf := idx[k]
		if cf == nil {
			cf = &cellFlow{cell: r.cell, flow: r.flow.name(), kind: r.flow.kind, paths: r.flow.paths}
			idx[k] = cf
			out = append(out, cf)
		}
		o := &cf.order[0]
		if r.oursFirst {
			o = &cf.order[1]
		}
		o.ratios = append(o.ratios, r.ratio())
		o.idle = append(o.idle, r.idle)
		o.diags = append(o.diags, r)
	}
	for _, cf := range out {
		for i := range cf.order {
			o := &cf.order[i]
			o.n = len(o.ratios)
			if o.n > 0 {
				o.med, o.lo, o.hi = median(o.ratios), slices.Min(o.ratios), slices.Max(o.ratios)
			}
		}
	}
	return out
}

// fairTarget is issue 23's target for one cell and path count: the
// geometric mean over both orders of olia + reno-friendly at most
// targetTCP (1.25 × TCP's, which is 1.0 by symmetry) and at most kernel
// MPTCP's with the same paths.
type fairTarget struct {
	cell       fairCell
	paths      int
	rf, mptcp  float64 // geometric means
	tcp        float64 // the TCP control's measured geometric mean (1.0 in theory)
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
		if m == nil || tc == nil || tg.rf == 0 {
			tg.missing = true
			out = append(out, tg)
			continue
		}
		tg.mptcp, _, _ = m.geo()
		tg.tcp, _, _ = tc.geo()
		tg.vsTCP = tg.rf <= targetTCP
		tg.vsM = tg.rf <= tg.mptcp
		tg.met = tg.vsTCP && tg.vsM
		out = append(out, tg)
	}
	return out
}

// fairReport is the markdown report: the share table per class, the
// per-order table, the target per cell, and the diagnostics.
func fairReport(runs []*fairRun, m fairMatrix, elapsed time.Duration, source string) string {
	cfs := groupFair(runs)
	var b strings.Builder
	fmt.Fprintf(&b, "# Fairness matrix (issue 23)\n\n")
	fmt.Fprintf(&b, "%d runs in %v, %d per flow and cell (start order alternating), %d MiB per flow, the second flow %v after the first, window from %v after the second start until the first flow ends. Bottleneck %d Mbit/s tbf, queue in BDPs of the competitor's %d ms path (%d B); competitor TCP reno on 20 ms. Normal-class runs wait for ≥ %.0f%% idle CPU (1 s samples). Figures: the flow's L2 rate over the competitor's in the window.\n\n",
		len(runs), elapsed.Round(time.Second), m.runs, fairSize>>20, fairStagger, fairWarmup, fairRateMbit, fairCompRTTms, fairBDPBytes, 100*fairIdleMin)
	fmt.Fprintf(&b, "%s\n\n", source)
	var flows []string
	for _, cf := range cfs {
		if !slices.Contains(flows, cf.flow) {
			flows = append(flows, cf.flow)
		}
	}
	var cells []fairCell
	for _, cf := range cfs {
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
	fmt.Fprintf(&b, "Each entry: √(median competitor first × median flow first), and in brackets √(min·min) to √(max·max).\n\n")
	fmt.Fprintf(&b, "| class | queue | RTT | idle | %s |\n|---|---|---|---|%s\n", strings.Join(flows, " | "), strings.Repeat("---|", len(flows)))
	for _, c := range cells {
		var idle []float64
		for _, r := range runs {
			if r.cell == c {
				idle = append(idle, r.idle)
			}
		}
		fmt.Fprintf(&b, "| %s | %g BDP | %d ms | %s |", c.class, c.queue, fairCompRTTms*c.rttX, idleRange(idle))
		for _, f := range flows {
			cf := get(c, f)
			if cf == nil {
				b.WriteString(" – |")
				continue
			}
			g, lo, hi := cf.geo()
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
		fmt.Fprintf(&b, "| %s | %g BDP | %d ms |", c.class, c.queue, fairCompRTTms*c.rttX)
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
	tgs := fairTargets(cfs)
	if len(tgs) > 0 {
		met := 0
		for _, tg := range tgs {
			if tg.met {
				met++
			}
		}
		fmt.Fprintf(&b, "\n## Target: olia-rf's geometric mean ≤ %.2f and ≤ kernel MPTCP's (same paths): met in %d of %d\n\n", targetTCP, met, len(tgs))
		fmt.Fprintf(&b, "| class | queue | RTT | paths | olia-rf | kernel MPTCP | TCP control | target |\n|---|---|---|---|---|---|---|---|\n")
		for _, tg := range tgs {
			verdict := "met"
			switch {
			case tg.missing:
				verdict = "not measured"
			case !tg.vsTCP && !tg.vsM:
				verdict = "**NOT met** (> 1.25, > MPTCP)"
			case !tg.vsTCP:
				verdict = "**NOT met** (> 1.25)"
			case !tg.vsM:
				verdict = "**NOT met** (> MPTCP)"
			}
			fmt.Fprintf(&b, "| %s | %g BDP | %d ms | %d | %.2f | %.2f | %.2f | %s |\n", tg.cell.class, tg.cell.queue, fairCompRTTms*tg.cell.rttX, tg.paths, tg.rf, tg.mptcp, tg.tcp, verdict)
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
	fmt.Fprintf(&b, "\n## Why: per flow (medians over the cell's runs; flow / competitor where both)\n\n")
	fmt.Fprintf(&b, "loss: packets dropped at the queue over the run; cuts: window reductions over the run (TCP, MPTCP: recovery episodes + RTOs, nstat of the flow's own server namespace; QUIC: quic-go's entries into recovery, server qlog, summed over paths); undo: TCP undos / quic-go spurious losses; SS: share of the window in slow start (TCP: tcp_info every 20 ms; QUIC: qlog); app-lim: quic-go application-limited share of the window; burst: packets per back-to-back burst as a packet sees it (gaps ≤ 100 µs, capture before the queue); ≥5: share of packets in bursts of 5 or more; pkts/ACK: data packets per packet sent back by the client.\n\n")
	fmt.Fprintf(&b, "| cell | flow | ratio | loss | cuts | undo | SS | app-lim | burst | ≥5 | pkts/ACK |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, cf := range cfs {
		var rs []*fairRun
		for _, o := range cf.order {
			rs = append(rs, o.diags...)
		}
		med := func(f func(*fairRun) float64) float64 {
			var x []float64
			for _, r := range rs {
				x = append(x, f(r))
			}
			return median(x)
		}
		kind := cf.kind
		quic := kind == "quic" || kind == "session"
		undo := med(func(r *fairRun) float64 { return float64(r.diag.tcpOurs.undos) })
		appLim := "–"
		if quic {
			undo = med(func(r *fairRun) float64 { return float64(r.diag.quic.spurious) })
			appLim = fmt.Sprintf("%.0f%%", 100*med(func(r *fairRun) float64 { return r.diag.quic.appLimited }))
		}
		fmt.Fprintf(&b, "| %s | %s | %.2f | %.2f%% / %.2f%% | %.0f / %.0f | %.0f / %.0f | %.0f%% / %.0f%% | %s | %.1f / %.1f | %.0f%% / %.0f%% | %.2f / %.2f |\n",
			cf.cell, cf.flow, med(func(r *fairRun) float64 { return r.ratio() }),
			100*med(func(r *fairRun) float64 { return r.diag.lossOurs }), 100*med(func(r *fairRun) float64 { return r.diag.lossComp }),
			med(func(r *fairRun) float64 { return r.diag.reductions(kind) }), med(func(r *fairRun) float64 { return float64(r.diag.tcpComp.recoveries + r.diag.tcpComp.rtos) }),
			undo, med(func(r *fairRun) float64 { return float64(r.diag.tcpComp.undos) }),
			100*med(func(r *fairRun) float64 { return r.diag.slowStart(kind) }), 100*med(func(r *fairRun) float64 { return r.diag.tiComp.slowStart }),
			appLim,
			med(func(r *fairRun) float64 { return r.diag.bOurs.mean }), med(func(r *fairRun) float64 { return r.diag.bComp.mean }),
			100*med(func(r *fairRun) float64 { return r.diag.bOurs.in5 }), 100*med(func(r *fairRun) float64 { return r.diag.bComp.in5 }),
			med(func(r *fairRun) float64 { return r.diag.ackOurs }), med(func(r *fairRun) float64 { return r.diag.ackComp }))
	}
	return b.String()
}

// fairRunJSON is one run as runs.jsonl records it.
type fairRunJSON struct {
	N          int     `json:"n"`
	Class      string  `json:"class"`
	QueueBDP   float64 `json:"queue_bdp"`
	RTTms      int     `json:"rtt_ms"`
	Flow       string  `json:"flow"`
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
	CutsComp   uint64  `json:"cuts_comp"`
	UndoOurs   float64 `json:"undo_ours"`
	SSOurs     float64 `json:"slow_start_ours"`
	SSComp     float64 `json:"slow_start_comp"`
	AppLimited float64 `json:"app_limited_ours,omitempty"`
	CwndLim    float64 `json:"cwnd_limited_ours,omitempty"`
	BurstOurs  float64 `json:"burst_ours"`
	BurstComp  float64 `json:"burst_comp"`
	AckOurs    float64 `json:"pkts_per_ack_ours"`
	AckComp    float64 `json:"pkts_per_ack_comp"`
	Retrans    uint64  `json:"retrans_ours"`
	Redundant  uint64  `json:"redundant_bytes_ours"`
	Detail     string  `json:"detail"`
}

// writeFairOut writes report.md and runs.jsonl into dir.
func writeFairOut(dir, report string, runs []*fairRun) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "report.md"), []byte(report), 0o644); err != nil {
		return err
	}
	var b strings.Builder
	for _, r := range runs {
		g := &r.diag
		undo := float64(g.tcpOurs.undos)
		if r.flow.kind == "quic" || r.flow.kind == "session" {
			undo = float64(g.quic.spurious)
		}
		j, _ := json.Marshal(fairRunJSON{
			N: r.n, Class: r.cell.class, QueueBDP: r.cell.queue, RTTms: fairCompRTTms * r.cell.rttX, Flow: r.flow.name(), Paths: r.flow.paths,
			OursFirst: r.oursFirst, WindowS: r.to.Sub(r.from).Seconds(), OursMbit: r.oursBps / 1e6, CompMbit: r.compBps / 1e6, Ratio: r.ratio(),
			Idle: r.idle, IdleWaitS: r.idleWaited.Seconds(), Load: r.load, LossOurs: g.lossOurs, LossComp: g.lossComp,
			CutsOurs: g.reductions(r.flow.kind), CutsComp: g.tcpComp.recoveries + g.tcpComp.rtos, UndoOurs: undo,
			SSOurs: g.slowStart(r.flow.kind), SSComp: g.tiComp.slowStart, AppLimited: g.quic.appLimited, CwndLim: g.quic.cwndLimited,
			BurstOurs: g.bOurs.mean, BurstComp: g.bComp.mean, AckOurs: g.ackOurs, AckComp: g.ackComp,
			Retrans: g.retransOurs, Redundant: g.redundantOurs, Detail: g.line(),
		})
		b.Write(j)
		b.WriteByte('\n')
	}
	return os.WriteFile(filepath.Join(dir, "runs.jsonl"), []byte(b.String()), 0o644)
}
