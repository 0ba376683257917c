package scenario

// Scenarios with shared bottlenecks and cross traffic (RFC 6356 §3's goals
// and the OLIA paper's problems as experiments), and the commuter family.

// intp returns a pointer to v.
func intp(v int) *int { return &v }

// fastAccess is a path's own link in front of a shared bottleneck: 1 Gbit/s,
// so that it only adds its one-way delay (ms).
func fastAccess(delayMs float64) Link { return link(1000, delayMs, 0) }

// sharedScenarios are RFC 6356 §3's three goals and two of the OLIA paper's
// problems, each against single-path quic-go competitors.
func sharedScenarios() []Scenario {
	const rfc = "RFC 6356 §3"
	// (a) Goal 2, "do no harm": the namespace set-up (two client
	// paths of 20 and 60 ms RTT and one competing client of 20 ms through
	// one 20 Mbit/s drop-tail bottleneck with a 50 ms queue).
	bott := link(20, 0, 0)
	bott.QueueBytes = 125_000 // 50 ms at 20 Mbit/s
	shared := Scenario{
		Name: "rfc6356-shared",
		Description: rfc + ", goal 2 (do no harm): \"a multipath flow should not take up more capacity from any of the resources shared by its different paths than if it were a single flow using only one of these paths\". " +
			"Two paths (20 and 60 ms RTT, from their own 1 Gbit/s access links) through one shared 20 Mbit/s drop-tail bottleneck with a 125 KB (50 ms) queue, " +
			"against one single-path quic-go download (bulk, 20 ms RTT) through the same bottleneck for the whole run. Fair: the session gets no more than the competitor (ratio 1). " +
			"The set-up is the one measured in network namespaces in issue 12. Timed, 30 s.",
		Paper:       "RFC6356",
		Tags:        []string{"fairness", "shared", "cross"},
		Paths:       []PathSpec{sym("a", fastAccess(10)), sym("b", fastAccess(30))},
		Bottlenecks: []Bottleneck{{Name: "shared", Paths: []int{0, 1}, Up: bott, Down: bott}},
		Cross:       []CrossSource{{Name: "competitor", Kind: CrossBulk, Bottleneck: intp(0), AccessDelay: ms(10)}},
		Duration:    sec(30),
		Timed:       true,
		Repeat:      3,
	}
	shared.Bytes = 20 * Mbps * 30 / 8 * 11 / 10

	// (b) Goal 3, "balance congestion": two disjoint bottlenecks of
	// different rates, each with its own single-path competitor.
	balance := Scenario{
		Name: "rfc6356-balance",
		Description: rfc + ", goal 3 (balance congestion): \"a multipath flow should move as much traffic as possible off its most congested paths\". " +
			"Two disjoint paths, 10 Mbit/s and 20 Mbit/s, both 20 ms RTT, each its own bottleneck (125 KB queues) with its own single-path quic-go download (bulk, 20 ms RTT) for the whole run. " +
			"The rates differ so that the two paths' congestion differs. Timed, 30 s.",
		Paper: "RFC6356",
		Tags:  []string{"fairness", "cross"},
		Paths: []PathSpec{sym("slow", queued(link(10, 10, 0), 125_000)), sym("fast", queued(link(20, 10, 0), 125_000))},
		Cross: []CrossSource{
			{Name: "competitor-slow", Kind: CrossBulk, Path: intp(0)},
			{Name: "competitor-fast", Kind: CrossBulk, Path: intp(1)},
		},
		Duration: sec(30),
		Timed:    true,
		Repeat:   3,
	}
	balance.Bytes = timedBytes(balance)

	// (c) Goal 3 again in its simplest form: one path congested, one idle.
	move := Scenario{
		Name: "rfc6356-move",
		Description: rfc + ", goal 3 (balance congestion, \"move traffic away from the most congested paths\"): two disjoint 10 Mbit/s paths of 20 ms RTT (125 KB queues); " +
			"path 0 carries two single-path quic-go downloads (bulk, 20 ms RTT) for the whole run, path 1 none. A coupled session should send most of its data on path 1. Timed, 30 s.",
		Paper: "RFC6356",
		Tags:  []string{"fairness", "cross"},
		Paths: []PathSpec{sym("congested", queued(link(10, 10, 0), 125_000)), sym("idle", queued(link(10, 10, 0), 125_000))},
		Cross: []CrossSource{
			{Name: "competitor-1", Kind: CrossBulk, Path: intp(0)},
			{Name: "competitor-2", Kind: CrossBulk, Path: intp(0)},
		},
		Duration: sec(30),
		Timed:    true,
		Repeat:   3,
	}
	move.Bytes = timedBytes(move)

	// OLIA paper (Khalili, Gast, Popovic, Upadhyay, Le Boudec, "MPTCP is not
	// Pareto-optimal: performance issues and a possible solution", CoNEXT
	// 2012). We had its abstract, not its full text, so the scenarios cite
	// the abstract: the problems are the paper's, the rates and delays ours.
	const olia = "Khalili et al., CoNEXT 2012 (OLIA), abstract"
	p1 := Scenario{
		Name: "olia-p1-upgrade",
		Description: olia + ", problem P1 (non-Pareto-optimality of LIA): \"upgrading some TCP users to MPTCP can reduce the throughput of others without any benefit to the upgraded users\". " +
			"The session has a private path (path 0, 10 Mbit/s, 20 ms RTT) and a second path (40 ms RTT) through a 10 Mbit/s bottleneck (125 KB queue) shared with one single-path quic-go download (bulk, 40 ms RTT). " +
			"The Pareto-optimal allocation leaves the shared bottleneck to the competitor; compare the competitor's goodput with the session on one path and on two. Our rates and delays, the paper's structure. Timed, 30 s.",
		Paper:       "OLIA",
		Tags:        []string{"fairness", "shared", "cross"},
		Paths:       []PathSpec{sym("private", queued(link(10, 10, 0), 125_000)), sym("shared", fastAccess(20))},
		Bottlenecks: []Bottleneck{{Name: "shared", Paths: []int{1}, Up: queued(link(10, 0, 0), 125_000), Down: queued(link(10, 0, 0), 125_000)}},
		Cross:       []CrossSource{{Name: "competitor", Kind: CrossBulk, Bottleneck: intp(0), AccessDelay: ms(20)}},
		Duration:    sec(30),
		Timed:       true,
		Repeat:      3,
	}
	p1.Bytes = 20 * Mbps * 30 / 8 * 11 / 10

	resp := Scenario{
		Name: "olia-responsiveness",
		Description: olia + ", responsiveness: OLIA is claimed to be \"as responsive and non-flappy as MPTCP with LIA\". " +
			"Two disjoint 10 Mbit/s paths of 20 ms RTT (125 KB queues); a single-path quic-go download (bulk, 20 ms RTT) joins path 0 from 10 s to 20 s. " +
			"A responsive session moves its traffic to path 1 soon after 10 s and back soon after 20 s (read the per-path goodput over time). Our rates and times. Timed, 30 s.",
		Paper:    "OLIA",
		Tags:     []string{"fairness", "cross", "responsiveness"},
		Paths:    []PathSpec{sym("a", queued(link(10, 10, 0), 125_000)), sym("b", queued(link(10, 10, 0), 125_000))},
		Cross:    []CrossSource{{Name: "competitor", Kind: CrossBulk, Path: intp(0), Start: sec(10), Stop: sec(20)}},
		Duration: sec(30),
		Timed:    true,
		Repeat:   3,
	}
	resp.Bytes = timedBytes(resp)
	return []Scenario{shared, balance, move, p1, resp}
}

// queued returns l with a queue of q bytes.
func queued(l Link, q int) Link {
	l.QueueBytes = q
	return l
}

// commuterScenarios is the Wi-Fi + LTE commuter of issue 11.
func commuterScenarios() []Scenario {
	wifi := link(30, 8, 0)
	wifi.QueueBytes = 128 * KB
	lte := link(12, 45, 0)
	lte.QueueBytes = 512 * KB
	// Bursty LTE loss: bad bursts of 3 packets on average losing every
	// packet, 0.5% stationary loss (emu.BurstyLoss(0.005, 3)).
	lte.GE = &GilbertElliott{PGoodBad: 0.005 / 3 / (1 - 0.005), PBadGood: 1.0 / 3, LossGood: 0, LossBad: 1}
	s := Scenario{
		Name: "wifi-lte-commuter",
		Description: "A commuter's phone (issue 11): Wi-Fi 30 Mbit/s, 8 ms one-way (16 ms RTT), 128 KB queue, with outages drawn per seed as a Poisson process " +
			"(first gap from 5 s, gaps exponential with mean 15 s, each outage uniform in 3-6 s, both directions); LTE 12 Mbit/s, 45 ms one-way (90 ms RTT), 512 KB queue, " +
			"bursty Gilbert-Elliott loss (bursts of 3 packets on average, 0.5% stationary). Seeds differ in when the outages happen. Timed, 60 s.",
		Tags:     []string{"everyday", "wireless", "outage", "handoff"},
		Paths:    []PathSpec{sym("wifi", wifi), sym("lte", lte)},
		Duration: sec(60),
		Timed:    true,
		Repeat:   5,
		Ranges: &Ranges{Paths: []PathRanges{{
			Outages: &OutageProcess{MeanGap: sec(15), MinLen: sec(3), MaxLen: sec(6), Offset: sec(5)},
		}}},
	}
	s.Bytes = timedBytes(s)
	return []Scenario{s}
}
