package scenario

import (
	"fmt"
	"strings"
)

// withBaselines returns base (its Description set to desc and a line naming
// the baselines) followed by one single-path baseline per path, named
// <base>-<path>-only and tagged "baseline", so that a report shows what the
// second path adds (as the bench has for bulk downloads).
func withBaselines(base Scenario, desc string) []Scenario {
	var names []string
	for _, p := range base.Paths {
		names = append(names, base.Name+"-"+p.Name+"-only")
	}
	all := base
	all.Description = desc + " Baselines: " + strings.Join(names, " and ") + "."
	out := []Scenario{all}
	for i, p := range base.Paths {
		one := base.clone()
		one.Name = names[i]
		one.Description = fmt.Sprintf("Single-path baseline of %s: its %s path alone. ", base.Name, p.Name) + desc
		one.Tags = append(one.Tags, "baseline")
		one.Paths = []PathSpec{base.Paths[i]}
		out = append(out, one)
	}
	return out
}

// The path sets the workloads run on (issue 22: hetero-2path, edar-handoff's
// paths, a lossy LTE trace path beside Wi-Fi, and, for the web target, paths
// whose RTTs differ by 4× or more).
const (
	heteroDesc  = "hetero-2path's paths: 20 Mbit/s with 10 ms RTT and 10 Mbit/s with 30 ms RTT, lossless."
	handoffDesc = "edar-handoff's paths (EdAR Table III): path 1 10 Mbit/s, 50 ms RTT, 0.1% loss; path 2 10 Mbit/s, 100 ms RTT, 0.1% loss, with handoffs at 20-40 s and 60-80 s " +
		"(each degrades for half its window, then the link is unusable); receive buffer 128 KB."
	lteDesc = "Wi-Fi beside a lossy LTE drive: Wi-Fi 30 Mbit/s, 20 ms RTT, 2 ms jitter, 128 KB queue; LTE following the built-in synthetic drive trace " +
		"(8 Mbit/s on average, varying every 100 ms; emu.SyntheticTrace, not measured), 60 ms RTT, 512 KB queue, 0.5% random loss each way (the loss is ours)."
	rtt10xDesc = "rtt10x-256k's paths without its small buffer: 20 Mbit/s with 10 ms RTT and 10 Mbit/s with 100 ms RTT (10× apart), lossless, the default receive window."
)

func heteroPaths() []PathSpec {
	return []PathSpec{sym("fast", link(20, 5, 0)), sym("slow", link(10, 15, 0))}
}

func handoffPaths() []PathSpec {
	p2 := link(10, 50, 0.001)
	p2.Handoffs = []Window{win(20, 40), win(60, 80)}
	return []PathSpec{sym("path1", link(10, 25, 0.001)), sym("path2", p2)}
}

func ltePaths() []PathSpec {
	wifi := link(30, 10, 0)
	wifi.Jitter = ms(2)
	wifi.QueueBytes = 128 * KB
	down := link(8, 30, 0.005)
	down.Trace = BuiltinTrace + "lte-drive.down"
	down.QueueBytes = 512 * KB
	return []PathSpec{sym("wifi", wifi), {Name: "lte", Up: link(8, 30, 0.005), Down: down}}
}

func rtt10xPaths() []PathSpec {
	return []PathSpec{sym("fast", link(20, 5, 0)), sym("slow", link(10, 50, 0))}
}

// webScenarios are the web workload (MedianPage over HTTP/3 with Chrome's
// priorities) on the four path sets, each with its baselines.
func webScenarios() []Scenario {
	var out []Scenario
	add := func(name, paths string, ps []PathSpec, loads int, think float64, buf int64, dur float64, tags ...string) {
		w := &Workload{Kind: WorkloadWeb, Pages: loads, ThinkTime: sec(think)}
		s := Scenario{Name: name, Tags: append([]string{"workload", "web"}, tags...), Paths: ps, ReceiveBuffer: buf, Duration: sec(dur), Workload: w}
		s.Bytes = w.TotalBytes()
		out = append(out, withBaselines(s, fmt.Sprintf("Web pages on %s Workload: the HTTP Archive's median desktop page (Web Almanac 2024: HTML, 4 stylesheets, 24 scripts, 18 images, 3 fonts; 1,894 KB in 50 requests) "+
			"fetched over HTTP/3 with Chrome's RFC 9218 priorities, loaded %d times with %g s between loads (scenario.MedianPage).", paths, loads, think))...)
	}
	add("web-hetero", heteroDesc, heteroPaths(), 10, 1, 0, 60, "everyday")
	add("web-handoff", handoffDesc, handoffPaths(), 25, 2, 128*KB, 150, "handoff")
	add("web-lte", lteDesc, ltePaths(), 10, 1, 0, 60, "wireless", "trace")
	add("web-rtt10x", rtt10xDesc, rtt10xPaths(), 10, 1, 0, 60, "rtt")
	return out
}

// rpcScenarios are the rpc workload (4 KB responses at a fixed rate beside a
// bulk download that starts after a stretch without it) on the first three
// path sets, each with its baselines.
func rpcScenarios() []Scenario {
	var out []Scenario
	add := func(name, paths string, ps []PathSpec, rate float64, n int, bulkMB int64, start float64, buf int64, dur float64, tags ...string) {
		r := &RPC{RateHz: rate, Requests: n, RequestBytes: 200, ResponseBytes: 4 * KB, BulkBytes: bulkMB * MB, BulkStart: sec(start), Urgency: 1}
		w := &Workload{Kind: WorkloadRPC, RPC: r}
		s := Scenario{Name: name, Tags: append([]string{"workload", "rpc"}, tags...), Paths: ps, ReceiveBuffer: buf, Duration: sec(dur), Workload: w}
		s.Bytes = w.TotalBytes()
		out = append(out, withBaselines(s, fmt.Sprintf("Requests beside a bulk transfer on %s Workload: %d requests of 200 B, %g per second from the session's open, each answered with 4 KB at urgency 1; "+
			"a %d MB download (urgency 3, incremental) starts at %g s on the same session: the requests before it measure the latency without the bulk transfer, those during it the latency with it.", paths, n, rate, bulkMB, start))...)
	}
	add("rpc-hetero", heteroDesc, heteroPaths(), 20, 300, 20, 5, 0, 60, "everyday")
	add("rpc-handoff", handoffDesc, handoffPaths(), 10, 600, 40, 15, 128*KB, 120, "handoff")
	add("rpc-lte", lteDesc, ltePaths(), 20, 300, 20, 5, 0, 60, "wireless", "trace")
	return out
}

// videoLTEScenarios is the video workload on the lossy LTE drive beside
// Wi-Fi, with its baselines (video-hetero and video-handoff are in
// library_video.go).
func videoLTEScenarios() []Scenario {
	w := &Workload{Kind: WorkloadVideo, ChunkDuration: sec(2), BitrateBps: mbps(4), Chunks: 30, StartupBuffer: sec(2)}
	s := Scenario{Name: "video-lte", Tags: []string{"workload", "video", "wireless", "trace"}, Paths: ltePaths(), Duration: sec(240), Workload: w}
	s.Bytes = w.TotalBytes()
	return withBaselines(s, "Video on "+lteDesc+" Workload: 30 chunks of 2 s at 4 Mbit/s (1 MB each, 60 s of video), playback after the first chunk, "+
		"the next chunk requested while the buffer holds under 2 chunks (XLINK, SIGCOMM 2021, §2; bitrate and length ours); 240 s limit, room for the LTE path alone.")
}
