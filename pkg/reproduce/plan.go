package reproduce

// The experiment plan and the papers' own tables (the claims are data:
// claims/papers.json, resolved by resolve.go).

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/report"
	"github.com/mpqsched/mpqsched/pkg/scenario"
	"github.com/mpqsched/mpqsched/pkg/stats"
)

// matchAny matches recorded scenario names by glob patterns.
func matchAny(globs ...string) func(string) bool {
	return func(name string) bool {
		for _, g := range globs {
			if ok, _ := filepath.Match(g, name); ok {
				return true
			}
		}
		return false
	}
}

// Scheduler sets of the matrices.
var (
	prsScheds     = []string{"prs", "minrtt", "blest", "ecf", "roundrobin"}
	llhdScheds    = []string{"llhd", "minrtt", "blest", "ecf", "roundrobin"}
	dynamicScheds = []string{"llhd", "minrtt", "blest", "ecf", "roundrobin", "peekaboo"}
	fprsScheds    = []string{"fprs", "minrtt", "blest", "ecf", "prs", "llhd", "roundrobin", "redundant"}
	fprsTPScheds  = []string{"fprs", "minrtt", "blest", "roundrobin", "redundant"}
	classicScheds = []string{"minrtt", "blest", "ecf", "peekaboo"}
)

// Plan is the reproduction: what runs, per paper. Sizes and durations
// are chosen so that `make reproduce` takes about 10 minutes on 2 cores; the
// shrink factors are printed in the report.
func Plan() []Paper {
	return []Paper{
		{
			Key:    "prs",
			Title:  "PRS-MPTCP (Khajekini, Amca, Ulusoy, Ever)",
			Source: "`shared/papers/prs-mptcp.txt` §5-6; scheduler `sched/prs`",
			Setup: []string{
				"They are connected via two wireless interfaces (independent MPTCP subflows) in the access network, with a configured link bandwidth of 100 Mbps and RTT ranging from 10 ms to 100 ms.",
				"In the first scenario, we consider an RTT difference between subflows with a fixed loss rate during the transmission. In this scenario, we set variable RTT ratios (RTT_s to RTT_f) at 1, 4, 8, and 10, where the subflows experience a constant loss rate of 1 %. The second scenario takes into account how various loss rates affect transmission performance when both subflows have the same value of RTT. To evaluate the performance in this instance, different loss rates (LR = {0 %, 0.5 %, 1 %, 3 %, 5 %}) are set for subflows when the RTT of both subflows is the same (RTT = 10 ms). [...] the subflows have different RTT values, with the constant ratio of RTT_s to RTT_f at 4 (where RTT_s = 40 ms and RTT_f = 10 ms). Three sets of values for the loss rates are set for the subflows.",
				"To analyze the behavior of each scheduler algorithm, a 10 MB file is transmitted from the MPTCP sender to the MPTCP receiver throughout each experiment. [...] we run the scenarios for each scheduler ten times and calculate the average of the results.",
				"The comparative results demonstrate that PRS-MPTCP achieves average improvements of 38 %, 37 %, 45 %, and 44 % over BLEST, ECF, RR, and the Default scheduler, respectively. (§6.2, on Fig. 22: the second scenario, equal RTT 10 ms, LR 0-5 %)",
			},
			Ours: "all twelve scenarios of the paper's three experiments (`prs-rtt-ratio-{1,4,8,10}`, `prs-loss-{0,0.5,1,3,5}`, `prs-mixed-*`) at the paper's full size, 10 MB, with PRS, minRTT (the paper's \"Default scheduler\"), BLEST, ECF and round-robin (the paper ran each ten times; our seed count is in the table below). " +
				"The paper's average over Fig. 22 is the change of the mean OOO count over the five loss rates (its Table 6: 13.1 for PRS against 23.38 for the default scheduler is −44%); we compute the same from our means, and also over all twelve scenarios.",
			Matrices: []Matrix{{Scenarios: "prs-rtt-ratio-1,prs-rtt-ratio-4,prs-rtt-ratio-8,prs-rtt-ratio-10,prs-loss-*,prs-mixed-*", Schedulers: prsScheds}},
			Extra:    prsTable6,
			Coupling: "lia", Text: "prs-mptcp.txt",
			CouplingQuotes: []string{
				"We use version 0.96 of the MPTCP Linux Kernel implementation as the common base for all our implementations.",
				"Some commonly used congestion control protocols for MPTCP are OLIA, BALIA, and D-LIA, which employ Additive Increase and Multiplicative Decrease (AIMD) method.",
			},
			Figures: []string{reportFigure("ooo-cdf", "prs-loss-3"), reportFigure("path-share", "prs-loss-3"), reportFigure("fct", "prs-mixed-1-3")},
			Reasons: "The paper counts out-of-order *TCP packets in a Wireshark capture at the server* while its transfers ran at about 62 KB/s (its Tables 4-6), far below the configured 100 Mbit/s, so its subflows were nearly idle and windows tiny; our transfers fill 100 Mbit/s paths and we count *segments that reach the receiver's reorder buffer ahead of a gap*, thousands per run. " +
				"With equal RTTs (the loss scenarios) out-of-order arrival comes from losses, and every scheduler here shares the same per-path NewReno recovery from quic-go, which re-sends lost packets on the same path out of the scheduler's sight; PRS's rules only change which path gets *new* data. " +
				"PRS's four window conditions compare the two paths' RTTs and retransmission rates. In the Fig. 22 experiment the two paths are identical (10 ms, same loss), so its choices follow small random differences between the paths' loss counts (which path counts as fast follows RTT noise, and condition 3 makes PRS wait rather than send on it whenever its retransmission rate is the higher one); in the mixed experiment (10 ms against 40 ms, unequal loss) its conditions hold back the slow path, and that is where our data show its largest reductions (see the most and least favourable scenarios under the tables). " +
				"Fewer seeds than the paper's ten give wide confidence intervals at 1% loss and above.",
		},
		{
			Key:    "llhd",
			Title:  "LLHD (Lubna, Mahmud, Cho)",
			Source: "`shared/papers/llhd.txt` §4; scheduler `sched/llhd`",
			Setup: []string{
				"The emulation time was 300 s and the CCA was LIA.",
				"Two SFs have two bottlenecks with a capacity of BW 10 Mbps and 5 Mbps, path latency of 10 ms and 5 ms, and path loss rate of 1% and 2%, respectively. (Scenario #1)",
				"Two SFs have the same bottleneck capacity of BW 10 Mbps and a delay of 5 ms. However, the path loss rate of SF-1 is 2%, whereas that of SF-2 ranges from 2% to 10%. (Scenario #2)",
				"Two SFs have the same BW of 10 Mbps and a 2% loss rate. However, the delay for SF-1 is 5 ms, but the delay for SF-2 ranges from 5 ms to 25 ms. (Scenario #3)",
				"The route connecting Router-1 to Router-2 and Router-3 to Router-4 has a variable BW ranging from 10 to 30 Mbps, a latency ranging from 10 to 30 ms, and a packet loss rate ranging from 2 to 10%. These factors change throughout time. We transmitted files of various sizes and executes 30 emulation runs for each file size. (comprehensive scenario)",
				"[LLHD] achieves around 25% higher throughput and 45% lower data transmission delay than Linux's default MPTCP scheduler. (abstract)",
			},
			Ours: "throughput from the timed scenarios `llhd-s1`, `llhd-s2`, `llhd-s3` (Table 1 and Fig. 1), shortened from 300 s to 30 s (f = 0.1: the loss and delay steps of s2 and s3 come every 6 s instead of every 60 s); " +
				"\"data transmission delay\" is our **FCT** (the paper reports FCT for Figs. 2-6), from the size and value sweeps `llhd-s1-size` (2 and 10 MB; the 50 and 100 MB variants are left out for CPU), `llhd-s2-loss` and `llhd-s3-delay` (10 MB shortened to 5 MB, f = 0.5), and `llhd-comprehensive` (2 and 10 MB; the paper ran 30 seeds per size). " +
				"Schedulers: LLHD, minRTT (the paper's SRTT, \"Linux's default\"), BLEST, ECF, round-robin, and Peekaboo on the comprehensive scenario.",
			Matrices: []Matrix{
				{Scenarios: "llhd-s1,llhd-s2,llhd-s3", Schedulers: llhdScheds, MaxDur: 30 * time.Second},
				{Scenarios: "llhd-s1-size", Schedulers: llhdScheds, MaxBytes: 10 * scenario.MB, DropShrunk: true},
				{Scenarios: "llhd-s2-loss,llhd-s3-delay", Schedulers: llhdScheds, MaxBytes: 5 * scenario.MB},
				{Scenarios: "llhd-comprehensive", Schedulers: dynamicScheds, MaxBytes: 10 * scenario.MB, DropShrunk: true},
			},
			Extra:    llhdTable1,
			Coupling: "lia", CouplingSaid: true, Text: "llhd.txt",
			CouplingQuotes: []string{"The emulation time was 300 s and the CCA was LIA [23]."},
			Figures:        []string{reportFigure("goodput", "llhd-s2.short"), reportFigure("path-share", "llhd-s1.short"), reportFigure("fct", "llhd-comprehensive@bytes=10MB")},
			Reasons: "LLHD's utility γ = GP/GP_max + 0.001·RTT_max/RTT only chooses among paths *with window room*; with uncoupled NewReno per path (the paper used coupled LIA, whose window cap it names as the reason all its throughputs were low), a bulk transfer keeps both windows full, so every scheduler ends up sending on whichever path has room and the choice rarely matters for throughput. " +
				"The paper's SRTT baseline was throttled by LIA (2.17 Mbit/s of 15 Mbit/s in its Table 1); ours reaches most of the capacity, which leaves little room for +25%. " +
				"Our timed runs last 30 s instead of 300 s, and the delay sweeps move 5 MB instead of 10 MB.",
		},
		{
			Key:    "fprs",
			Title:  "FPRS (Kubde, Sawarkar)",
			Source: "`shared/papers/fprs.txt`, Experiments & Evaluation; scheduler `sched/fprs`",
			Setup: []string{
				"Table 1. Network Specifications: LTE 16 Mbps, RTT 70ms; Wi-Fi 15mps, 60ms; Ethernet 80mbps, 10ms.",
				"Each scheduler generates constant bit rate traffic for 200 seconds iterative.",
				"In a 4K, 200K, 300K, 1000K, and 256MB data volume scenario, the FPRS scheduler gives the quickest delivery time of roughly 34 milliseconds, 40 milliseconds, 55 milliseconds, 100 milliseconds, and 32 seconds. [...] FPRS has a shorter flow completion time than all other packet schedulers",
				"The throughput of all packet schedulers (MinRtt, Blest, Redundant, Roundrobin, and FPRS) over test beds are displayed in Fig 7-9 after successful data transmission in each scenario. The FPRS scheduler outperforms in every situation, as these figs demonstrate.",
			},
			Ours: "download times from `fprs-size-sweep` on the Wi-Fi-Ethernet pair (see the scenario's description for why that pair): 4 KB, 200 KB, 300 KB and 1000 KB at full size, 256 MB shortened to 32 MB (f = 1/8), with FPRS against minRTT, BLEST, ECF, PRS, LLHD, round-robin and redundant. " +
				"Throughput from the three testbeds `fprs-wifi-wifi`, `fprs-wifi-lte`, `fprs-wifi-ethernet`, timed 200 s shortened to 4 s (f = 0.02), with the paper's set: FPRS, minRTT, BLEST, round-robin, redundant.",
			Matrices: []Matrix{
				{Scenarios: "fprs-size-sweep", Schedulers: fprsScheds, MaxBytes: 32 * scenario.MB},
				{Scenarios: "fprs-wifi-wifi,fprs-wifi-lte,fprs-wifi-ethernet", Schedulers: fprsTPScheds, MaxDur: 4 * time.Second},
			},
			Extra:    fprsSizes,
			Coupling: "lia", Text: "fprs.txt",
			CouplingQuotes: []string{"Both have MPTCP enabled Linux Kernels and MTCP versions of 4.19.105 and mptcpv9, respectively."},
			Figures:        []string{reportFigure("fct", "fprs-size-sweep@bytes=1000KB"), reportFigure("ooo-cdf", "fprs-size-sweep@bytes=256MB.short"), reportFigure("path-share", "fprs-wifi-lte.short")},
			Reasons: "Our FCT runs from session open to the last byte, so it includes the QUIC handshake and the request, which go over the scenario's first path, Wi-Fi with a 60 ms RTT: even 4 KB takes about 0.15 s with every scheduler. The paper's 34 ms for 4 KB is below one Wi-Fi RTT, so it cannot have included setup over Wi-Fi, and its absolute times are not comparable with ours. " +
				"For tiny downloads every scheduler sends everything on the first path in the first window, so the schedulers cannot differ beyond noise. " +
				"FPRS reserves sequence ranges for the fast path based on smoothed RTTs and windows; in our harness those estimates come from quic-go's per-path NewReno, which keeps windows full on both paths, and the 256 MB download is shortened to 32 MB and the throughput testbeds to 4 s.",
		},
		{
			Key:    "classic",
			Title:  "BLEST, ECF and Peekaboo (not the papers' own scenarios)",
			Source: "the anchors in `shared/FACTS.md` (\"Numbers from the literature\"); the papers' texts are not in `shared/papers`, and the library has none of their experiments; schedulers `sched/blest`, `sched/ecf`, `sched/peekaboo`",
			Setup: []string{
				"BLEST: +12% goodput, −80% unneeded retransmissions.",
				"ECF: web downloads 26% faster, out-of-order delay −71% compared with default minRTT.",
				"Peekaboo: up to 31% better than ECF/BLEST in dynamic scenarios.",
			},
			Ours: "**none of these are the papers' own scenarios.** We use the library's heterogeneous everyday scenarios: `hetero-2path` (20 Mbit/s 10 ms RTT + 10 Mbit/s 30 ms RTT, 20 MB), `wifi-lte` (Wi-Fi with bursty loss + LTE with deep queue, 20 MB) and the dynamic `wifi-walk-dropout` (Wi-Fi fades and drops out; 80 MB shortened to 20 MB, f = 0.25), " +
				"and, as \"web downloads\" for ECF, `hetero-2path` and `wifi-lte` shortened to 1 MB (f = 1/20) plus the 200 KB-1000 KB downloads of the FPRS section. " +
				"BLEST's goodput claim is also judged on the heterogeneous-RTT PRS scenarios (`prs-rtt-ratio-{4,8,10}`, `prs-mixed-*`), and Peekaboo's on `wifi-walk-dropout` and the LLHD comprehensive scenario, whose paths change every 10 s, from the runs of that section. " +
				"\"Unneeded retransmissions\" are our re-sent bytes (session-level reinjections; Linux MPTCP's opportunistic retransmissions, which BLEST counted, have no other counterpart here). " +
				"\"Out-of-order delay\" is our HoL-blocked time.",
			Matrices: []Matrix{
				{Scenarios: "hetero-2path,wifi-lte,wifi-walk-dropout", Schedulers: classicScheds, MaxBytes: 20 * scenario.MB},
				{Scenarios: "hetero-2path,wifi-lte", Schedulers: classicScheds, MaxBytes: 1 * scenario.MB},
			},
			Coupling: "lia", // the papers' texts are not in shared/papers: nothing says which coupling they ran
			Figures:  []string{reportFigure("goodput", "wifi-walk-dropout.short"), reportFigure("fct", "wifi-lte"), reportFigure("fct", "hetero-2path.short")},
			Reasons: "BLEST and ECF were designed and measured on Linux MPTCP, where a blocked send window triggers opportunistic retransmission and penalisation on the fast subflow; these are the \"unneeded retransmissions\" BLEST removes. Our session has a connection-level reorder buffer of flow-control size and re-sends a segment on another path only when its path is marked potentially failed or leaves (quic-go recovers ordinary losses on the same path), so there is little to remove. " +
				"Their gains come from waiting for the fast path when the slow one would hold the tail of a transfer; with uncoupled NewReno and queues of 1.5 × BDP the slow path's extra delay is small in most of our scenarios. " +
				"Peekaboo's figure is \"up to\" 31% in the paper's own dynamic traces, which we do not have (and `wifi-walk-dropout` is shortened to a quarter). Its LinUCB learner starts with no model and, by its package doc, its exploration bonus dominates for the first hundreds of decisions, so part of a 2-10 MB download is spent trying to wait for the fast path; on the comprehensive scenario, whose paths are redrawn every 10 s with 2-10% loss, that learning may never settle.",
		},
	}
}

// meanOver is the mean, over the scenarios that match, of sched's mean of m
// over its OK runs there, and the number of such scenarios.
func meanOver(rs []metrics.Result, timed map[string]bool, match func(string) bool, sched string, m metric) (float64, int) {
	per := map[string][]float64{}
	for _, r := range rs {
		if r.Scheduler == sched && match(r.Scenario) && okRun(r, timed) {
			per[r.Scenario] = append(per[r.Scenario], m.value(r))
		}
	}
	var means []float64
	for _, v := range per {
		means = append(means, stats.Mean(v))
	}
	if len(means) == 0 {
		return math.NaN(), 0
	}
	return stats.Mean(means), len(means)
}

var mRetrans = metric{name: "retransmission rate", unit: "%", scale: 100, prec: 2, lowerBetter: true, value: report.RetransRate}

// prsTable6 sets the paper's Table 6 beside our means over the loss
// experiment (the scenarios of its Fig. 22 and §6.3).
func prsTable6(rs []metrics.Result, timed map[string]bool, coupling string) string {
	paper := []struct {
		sched, name string
		ooo, rt     float64
	}{{"minrtt", "Default", 23.38, 0.78}, {"blest", "BLEST", 21.12, 0.95}, {"ecf", "ECF", 20.86, 0.88}, {"roundrobin", "RR", 23.82, 0.82}, {"prs", "PRS-MPTCP", 13.1, 0.68}}
	loss := matchAny("prs-loss-*")
	ours, _ := meanOver(rs, timed, loss, "prs", mOOO)
	var b strings.Builder
	fmt.Fprintf(&b, "**The paper's Table 6 beside ours under %s** (out-of-order counts and retransmission rates averaged over the loss experiment, `prs-loss-*`; the paper counts OOO packets in a server-side capture, we count segments arriving out of order at the receiver, so compare the PRS-vs-baseline columns, not the counts):\n\n", couplingPhrase(coupling))
	b.WriteString("| scheduler | paper: OOO packets | paper: PRS vs it | ours: OOO segments | ours: PRS vs it | paper: retrans rate (%) | ours: retrans rate (%) |\n|---|---:|---:|---:|---:|---:|---:|\n")
	for _, p := range paper {
		o, n := meanOver(rs, timed, loss, p.sched, mOOO)
		rt, _ := meanOver(rs, timed, loss, p.sched, mRetrans)
		if n == 0 {
			continue
		}
		fmt.Fprintf(&b, "| %s (%s) | %.2f | %s | %.0f | %s | %.2f | %s |\n", p.sched, p.name, p.ooo, reproPct(relChange(13.1, p.ooo)), o, reproPct(relChange(ours, o)), p.rt, reproNum(mRetrans, rt))
	}
	return b.String()
}

// llhdTable1 sets the paper's Table 1 (Scenario #1 throughput) beside ours.
func llhdTable1(rs []metrics.Result, timed map[string]bool, coupling string) string {
	paper := []struct {
		sched, name string
		mbps        float64
	}{{"minrtt", "SRTT", 2.17}, {"roundrobin", "RR", 2.15}, {"ecf", "ECF", 2.83}, {"blest", "BLEST", 2.84}, {"llhd", "LLHD", 2.90}}
	s1 := matchAny("llhd-s1.short")
	base, _ := meanOver(rs, timed, s1, "minrtt", mGoodput)
	var b strings.Builder
	fmt.Fprintf(&b, "**The paper's Table 1 beside ours** (Scenario #1 throughput; the paper's 300 s under LIA, ours 30 s under %s, capacity 15 Mbit/s):\n\n", couplingPhrase(coupling))
	b.WriteString("| scheduler | paper: throughput (Mbit/s) | paper: vs SRTT | ours: goodput (Mbit/s) | ours: vs minRTT |\n|---|---:|---:|---:|---:|\n")
	for _, p := range paper {
		g, n := meanOver(rs, timed, s1, p.sched, mGoodput)
		if n == 0 {
			continue
		}
		fmt.Fprintf(&b, "| %s (%s) | %.2f | %s | %s | %s |\n", p.sched, p.name, p.mbps, reproPct(relChange(p.mbps, 2.17)), reproNum(mGoodput, g), reproPct(relChange(g, base)))
	}
	return b.String()
}

// fprsSizes sets the paper's FPRS download times (Fig. 12 text) beside ours.
func fprsSizes(rs []metrics.Result, timed map[string]bool, coupling string) string {
	paper := []struct {
		size string
		sec  float64
	}{{"4KB", 0.034}, {"200KB", 0.040}, {"300KB", 0.055}, {"1000KB", 0.100}, {"256MB", 32}}
	rows := report.Summarize(rs)
	var b strings.Builder
	fmt.Fprintf(&b, "**The paper's FPRS download times beside ours under %s** (the paper's times are below one RTT of its Wi-Fi paths for the small sizes, so they cannot include connection setup; our FCT does, and our lower bound is one handshake RTT plus size over capacity plus one one-way delay on the fastest path):\n\n", couplingPhrase(coupling))
	b.WriteString("| size | paper: FPRS (s) | ours: FPRS FCT (s) | ours: fastest scheduler, FCT (s) | ours: FCT lower bound (s) |\n|---|---:|---:|---:|---:|\n")
	for _, p := range paper {
		name := "fprs-size-sweep@bytes=" + p.size
		var fprs, best report.Row
		found := false
		for _, r := range rows {
			if r.Scenario != name && r.Scenario != name+".short" {
				continue
			}
			if r.Scheduler == "fprs" {
				fprs, found = r, true
			}
			if !math.IsNaN(r.FCT.Mean) && (best.Scheduler == "" || r.FCT.Mean < best.FCT.Mean) {
				best = r
			}
		}
		if !found {
			continue
		}
		label := p.size
		if strings.HasSuffix(fprs.Scenario, ".short") {
			label += " (ours shortened to 32MB)"
		}
		fmt.Fprintf(&b, "| %s | %.3f | %s | %s, %s | %s |\n", label, p.sec, numCI(mFCT, fprs.FCT), best.Scheduler, numCI(mFCT, best.FCT), reproNum(mFCT, fprs.FCTLowerBoundSec))
	}
	return b.String()
}
