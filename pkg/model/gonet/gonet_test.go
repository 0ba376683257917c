package gonet

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/internal/alloctest"
	"github.com/mpqsched/mpqsched/pkg/model/internal/modeltest"
	"github.com/mpqsched/mpqsched/sched/edar"
	"github.com/mpqsched/mpqsched/sched/schedtest"
)

func load(t testing.TB, name string) *Net {
	t.Helper()
	n, err := Load(modeltest.Model(name))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestModelMatchesTrainer checks the Go forward pass against the JAX
// Q-values the trainer stored next to the model (<model>.golden.json).
func TestModelMatchesTrainer(t *testing.T) {
	for _, name := range []string{"a", "b"} {
		path := modeltest.Model(name)
		b, err := os.ReadFile(path + ".golden.json")
		if err != nil {
			t.Fatalf("%v (the trainer writes it next to the model)", err)
		}
		var rows []struct {
			N    int
			Conn []float32
			Sub  [][][]float32
			Q    []float32
		}
		if err := json.Unmarshal(b, &rows); err != nil || len(rows) == 0 {
			t.Fatalf("golden file: %v", err)
		}
		n := load(t, name)
		if !n.Synthetic() {
			t.Errorf("%s: test models must be labelled synthetic", path)
		}
		worst := 0.0
		for _, r := range rows {
			s := edar.State{N: r.N}
			copy(s.Conn[:], r.Conn)
			for i := range r.Sub {
				for j := range r.Sub[i] {
					copy(s.Sub[i][j][:], r.Sub[i][j])
				}
			}
			var q [2]float32
			if err := n.Q(&s, &q); err != nil {
				t.Fatal(err)
			}
			for k := range q {
				worst = math.Max(worst, math.Abs(float64(q[k]-r.Q[k])))
			}
		}
		t.Logf("%s: max |gonet − JAX| = %.2g over %d states", filepath.Base(path), worst, len(rows))
		if worst > 1e-5 {
			t.Errorf("%s: gonet differs from the trainer by %g > 1e-5", path, worst)
		}
	}
}

func TestModelQDoesNotAllocate(t *testing.T) {
	n := load(t, "a")
	s := modeltest.State(rand.New(rand.NewPCG(1, 1)), 3)
	var q [2]float32
	if a := alloctest.Mallocs(100, func() { n.Q(&s, &q) }); a != 0 {
		t.Fatalf("Q: %d allocations in 100 calls, want 0", a)
	}
	s.N = 0
	if err := n.Q(&s, &q); err == nil {
		t.Fatal("Q on a state without subflows: want an error")
	}
}

func TestModelCorruptOrMissing(t *testing.T) {
	good, err := os.ReadFile(modeltest.Model("a"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := Load(filepath.Join(dir, "nope.onnx")); err == nil || !strings.Contains(err.Error(), "nope.onnx") {
		t.Fatalf("missing file: %v", err)
	}
	cases := map[string][]byte{
		"empty":          nil,
		"garbage":        []byte("this is not a protobuf at all, just text"),
		"truncated":      good[:len(good)/2],
		"one byte short": good[:len(good)-1],
		"wrong graph id": []byte(strings.Replace(string(good), GraphID, "edar-qnet-v9", 1)),
		"renamed weight": []byte(strings.ReplaceAll(string(good), "fc2_W", "fc2_X")),
		"other op":       []byte(strings.Replace(string(good), "Relu", "Tanh", 1)),
	}
	for name, b := range cases {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".onnx")
		os.WriteFile(path, b, 0o644)
		_, err := Load(path)
		if err == nil {
			t.Errorf("%s: loaded", name)
			continue
		}
		if !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %q does not name the file", name, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	good, err := os.ReadFile(modeltest.Model("a"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good[:4096])
	f.Add([]byte{0x3a, 0x05, 0x2a, 0x03, 0x08, 0x01, 0x10})
	f.Add([]byte{0x72, 0x04, 0x0a, 0x02, 'k', 'v'})
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := Parse(b)
		if err == nil && n == nil {
			t.Fatal("nil net without error")
		}
	})
}

// TestWatcherSwapsModels hot-reloads model b over model a under a running
// scheduler, as the online trainer does (§V.C: "Synchronize θ to the
// scheduler").
func TestWatcherSwapsModels(t *testing.T) {
	dir := t.TempDir()
	live := filepath.Join(dir, "edar.onnx")
	install := func(name string, mod time.Time) {
		b, err := os.ReadFile(modeltest.Model(name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(live+".tmp", b, 0o644)
		os.Chtimes(live+".tmp", mod, mod)
		if err := os.Rename(live+".tmp", live); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	install("a", t0)
	var lines []string
	s := edar.New(edar.Config{Log: func(l string) { lines = append(lines, l) }})
	var current edar.Policy
	w := &edar.Watcher{
		Path:  live,
		Load:  func(p string) (edar.Policy, error) { return Load(p) },
		Apply: func(p edar.Policy) { current = p; s.SetPolicy(p) },
		Log:   func(l string) { lines = append(lines, l) },
	}
	if ok, err := w.Check(); !ok || err != nil {
		t.Fatalf("load a: %v %v", ok, err)
	}
	paths := schedtest.Paths(2)
	conn := schedtest.Conn(t0, 100)
	probe := modeltest.State(rand.New(rand.NewPCG(5, 5)), 2)
	qOf := func(p edar.Policy) [2]float32 {
		var q [2]float32
		if err := p.Q(&probe, &q); err != nil {
			t.Fatal(err)
		}
		return q
	}
	qa, qb := qOf(load(t, "a")), qOf(load(t, "b"))
	if qa == qb {
		t.Fatal("test models a and b agree; cannot tell them apart")
	}
	for i := 0; i < 50; i++ {
		conn.Now = t0.Add(time.Duration(i) * 5 * time.Millisecond)
		if d := s.Decide(&conn, paths); d.Paths == 0 {
			t.Fatalf("decision %d sends nothing", i)
		}
		if i == 25 {
			install("b", t0.Add(time.Minute))
			if ok, err := w.Check(); !ok || err != nil {
				t.Fatalf("load b: %v %v", ok, err)
			}
		}
	}
	if qOf(current) != qb {
		t.Fatal("policy in force is not model b")
	}
	if st := s.Stats(); st.PolicyErrors != 0 || st.Intervals == 0 {
		t.Fatalf("stats %+v", st)
	}
	os.WriteFile(live+".tmp", []byte("junk"), 0o644)
	os.Rename(live+".tmp", live)
	if _, err := w.Check(); err == nil || qOf(current) != qb {
		t.Fatal("a corrupt model replaced the policy")
	}
	for _, l := range lines {
		t.Log(l)
	}
}

func BenchmarkQ(b *testing.B) {
	n, err := Load(modeltest.Model("a"))
	if err != nil {
		b.Fatal(err)
	}
	modeltest.BenchmarkQ(b, n)
}

// BenchmarkParse reads EdAR's ONNX file from memory: the reader and the
// weight checks of Load, without the disk.
func BenchmarkParse(b *testing.B) {
	good, err := os.ReadFile(modeltest.Model("a"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(good); err != nil {
			b.Fatal(err)
		}
	}
}
