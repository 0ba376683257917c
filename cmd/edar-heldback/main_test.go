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
