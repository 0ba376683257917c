package scenario

import "fmt"

// videoScenarios are the video workload (Workload) on the paths of
// edar-handoff and hetero-2path, each with its single-path baselines
// (named <scenario>-<path>-only, tagged "baseline"), so that a report shows
// what the second path adds. The player follows XLINK (SIGCOMM 2021): 2 s
// chunks fetched one at a time while the buffer is below two chunks; the
// bitrates, lengths and startup buffers are our choices.
func videoScenarios() []Scenario {
	video := func(chunkSec, bitrateMbps float64, chunks int, startupSec float64) *Workload {
		return &Workload{Kind: WorkloadVideo, ChunkDuration: sec(chunkSec), BitrateBps: mbps(bitrateMbps), Chunks: chunks, StartupBuffer: sec(startupSec)}
	}
	var out []Scenario
	add := func(base Scenario, common string) {
		base.Bytes = base.Workload.TotalBytes()
		all := base
		all.Description = common + fmt.Sprintf(" Baselines: %s-%s-only and %s-%s-only.", base.Name, base.Paths[0].Name, base.Name, base.Paths[1].Name)
		out = append(out, all)
		for _, p := range base.Paths {
			one := base
			one.Name = base.Name + "-" + p.Name + "-only"
			one.Description = fmt.Sprintf("Single-path baseline of %s: its %s path alone. ", base.Name, p.Name) + common
			one.Tags = append(append([]string(nil), base.Tags...), "baseline")
			one.Paths = []PathSpec{p}
			out = append(out, one)
		}
	}

	p2 := link(10, 50, 0.001)
	p2.Handoffs = []Window{win(20, 40), win(60, 80)}
	add(Scenario{
		Name:          "video-handoff",
		Tags:          []string{"workload", "video", "handoff"},
		Paths:         []PathSpec{sym("path1", link(10, 25, 0.001)), sym("path2", p2)},
		ReceiveBuffer: 128 * KB,
		Duration:      sec(150), // 84 s of video, plus room for the single path 2's stalls (about 45 s)
		Workload:      video(2, 4, 42, 2),
	}, "Video on edar-handoff's paths (EdAR Table III): path 1 10 Mbit/s, 50 ms RTT, 0.1% loss; path 2 10 Mbit/s, 100 ms RTT, 0.1% loss, with handoffs at 20-40 s and 60-80 s "+
		"(each degrades for half its window, then the link is unusable); receive buffer 128 KB; 150 s limit. "+
		"Workload: 42 chunks of 2 s at 4 Mbit/s (1 MB each, 84 s of video), playback after the first chunk, the next chunk requested while the buffer holds under 2 chunks "+
		"(XLINK, SIGCOMM 2021, §2: a short-video player fetching chunk by chunk; bitrate and length ours).")

	add(Scenario{
		Name:     "video-hetero",
		Tags:     []string{"workload", "video", "everyday"},
		Paths:    []PathSpec{sym("fast", link(20, 5, 0)), sym("slow", link(10, 15, 0))},
		Duration: sec(60),
		Workload: video(2, 8, 20, 2),
	}, "Video on hetero-2path's paths: 20 Mbit/s with 10 ms RTT and 10 Mbit/s with 30 ms RTT, lossless. "+
		"Workload: 20 chunks of 2 s at 8 Mbit/s (2 MB each, 40 s of video), playback after the first chunk, the next chunk requested while the buffer holds under 2 chunks "+
		"(XLINK, SIGCOMM 2021, §2; bitrate and length ours).")
	return out
}
