package edar

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/sched/schedtest"
)

func TestReplayEvictsOldestAndSpools(t *testing.T) {
	r := NewReplay(3)
	for i := 0; i < 5; i++ {
		r.Add(Transition{S: State{N: 1}, S2: State{N: 2}, R: float32(i)})
	}
	if r.Len() != 3 || r.Added() != 5 {
		t.Fatalf("Len %d Added %d", r.Len(), r.Added())
	}
	dst := make([]Transition, 10)
	if n := r.Sample(rand.New(rand.NewPCG(1, 1)), dst); n != 10 {
		t.Fatalf("sampled %d", n)
	}
	for _, tr := range dst {
		if tr.R < 2 {
			t.Fatalf("sampled evicted transition %v", tr.R)
		}
	}
	path := filepath.Join(t.TempDir(), "replay.edar")
	if n, err := r.WriteFile(path); err != nil || n != 3 {
		t.Fatalf("WriteFile = %d, %v", n, err)
	}
	f, _ := os.Open(path)
	defer f.Close()
	ts, err := ReadAll(f)
	if err != nil || len(ts) != 3 || ts[0].R != 2 || ts[2].R != 4 {
		t.Fatalf("spooled %v, %v", ts, err)
	}
}

// textPolicy is a Policy loaded from a file holding "normal" or "redundant".
type textPolicy Mode

func (p textPolicy) Q(_ *State, q *[2]float32) error {
	*q = [2]float32{1, 0}
	if Mode(p) == Redundant {
		*q = [2]float32{0, 1}
	}
	return nil
}

func loadText(path string) (Policy, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	switch strings.TrimSpace(string(b)) {
	case "normal":
		return textPolicy(Normal), nil
	case "redundant":
		return textPolicy(Redundant), nil
	}
	return nil, errors.New("bad model")
}

func TestWatcherSwapsPolicyBetweenIntervals(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "edar.model")
	write := func(s string, mod time.Time) {
		tmp := model + ".tmp"
		os.WriteFile(tmp, []byte(s), 0o644)
		os.Chtimes(tmp, mod, mod)
		os.Rename(tmp, model) // as the trainer does
	}
	write("normal", t0)
	logs := &logSink{}
	s := New(Config{Log: func(string) {}})
	w := &Watcher{Path: model, Load: loadText, Apply: s.SetPolicy, Log: logs.log}
	if ok, err := w.Check(); !ok || err != nil {
		t.Fatalf("first Check = %v, %v", ok, err)
	}
	if ok, _ := w.Check(); ok {
		t.Fatal("unchanged file reloaded")
	}
	paths := twoPaths()
	conn := schedtest.Conn(t0, 100)
	s.Decide(&conn, paths)
	conn.Now = t0.Add(20 * time.Millisecond)
	if s.Decide(&conn, paths); s.Mode() != Normal {
		t.Fatal("model A says normal")
	}
	write("redundant", t0.Add(time.Second))
	if ok, err := w.Check(); !ok || err != nil {
		t.Fatalf("Check after new model = %v, %v", ok, err)
	}
	conn.Now = t0.Add(30 * time.Millisecond) // same TI: mode unchanged
	if s.Decide(&conn, paths); s.Mode() != Normal {
		t.Fatal("swap interrupted the current TI")
	}
	conn.Now = t0.Add(40 * time.Millisecond)
	if s.Decide(&conn, paths); s.Mode() != Redundant {
		t.Fatal("model B says redundant")
	}
	write("garbage", t0.Add(2*time.Second))
	if ok, err := w.Check(); ok || err == nil {
		t.Fatal("corrupt model applied")
	}
	conn.Now = t0.Add(60 * time.Millisecond)
	if s.Decide(&conn, paths); s.Mode() != Redundant {
		t.Fatal("a failed reload must keep the previous policy")
	}
	if len(logs.lines) != 3 || !strings.Contains(logs.lines[2], "keeping the previous policy") {
		t.Fatalf("log %q", logs.lines)
	}
}
