package scenario

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Library returns the built-in scenarios, sorted by name: the experiments of
// the PRS-MPTCP, LLHD, FPRS and EdAR papers with the papers' own parameters,
// and a few everyday ones. Names are stable. Each call returns fresh copies.
//
// Where a paper gives an RTT the one-way delays are half of it; where it
// gives a "delay" or "latency" it is taken as the one-way delay of each
// direction. Loss applies to each direction, as Mininet's TCLink applies it.
func Library() []Scenario {
	var all []Scenario
	all = append(all, prsScenarios()...)
	all = append(all, llhdScenarios()...)
	all = append(all, fprsScenarios()...)
	all = append(all, edarScenarios()...)
	all = append(all, everydayScenarios()...)
	all = append(all, sharedScenarios()...)
	all = append(all, commuterScenarios()...)
	all = append(all, benchScenarios()...)
	all = append(all, driveScenarios()...)
	all = append(all, videoScenarios()...)
	all = append(all, videoLTEScenarios()...)
	all = append(all, webScenarios()...)
	all = append(all, rpcScenarios()...)
	for i := range all {
		all[i] = all[i].clone() // no slices shared between Up and Down
	}
	slices.SortFunc(all, func(a, b Scenario) int { return strings.Compare(a.Name, b.Name) })
	return all
}

// Default is the name of the default scenario, mpquic-bench's main job.
const Default = "hetero-2path"

// Get returns the library scenario with the given name.
func Get(name string) (Scenario, error) {
	for _, s := range Library() {
		if s.Name == name {
			return s, nil
		}
	}
	return Scenario{}, fmt.Errorf("scenario: no library scenario %q", name)
}

// Lookup returns the library scenario with the given name, or, for a name
// "<base>@<label>" that Expand produced, the matching variant of <base>.
func Lookup(name string) (Scenario, error) {
	s, err := Get(baseName(name))
	if err != nil || !strings.Contains(name, "@") {
		return s, err
	}
	vs, err := s.Expand()
	if err != nil {
		return Scenario{}, err
	}
	for _, v := range vs {
		if v.Name == name {
			return v, nil
		}
	}
	return Scenario{}, fmt.Errorf("scenario: %q has no variant %q", s.Name, name)
}

// Helpers for building the library.

func ms(v float64) Duration            { return Duration(v * float64(time.Millisecond)) }
func sec(v float64) Duration           { return Duration(v * float64(time.Second)) }
func f64(v float64) *float64           { return &v }
func dur(d Duration) *Duration         { return &d }
func mbps(v float64) float64           { return v * Mbps }
func win(a, b float64) Window          { return Window{Start: sec(a), End: sec(b)} }
func sym(name string, l Link) PathSpec { return PathSpec{Name: name, Up: l, Down: l} }

// link is a constant link: rate in Mbit/s, one-way delay in ms, loss as a
// probability.
func link(rateMbps, delayMs, loss float64) Link {
	return Link{RateBps: mbps(rateMbps), Delay: ms(delayMs), Loss: loss}
}

// timedBytes is enough data to keep every path busy for the whole of a timed
// run: the summed base rate times Duration, plus 10%, rounded up to a MB.
func timedBytes(s Scenario) int64 {
	var r float64
	for _, p := range s.Paths {
		r += p.Down.RateBps
	}
	b := r * s.Duration.Seconds() / 8 * 1.1
	return int64(math.Ceil(b/MB)) * MB
}

func pct(p float64) string { return fmt.Sprintf("%g%%", p*100) }

// PRS-MPTCP §5: two wireless subflows of 100 Mbit/s, a 10 MB iperf transfer,
// each run ten times.
func prsScenarios() []Scenario {
	base := func(name, desc string, fastRTT, slowRTT, fastLoss, slowLoss float64, tags ...string) Scenario {
		return Scenario{
			Name: name,
			Description: desc + " 100 Mbit/s per subflow, 10 MB transfer, 10 runs per scheduler. " +
				"Note: the paper's measured throughputs (Tables 4-5, about 62 Kbps or KB/s) are far below the configured 100 Mbit/s, so compare schedulers, not absolute numbers.",
			Paper:    "PRS-MPTCP",
			Tags:     append([]string{"paper", "prs"}, tags...),
			Paths:    []PathSpec{sym("fast", link(100, fastRTT/2, fastLoss)), sym("slow", link(100, slowRTT/2, slowLoss))},
			Bytes:    10 * MB,
			Duration: sec(120),
			Repeat:   10,
		}
	}
	var out []Scenario
	for _, ratio := range []float64{1, 4, 8, 10} {
		out = append(out, base(fmt.Sprintf("prs-rtt-ratio-%g", ratio),
			fmt.Sprintf("PRS-MPTCP §5 first scenario (Table 4, Figs. 14-15): RTT_s/RTT_f = %g with RTT_f = 10 ms (RTT_s = %g ms), 1%% loss on both subflows.", ratio, 10*ratio),
			10, 10*ratio, 0.01, 0.01, "rtt"))
	}
	for _, lr := range []float64{0, 0.005, 0.01, 0.03, 0.05} {
		out = append(out, base("prs-loss-"+strings.TrimSuffix(pct(lr), "%"),
			fmt.Sprintf("PRS-MPTCP §5 second scenario (Table 5, Figs. 16-17, 22): equal RTT 10 ms, loss %s on both subflows.", pct(lr)),
			10, 10, lr, lr, "loss"))
	}
	for _, c := range []struct{ slow, fast float64 }{{0.005, 0.01}, {0.01, 0.03}, {0.03, 0.05}} {
		out = append(out, base(fmt.Sprintf("prs-mixed-%g-%g", c.slow*100, c.fast*100),
			fmt.Sprintf("PRS-MPTCP §5 third scenario (Figs. 18-21): RTT_s = 40 ms, RTT_f = 10 ms, loss slow %s, fast %s.", pct(c.slow), pct(c.fast)),
			10, 40, c.fast, c.slow, "rtt", "loss"))
	}
	sw := base("prs-rtt-ratio-sweep",
		"PRS-MPTCP §5 first scenario as a sweep: the slow subflow's one-way delay 5, 20, 40, 50 ms (RTT ratio 1, 4, 8, 10 against RTT_f = 10 ms), 1% loss on both.",
		10, 10, 0.01, 0.01, "rtt", "sweep")
	sw.Sweep = &Sweep{Path: 1, Delay: []Duration{ms(5), ms(20), ms(40), ms(50)}}
	return append(out, sw)
}

// LLHD §4: Mininet, 300 s emulations, LIA congestion control.
func llhdScenarios() []Scenario {
	const run = 300 // emulation time, s
	timed := func(s Scenario) Scenario {
		s.Paper, s.Duration, s.Timed = "LLHD", sec(run), true
		s.Bytes = timedBytes(s)
		return s
	}
	s1paths := func() []PathSpec {
		return []PathSpec{sym("sf1", link(10, 10, 0.01)), sym("sf2", link(5, 5, 0.02))}
	}
	s1 := timed(Scenario{
		Name:        "llhd-s1",
		Description: "LLHD §4 Scenario #1 (Fig. 1a, Table 1): SF-1 10 Mbit/s, 10 ms, 1% loss; SF-2 5 Mbit/s, 5 ms, 2% loss; the high-bandwidth path has the higher RTT. Timed 300 s emulation (Table 1 reports throughput and data sent).",
		Tags:        []string{"paper", "llhd", "bandwidth"},
		Paths:       s1paths(),
	})
	s1size := Scenario{
		Name:        "llhd-s1-size",
		Description: "LLHD §4 Scenario #1, FCT for several file sizes (Fig. 2). The paper's sizes are only in the figure; this uses 2, 10, 50, 100 MB, the sizes of its §4 real-world test.",
		Paper:       "LLHD",
		Tags:        []string{"paper", "llhd", "bandwidth", "sweep"},
		Paths:       s1paths(),
		Bytes:       10 * MB,
		Duration:    sec(run),
		Sweep:       &Sweep{Bytes: []int64{2 * MB, 10 * MB, 50 * MB, 100 * MB}},
	}

	lossSteps := []float64{0.02, 0.04, 0.06, 0.08, 0.10}
	sf2 := link(10, 5, lossSteps[0])
	for i, l := range lossSteps[1:] {
		sf2.Schedule = append(sf2.Schedule, Step{At: sec(float64(i+1) * run / 5), Loss: f64(l)})
	}
	s2 := timed(Scenario{
		Name:        "llhd-s2",
		Description: "LLHD §4 Scenario #2 (Fig. 1b): both SFs 10 Mbit/s, 5 ms; SF-1 2% loss; SF-2 loss varies over time from 2% to 10% (here 2, 4, 6, 8, 10% for 60 s each, our choice of timing). Timed 300 s.",
		Tags:        []string{"paper", "llhd", "loss", "schedule"},
		Paths:       []PathSpec{sym("sf1", link(10, 5, 0.02)), sym("sf2", sf2)},
	})
	s2sweep := Scenario{
		Name:        "llhd-s2-loss",
		Description: "LLHD §4 Scenario #2 as in Fig. 3: SF-2 loss fixed per run at 2, 4, 6, 8, 10%; SF-1 2%; both 10 Mbit/s, 5 ms. Transfer size not given in the paper; 10 MB here.",
		Paper:       "LLHD",
		Tags:        []string{"paper", "llhd", "loss", "sweep"},
		Paths:       []PathSpec{sym("sf1", link(10, 5, 0.02)), sym("sf2", link(10, 5, 0.02))},
		Bytes:       10 * MB,
		Duration:    sec(run),
		Sweep:       &Sweep{Path: 1, Loss: lossSteps},
	}

	delaySteps := []Duration{ms(5), ms(10), ms(15), ms(20), ms(25)}
	sf2d := link(10, 5, 0.02)
	for i, d := range delaySteps[1:] {
		sf2d.Schedule = append(sf2d.Schedule, Step{At: sec(float64(i+1) * run / 5), Delay: dur(d)})
	}
	s3 := timed(Scenario{
		Name:        "llhd-s3",
		Description: "LLHD §4 Scenario #3 (Fig. 1c): both SFs 10 Mbit/s, 2% loss; SF-1 delay 5 ms; SF-2 delay varies over time from 5 to 25 ms (here 5, 10, 15, 20, 25 ms for 60 s each, our choice of timing). Timed 300 s.",
		Tags:        []string{"paper", "llhd", "delay", "schedule"},
		Paths:       []PathSpec{sym("sf1", link(10, 5, 0.02)), sym("sf2", sf2d)},
	})
	s3sweep := Scenario{
		Name:        "llhd-s3-delay",
		Description: "LLHD §4 Scenario #3 as in Fig. 4: SF-2 delay fixed per run at 5-25 ms; SF-1 5 ms; both 10 Mbit/s, 2% loss. Transfer size not given in the paper; 10 MB here.",
		Paper:       "LLHD",
		Tags:        []string{"paper", "llhd", "delay", "sweep"},
		Paths:       []PathSpec{sym("sf1", link(10, 5, 0.02)), sym("sf2", link(10, 5, 0.02))},
		Bytes:       10 * MB,
		Duration:    sec(run),
		Sweep:       &Sweep{Path: 1, Delay: delaySteps},
	}

	var pr []PathRanges
	for range 2 {
		pr = append(pr, PathRanges{
			RateBps: &FloatRange{mbps(10), mbps(30)},
			Delay:   &DurationRange{ms(10), ms(30)},
			Loss:    &FloatRange{0.02, 0.10},
			Every:   sec(10),
		})
	}
	comp := Scenario{
		Name:        "llhd-comprehensive",
		Description: "LLHD §4 comprehensive scenario (Fig. 5): both paths with bandwidth 10-30 Mbit/s, delay 10-30 ms, loss 2-10%, all changing over time (redrawn every 10 s per seed, our choice of interval); files of several sizes (2, 10, 50, 100 MB, the sizes of the §4 real-world test), 30 runs per size.",
		Paper:       "LLHD",
		Tags:        []string{"paper", "llhd", "random", "schedule", "sweep"},
		Paths:       []PathSpec{sym("p1", link(20, 20, 0.06)), sym("p2", link(20, 20, 0.06))},
		Bytes:       10 * MB,
		Duration:    sec(run),
		Repeat:      30,
		Ranges:      &Ranges{Paths: pr},
		Sweep:       &Sweep{Bytes: []int64{2 * MB, 10 * MB, 50 * MB, 100 * MB}},
	}
	return []Scenario{s1, s1size, s2, s2sweep, s3, s3sweep, comp}
}

// FPRS evaluation, Table 1: LTE 16 Mbit/s 70 ms RTT, Wi-Fi 15 Mbit/s 60 ms,
// Ethernet 80 Mbit/s 10 ms; 200 s constant-bit-rate runs; downloads of 4 KB
// to 256 MB (Fig. 12).
func fprsScenarios() []Scenario {
	lte := func() PathSpec { return sym("lte", link(16, 35, 0)) }
	wifi := func(n string) PathSpec { return sym(n, link(15, 30, 0)) }
	eth := func() PathSpec { return sym("ethernet", link(80, 5, 0)) }
	pair := func(name, what string, paths []PathSpec) Scenario {
		s := Scenario{
			Name:        name,
			Description: "FPRS evaluation, Table 1, " + what + " testbed (Figs. 9-11, 13-14): 200 s of constant-bit-rate iperf traffic; RTTs from Table 1, lossless (the paper gives no loss).",
			Paper:       "FPRS",
			Tags:        []string{"paper", "fprs", "throughput"},
			Paths:       paths,
			Duration:    sec(200),
			Timed:       true,
		}
		s.Bytes = timedBytes(s)
		return s
	}
	out := []Scenario{
		pair("fprs-wifi-wifi", "Wi-Fi-Wi-Fi", []PathSpec{wifi("wifi1"), wifi("wifi2")}),
		pair("fprs-wifi-lte", "Wi-Fi-LTE", []PathSpec{wifi("wifi"), lte()}),
		pair("fprs-wifi-ethernet", "Wi-Fi-Ethernet", []PathSpec{wifi("wifi"), eth()}),
	}
	size := func(name string, b int64) Scenario {
		return Scenario{
			Name: name,
			Description: "FPRS evaluation, Fig. 12 download time for " + FormatBytes(b) + " on the Wi-Fi-Ethernet pair of Table 1. " +
				"The paper does not say which testbed Fig. 12 used; its 256 MB in about 32 s needs more than 64 Mbit/s, which only the Wi-Fi-Ethernet pair has. " +
				"Its 34 ms for 4 KB is below one Wi-Fi RTT (60 ms), so it cannot have come from the Wi-Fi pairs either.",
			Paper:    "FPRS",
			Tags:     []string{"paper", "fprs", "fct"},
			Paths:    []PathSpec{wifi("wifi"), eth()},
			Bytes:    b,
			Duration: sec(200),
		}
	}
	out = append(out,
		size("fprs-size-4kb", 4*KB),
		size("fprs-size-1000kb", 1000*KB),
		size("fprs-size-256mb", 256*MB),
	)
	sw := size("fprs-size-sweep", 4*KB)
	sw.Tags = append(sw.Tags, "sweep")
	sw.Description = "FPRS evaluation, Fig. 12 as a sweep over the paper's sizes 4 KB, 200 KB, 300 KB, 1000 KB and 256 MB, on the Wi-Fi-Ethernet pair of Table 1 (see fprs-size-256mb for why that pair)."
	sw.Sweep = &Sweep{Bytes: []int64{4 * KB, 200 * KB, 300 * KB, 1000 * KB, 256 * MB}}
	return append(out, sw)
}

// EdAR §VI: NS-3, two paths as in Fig. 1.
func edarScenarios() []Scenario {
	type pr struct{ rate, delay, loss [2]float64 } // Mbit/s, ms, %
	settings := []struct {
		id     string
		p1, p2 pr
		buf    int64
		dur    float64 // run limit, s
	}{
		{"i", pr{[2]float64{5, 10}, [2]float64{20, 30}, [2]float64{0.1, 0.5}}, pr{[2]float64{5, 10}, [2]float64{20, 30}, [2]float64{0.1, 0.5}}, 128 * KB, 600},
		{"ii", pr{[2]float64{5, 10}, [2]float64{20, 50}, [2]float64{0.1, 0.5}}, pr{[2]float64{5, 10}, [2]float64{50, 100}, [2]float64{0.1, 1.0}}, 128 * KB, 600},
		{"iii", pr{[2]float64{5, 10}, [2]float64{20, 30}, [2]float64{0.1, 0.5}}, pr{[2]float64{1, 5}, [2]float64{50, 70}, [2]float64{0.1, 0.5}}, 128 * KB, 600},
		{"iv", pr{[2]float64{20, 30}, [2]float64{5, 10}, [2]float64{0.1, 0.5}}, pr{[2]float64{5, 10}, [2]float64{10, 20}, [2]float64{0.5, 1.0}}, 256 * KB, 300},
		{"v", pr{[2]float64{0.1, 0.5}, [2]float64{50, 100}, [2]float64{1.0, 2.0}}, pr{[2]float64{0.1, 0.5}, [2]float64{100, 200}, [2]float64{1.0, 2.0}}, 64 * KB, 10000},
	}
	mid := func(r [2]float64) float64 { return (r[0] + r[1]) / 2 }
	ranges := func(p pr) PathRanges {
		return PathRanges{
			RateBps: &FloatRange{mbps(p.rate[0]), mbps(p.rate[1])},
			Delay:   &DurationRange{ms(p.delay[0]), ms(p.delay[1])},
			Loss:    &FloatRange{p.loss[0] / 100, p.loss[1] / 100},
		}
	}
	var out []Scenario
	for _, st := range settings {
		r2 := ranges(st.p2)
		r2.Handoff = &HandoffRange{Every: sec(40), MinLen: sec(20), MaxLen: sec(20)}
		out = append(out, Scenario{
			Name: "edar-setting-" + st.id,
			Description: fmt.Sprintf("EdAR §VI-A, Table II setting %s: each path's bandwidth, delay and loss drawn per seed within the table's ranges; "+
				"path 2 has handoffs, one per 40 s period at a random start; receive buffer %d KB. "+
				"Transfer 10-100 MB (uniform), the size range of the paper's training trajectories; the handoff length (20 s, as in Table III) is our choice, the paper gives none.",
				st.id, st.buf/KB),
			Paper: "EdAR",
			Tags:  []string{"paper", "edar", "random", "handoff"},
			Paths: []PathSpec{
				sym("path1", link(mid(st.p1.rate), mid(st.p1.delay), mid(st.p1.loss)/100)),
				sym("path2", link(mid(st.p2.rate), mid(st.p2.delay), mid(st.p2.loss)/100)),
			},
			Bytes:         10 * MB,
			ReceiveBuffer: st.buf,
			Duration:      sec(st.dur),
			Ranges:        &Ranges{Bytes: &IntRange{10 * MB, 100 * MB}, Paths: []PathRanges{ranges(st.p1), r2}},
		})
	}

	p2 := link(10, 50, 0.001)
	p2.Handoffs = []Window{win(20, 40), win(60, 80)}
	handoff := Scenario{
		Name: "edar-handoff",
		Description: "EdAR §VI-B, Table III and Figs. 8-9: path 1 10 Mbit/s, 25 ms, 0.1% loss; path 2 10 Mbit/s, 50 ms, 0.1% loss with handoffs at 20-40 s and 60-80 s; " +
			"timed 100 s run, judged by goodput over time; receive buffer 128 KB (setting ii's, whose ranges Table III lies in). " +
			"Each handoff degrades for half its window, then the link is unusable (our choice; the paper describes the user moving away until the link is unavailable).",
		Paper:         "EdAR",
		Tags:          []string{"paper", "edar", "handoff"},
		Paths:         []PathSpec{sym("path1", link(10, 25, 0.001)), sym("path2", p2)},
		ReceiveBuffer: 128 * KB,
		Duration:      sec(100),
		Timed:         true,
	}
	handoff.Bytes = timedBytes(handoff)

	sweepBase := func(name, desc string, sw *Sweep) Scenario {
		return Scenario{
			Name: name,
			Description: desc + " Path 1 10 Mbit/s, 25 ms, 0.1% loss; 10 MB download, 50 runs per value. " +
				"The paper's text swaps the two figures (its setup paragraph puts the loss sweep in Fig. 10, its captions and discussion put the delay sweep there); names here follow the captions. " +
				"Receive buffer 128 KB (settings i-iii) is our choice; the paper does not give it for the sweeps.",
			Paper:         "EdAR",
			Tags:          []string{"paper", "edar", "sweep"},
			Paths:         []PathSpec{sym("path1", link(10, 25, 0.001)), sym("path2", link(10, 25, 0.001))},
			Bytes:         10 * MB,
			ReceiveBuffer: 128 * KB,
			Duration:      sec(300),
			Repeat:        50,
			Sweep:         sw,
		}
	}
	fig10 := sweepBase("edar-fig10-delay",
		"EdAR §VI-B, Fig. 10: path 2's delay swept over 20, 40, 60, 80, 100 ms, 10 Mbit/s, 0.1% loss.",
		&Sweep{Path: 1, Delay: []Duration{ms(20), ms(40), ms(60), ms(80), ms(100)}})
	fig11 := sweepBase("edar-fig11-loss",
		"EdAR §VI-B, Fig. 11: path 2's random loss swept over 0.01, 0.1, 0.5, 1, 2, 3% (the paper gives only the 0.01-3% range), 10 Mbit/s, 25 ms.",
		&Sweep{Path: 1, Loss: []float64{0.0001, 0.001, 0.005, 0.01, 0.02, 0.03}})
	return append(out, handoff, fig10, fig11)
}

// Everyday scenarios: not from a paper.
func everydayScenarios() []Scenario {
	hetero := Scenario{
		Name:        Default,
		Description: "Default heterogeneous pair: 20 Mbit/s with 10 ms RTT and 10 Mbit/s with 30 ms RTT, lossless, 20 MB transfer. mpquic-bench's main job.",
		Tags:        []string{"everyday", "default"},
		Paths:       []PathSpec{sym("fast", link(20, 5, 0)), sym("slow", link(10, 15, 0))},
		Bytes:       20 * MB,
		Duration:    sec(60),
	}
	wifiLink := func() Link {
		l := link(30, 10, 0)
		l.Jitter = ms(2)
		l.QueueBytes = 128 * KB
		// Bursty Wi-Fi loss: bad bursts of 4 packets on average losing half of
		// them; stationary loss about 0.25%.
		l.GE = &GilbertElliott{PGoodBad: 0.0013, PBadGood: 0.25, LossGood: 0, LossBad: 0.5}
		return l
	}
	lteLink := func() Link {
		l := link(10, 30, 0.0005)
		l.Jitter = ms(5)
		l.QueueBytes = 512 * KB // cellular base stations buffer deeply
		return l
	}
	wl := Scenario{
		Name:        "wifi-lte",
		Description: "Everyday phone: Wi-Fi 30 Mbit/s, 20 ms RTT, 2 ms jitter, bursty Gilbert-Elliott loss (~0.25%), 128 KB queue; LTE 10 Mbit/s, 60 ms RTT, 5 ms jitter, 0.05% loss, 512 KB queue; 20 MB transfer.",
		Tags:        []string{"everyday", "wireless"},
		Paths:       []PathSpec{sym("wifi", wifiLink()), sym("lte", lteLink())},
		Bytes:       20 * MB,
		Duration:    sec(60),
	}
	wlb := wl
	wlb.Name = "wifi-lte-backup"
	wlb.Description = "As wifi-lte, with LTE marked backup (MPTCP's backup flag): use it only when Wi-Fi is unusable."
	wlb.Paths = []PathSpec{sym("wifi", wifiLink()), sym("lte", lteLink())}
	wlb.Paths[1].Backup = true
	wlb.Tags = []string{"everyday", "wireless", "backup"}

	walk := link(50, 5, 0)
	walk.Jitter = ms(2)
	walk.QueueBytes = 128 * KB
	walk.Schedule = []Step{
		{At: sec(4), Ramp: sec(4), RateBps: f64(mbps(5)), Delay: dur(ms(15)), Loss: f64(0.03)},
		{At: sec(12), Ramp: sec(4), RateBps: f64(mbps(50)), Delay: dur(ms(5)), Loss: f64(0)},
	}
	walk.Outages = []Window{win(8, 12)}
	dropout := Scenario{
		Name: "wifi-walk-dropout",
		Description: "Walking away from the access point and back: Wi-Fi starts at 50 Mbit/s, 10 ms RTT; from 4 s to 8 s it fades to 5 Mbit/s, 30 ms RTT, 3% loss; " +
			"it drops out from 8 s to 12 s; from 12 s to 16 s it recovers. LTE (10 Mbit/s, 60 ms RTT) stays steady. 80 MB, so an ideal transfer spans the dropout (about 16 s).",
		Tags:     []string{"everyday", "wireless", "outage", "schedule"},
		Paths:    []PathSpec{sym("wifi", walk), sym("lte", lteLink())},
		Bytes:    80 * MB,
		Duration: sec(60),
	}
	return []Scenario{hetero, wl, wlb, dropout}
}
