package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeRuns writes one results.jsonl of sched with the given goodputs
// (Mbit/s) and copies (fraction of the bytes sent).
func writeRuns(t *testing.T, dir, sched string, goodput []float64, copies float64) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for i, g := range goodput {
		json.NewEncoder(&b).Encode(map[string]any{"scheduler": sched, "seed": i + 1, "goodput_bps": g * 1e6,
			"sent_bytes": 1e6, "redundant_bytes": copies * 1e6, "max_stall_s": 0.1, "sha256_ok": true})
	}
	if err := os.WriteFile(filepath.Join(dir, "results.jsonl"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestTableFoldsSinglePathsAndMarksTies: the single-path rows become one
// "best single path" row (the highest mean), rows far apart get different
// letters, near-equal rows share one, and the verdicts count as the issue
// states them.
func TestTableFoldsSinglePathsAndMarksTies(t *testing.T) {
	root := t.TempDir()
	s := filepath.Join(root, "held-x")
	// main: edar-o equal to minrtt (tie), redundant far below.
	main := filepath.Join(s, "main")
	if err := os.MkdirAll(main, 0o755); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	add := func(sched string, gs []float64, copies float64) {
		for i, g := range gs {
			json.NewEncoder(&b).Encode(map[string]any{"scheduler": sched, "seed": i + 1, "goodput_bps": g * 1e6,
				"sent_bytes": 1e6, "redundant_bytes": copies * 1e6, "max_stall_s": 0.1})
		}
	}
	add("minrtt", []float64{20, 20.2, 19.8, 20.1}, 0)
	add("edar-o", []float64{20.1, 19.9, 20, 20.2}, 0.02)
	add("edar", []float64{19.9, 20, 20.1, 20}, 0.01)
	add("redundant", []float64{10, 10.1, 9.9, 10}, 0.5)
	if err := os.WriteFile(filepath.Join(main, "results.jsonl"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	writeRuns(t, filepath.Join(s, "single-0"), "minrtt", []float64{12, 12.1, 11.9, 12}, 0)
	writeRuns(t, filepath.Join(s, "single-1"), "minrtt", []float64{8, 8.1, 7.9, 8}, 0)

	rows, err := load(s)
	if err != nil {
		t.Fatal(err)
	}
	best, ok := rows["best single path"]
	if !ok || best.label != "best single path (0)" || len(rows) != 5 {
		t.Fatalf("rows %v, best single path %+v", rows, best)
	}
	var out bytes.Buffer
	v := table(&out, "held-x", rows)
	summary(&out, []verdict{v})
	txt := out.String()
	if rows["edar-o"].tie != rows["minrtt"].tie || !strings.Contains(rows["minrtt"].tie, "a") {
		t.Errorf("edar-o %q and minrtt %q should tie in group a:\n%s", rows["edar-o"].tie, rows["minrtt"].tie, txt)
	}
	if strings.ContainsAny(rows["redundant"].tie, rows["minrtt"].tie) || strings.ContainsAny(best.tie, rows["redundant"].tie) {
		t.Errorf("redundant %q, minrtt %q and best single %q should all differ:\n%s", rows["redundant"].tie, rows["minrtt"].tie, best.tie, txt)
	}
	for _, want := range []string{
		"EdAR-o at or above the best single path: 1 of 1 settings by mean",
		"within 5% of the best heuristic's mean goodput: 1 of 1",
		"copies at most 5% where redundant is not the best heuristic: 1 of 1",
	} {
		if !strings.Contains(txt, want) {
			t.Errorf("summary lacks %q:\n%s", want, txt)
		}
	}
}

// wrun is one synthetic run of a workload setting: its scheduler, goodput
// (Mbit/s) and workload figures (s).
type wrun struct {
	sched                      string
	goodput                    float64
	reqP99, chunkP99, rebuffer float64
}

// writeWorkload writes dir/results.jsonl with runs, each with an "rpc"
// object if kind is "rpc" and a "video" object if it is "video", as
// mpquic-bench records them (metrics.RPC, metrics.Video).
func writeWorkload(t *testing.T, dir, kind string, runs []wrun) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for i, r := range runs {
		rec := map[string]any{"scheduler": r.sched, "seed": i + 1, "goodput_bps": r.goodput * 1e6,
			"sent_bytes": 1e6, "redundant_bytes": 0, "max_stall_s": 0.1, "sha256_ok": true}
		switch kind {
		case "rpc":
			rec["rpc"] = map[string]any{"requests": 300, "idle_p99_s": 0.05, "loaded_p99_s": r.reqP99}
		case "video":
			rec["video"] = map[string]any{"chunks": 30, "chunk_p99_s": r.chunkP99, "rebuffer_s": r.rebuffer}
		}
		json.NewEncoder(&b).Encode(rec)
	}
	if err := os.WriteFile(filepath.Join(dir, "results.jsonl"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// reqRuns are n runs of sched with equal goodput and the given loaded
// request p99s.
func reqRuns(sched string, goodput float64, p99s ...float64) []wrun {
	var out []wrun
	for _, p := range p99s {
		out = append(out, wrun{sched: sched, goodput: goodput, reqP99: p})
	}
	return out
}

// videoRuns are runs of sched with the given (chunk p99, rebuffering)
// pairs.
func videoRuns(sched string, goodput float64, figs ...[2]float64) []wrun {
	var out []wrun
	for _, f := range figs {
		out = append(out, wrun{sched: sched, goodput: goodput, chunkP99: f[0], rebuffer: f[1]})
	}
	return out
}

// line is the line of txt that starts with prefix ("" if none).
func line(txt, prefix string) string {
	for _, l := range strings.Split(txt, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// TestWorkloadColumnsAndTargets: an rpc setting's table adds the loaded
// request p99 (ms), a video setting's the chunk p99 and the rebuffering
// (s), each mean ± 95% CI over the seeds; their best single path is the
// lowest latency, not the highest goodput; the targets name, per kind,
// EdAR-o's mean against the best (lowest) heuristic's of each figure, and
// the goodput targets count the bulk setting only.
func TestWorkloadColumnsAndTargets(t *testing.T) {
	root := t.TempDir()
	rpc := filepath.Join(root, "held-rpc")
	var main []wrun
	main = append(main, reqRuns("edar-o", 7, 0.100, 0.110, 0.120)...)
	main = append(main, reqRuns("minrtt", 7, 0.150, 0.150, 0.150)...)
	main = append(main, reqRuns("blest", 7, 0.130, 0.140, 0.150)...)
	writeWorkload(t, filepath.Join(rpc, "main"), "rpc", main)
	// Path 0 has the higher goodput, path 1 the lower request p99.
	writeWorkload(t, filepath.Join(rpc, "single-0"), "rpc", reqRuns("minrtt", 7, 0.300, 0.300, 0.300))
	writeWorkload(t, filepath.Join(rpc, "single-1"), "rpc", reqRuns("minrtt", 4, 0.200, 0.200, 0.200))

	video := filepath.Join(root, "held-video")
	main = nil
	main = append(main, videoRuns("edar-o", 4, [2]float64{2, 0}, [2]float64{2.2, 0.3}, [2]float64{2.4, 0.6})...)
	// minrtt has the lower chunk p99, redundant the lower rebuffering.
	main = append(main, videoRuns("minrtt", 4, [2]float64{1.5, 0.5}, [2]float64{1.5, 0.5}, [2]float64{1.5, 0.5})...)
	main = append(main, videoRuns("redundant", 4, [2]float64{2.5, 0.1}, [2]float64{2.5, 0.1}, [2]float64{2.5, 0.1})...)
	writeWorkload(t, filepath.Join(video, "main"), "video", main)
	writeWorkload(t, filepath.Join(video, "single-0"), "video", videoRuns("minrtt", 4.2, [2]float64{5, 1.6}))
	writeWorkload(t, filepath.Join(video, "single-1"), "video", videoRuns("minrtt", 4.0, [2]float64{3, 0.2}))

	bulk := filepath.Join(root, "held-bulk")
	writeRuns(t, filepath.Join(bulk, "main"), "edar-o", []float64{20, 20}, 0)
	writeRuns(t, filepath.Join(bulk, "single-0"), "minrtt", []float64{10, 10}, 0)

	var out bytes.Buffer
	if err := write(&out, root); err != nil {
		t.Fatal(err)
	}
	txt := out.String()
	for _, want := range []string{
		"| scheduler | runs ok | goodput, Mbit/s | tie | copies / sent | longest stall, s | request p99 loaded, ms |\n|---|---|---|---|---|---|---|\n",
		// 110 ms ± t(0.975, 2) · 10 ms / √3 = 24.8 ms.
		"| edar-o | 3/3 | 7.00 ± 0.00 | a | 0.0 ± 0.0% | 0.10 ± 0.00 | 110.0 ± 24.8 |\n",
		"| best single path (1) | 3/3 | 4.00 ± 0.00 | b | 0.0 ± 0.0% | 0.10 ± 0.00 | 200.0 ± 0.0 |\n",
		"| scheduler | runs ok | goodput, Mbit/s | tie | copies / sent | longest stall, s | chunk p99, s | rebuffering, s |\n|---|---|---|---|---|---|---|---|\n",
		// 2.2 s ± 4.303 · 0.2 / √3 = 0.50 s; 0.3 s ± 4.303 · 0.3 / √3 = 0.75 s.
		"| edar-o | 3/3 | 4.00 ± 0.00 | a | 0.0 ± 0.0% | 0.10 ± 0.00 | 2.20 ± 0.50 | 0.30 ± 0.75 |\n",
		"| best single path (1) | 1/1 | 4.00 | a | 0.0% | 0.10 | 3.00 | 0.20 |\n",
		"| held-bulk | 2.000 |",
	} {
		if !strings.Contains(txt, want) {
			t.Errorf("output lacks %q:\n%s", want, txt)
		}
	}
	for _, c := range []struct{ prefix, want string }{
		{"- EdAR-o at or above", "- EdAR-o at or above the best single path: 1 of 1 settings by mean; 1 of 1 counting ties (a shared letter) as not below."},
		{"- rpc", "- rpc, request p99 under load (mean over the seeds; the lowest is the best): held-rpc: EdAR-o 110.0 ms, best heuristic blest 140.0 ms, best single path (1) 200.0 ms."},
		{"- video", "- video, chunk p99 and rebuffering (mean over the seeds; the lowest is the best): held-video: chunk p99 EdAR-o 2.20 s, best heuristic minrtt 1.50 s; rebuffering EdAR-o 0.30 s, best heuristic redundant 0.10 s."},
	} {
		if got := line(txt, c.prefix); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
	if strings.Contains(txt, "| held-rpc |") || strings.Contains(txt, "| held-video |") {
		t.Errorf("a workload setting is in the goodput targets:\n%s", txt)
	}
}

// TestCommittedTableUnchanged: the bulk settings' tables are today's, byte
// for byte: the committed runs give the committed table (less its first
// line, the online learning's summary that eval_heldback.sh prints first).
func TestCommittedTableUnchanged(t *testing.T) {
	const runs = "../../docs/edar-generalisation/runs"
	want, err := os.ReadFile(filepath.Join(runs, "table.md"))
	if err != nil {
		t.Fatal(err)
	}
	if first, rest, ok := bytes.Cut(want, []byte("\n")); ok && bytes.HasPrefix(first, []byte("summary ")) {
		want = rest
	}
	var got bytes.Buffer
	if err := write(&got, runs); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("the committed runs no longer give table.md:\n%s", got.String())
	}
	// Only the workload settings' tables have workload columns.
	for _, sec := range bytes.Split(got.Bytes(), []byte("\n### "))[1:] {
		name, table, _ := bytes.Cut(sec, []byte("\n"))
		header, _, _ := bytes.Cut(bytes.TrimLeft(table, "\n"), []byte("\n"))
		workload := bytes.HasPrefix(name, []byte("held-rpc-")) || bytes.HasPrefix(name, []byte("held-video-"))
		if bytes.HasPrefix(name, []byte("Targets")) || workload {
			continue
		}
		if bytes.Contains(header, []byte("p99")) || bytes.Contains(header, []byte("rebuffering")) {
			t.Errorf("bulk setting %s has workload columns: %s", name, header)
		}
	}
}

// TestAdaptationsPooledAndCountedEach: edar-o runs of adapt-K join main's
// edar-o row (adaptation 1), and the targets are also counted for each
// adaptation on its own. Two bulk settings: adaptation 1 is within 5% of
// minRTT and copies little on both, adaptation 2 on neither.
func TestAdaptationsPooledAndCountedEach(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"held-a", "held-b"} {
		s := filepath.Join(root, name)
		var b bytes.Buffer
		add := func(sched string, gs []float64, copies float64) {
			for i, g := range gs {
				json.NewEncoder(&b).Encode(map[string]any{"scheduler": sched, "seed": i + 1, "goodput_bps": g * 1e6,
					"sent_bytes": 1e6, "redundant_bytes": copies * 1e6, "max_stall_s": 0.1})
			}
		}
		add("minrtt", []float64{20, 20.2, 19.8}, 0)
		add("edar-o", []float64{19.9, 20, 20.1}, 0.01)
		if err := os.MkdirAll(filepath.Join(s, "main"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(s, "main", "results.jsonl"), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		writeRuns(t, filepath.Join(s, "adapt-2"), "edar-o", []float64{15, 15.1, 14.9}, 0.2)
		writeRuns(t, filepath.Join(s, "single-0"), "minrtt", []float64{12, 12.1, 11.9}, 0)
	}
	var out bytes.Buffer
	if err := write(&out, root); err != nil {
		t.Fatal(err)
	}
	txt := out.String()
	for _, want := range []string{
		"| edar-o | 6/6 | 17.50 ± ",                              // both adaptations' runs in one row
		"within 5% of the best heuristic's mean goodput: 0 of 2", // the pooled mean, 17.5 against 20
		"pool 2 adaptations of EdAR-p by the same protocol; each on its own (1, 2, …): at or above the best single path by mean 2 of 2, 2 of 2; within 5% of the best heuristic 2 of 2, 0 of 2; copies at most 5% 2 of 2, 0 of 2.",
	} {
		if !strings.Contains(txt, want) {
			t.Errorf("output lacks %q:\n%s", want, txt)
		}
	}
	writeRuns(t, filepath.Join(root, "held-a", "adapt-x"), "edar-o", []float64{1}, 0)
	if err := write(&bytes.Buffer{}, root); err == nil {
		t.Error("adapt-x was accepted")
	}
}
