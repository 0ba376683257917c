package gympolicy

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mpqsched/mpqsched/pkg/model/ort"
	"github.com/mpqsched/mpqsched/pkg/model/policy"
	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/learned"
)

const model = "../testdata/gym-policy.onnx"

type golden struct {
	Inputs map[string][]float32 `json:"inputs"`
	Logits []float32            `json:"logits"`
}

func loadGolden(t *testing.T) []golden {
	t.Helper()
	b, err := os.ReadFile("../testdata/gym-policy.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g []golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// Both backends compute the logits numpy computed when the model was
// exported (pkg/model/testdata/gym_policy.py).
func TestBackendsMatchTheExporter(t *testing.T) {
	for _, be := range []policy.Backend{policy.PureGo, policy.ONNXRuntime} {
		t.Run(string(be), func(t *testing.T) {
			t.Setenv(policy.BackendEnv, string(be))
			p, err := Load(model, func(s string) { t.Log(s) })
			if err != nil {
				if be == policy.ONNXRuntime && errors.Is(err, ort.ErrNoLibrary) {
					t.Skip(err)
				}
				t.Fatal(err)
			}
			defer p.Close()
			if p.Backend() != be || p.Slots() != 2 || p.EdarState() {
				t.Fatalf("backend %s, slots %d, EdAR state %v", p.Backend(), p.Slots(), p.EdarState())
			}
			var out [8]float32
			for i, g := range loadGolden(t) {
				n, err := p.Eval(g.Inputs, out[:])
				if err != nil || n != 8 {
					t.Fatalf("case %d: %d logits, %v", i, n, err)
				}
				for k := range out {
					if d := math.Abs(float64(out[k] - g.Logits[k])); d > 1e-4*(1+math.Abs(float64(g.Logits[k]))) {
						t.Fatalf("case %d: logits %v, exporter %v", i, out, g.Logits)
					}
				}
			}
		})
	}
}

// Act takes the arg max and maps the joint index to slots and the copy bit;
// a slot that holds no path is not chosen.
func TestDecode(t *testing.T) {
	s := &spec{slots: 2, actions: Joint, n: 8}
	o := &learned.Observation{N: 2}
	var a learned.Action
	s.decode([]float32{0, 0, 0, 0, 0, 0, 0, 9}, o, &a) // k = 7: both slots, copies
	if a != (learned.Action{Paths: 0b11, Copy: true}) {
		t.Errorf("k=7: %+v", a)
	}
	s.decode([]float32{0, 0, 9, 0, 0, 0, 0, 0}, o, &a) // k = 2: slot 1, new data
	if a != (learned.Action{Paths: 0b10}) {
		t.Errorf("k=2: %+v", a)
	}
	o.N = 1
	s.decode([]float32{0, 0, 0, 9, 0, 0, 0, 0}, o, &a) // k = 3 with one path: slot 0
	if a != (learned.Action{Paths: 0b01}) {
		t.Errorf("k=3, one path: %+v", a)
	}
	m := &spec{slots: 2, actions: Modes, n: 2}
	o.N = 2
	m.decode([]float32{0, 1}, o, &a)
	if a != (learned.Action{Paths: 0b11, Copy: true}) {
		t.Errorf("modes 1: %+v", a)
	}
}

// A corrupt, foreign or truncated model is a clear error; the learned
// scheduler then runs its fallback (minRTT), which sched/learned tests.
func TestBadModels(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o644)
		return p
	}
	cases := map[string]string{
		filepath.Join(dir, "missing.onnx"):                             "no such file",
		write("junk.onnx", []byte("\x0a\xff\xff\xff junk")):            "not a readable ONNX model",
		write("half.onnx", good[:len(good)/2]):                         "not a readable ONNX model",
		write("edar.onnx", mustRead(t, "../../../testdata/edar.onnx")): "mpqgym.policy",
	}
	for path, want := range cases {
		_, err := Load(path, func(s string) { t.Log(s) })
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one saying %q", filepath.Base(path), err, want)
		}
	}
}

func mustRead(t *testing.T, p string) []byte {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The policy drives the learned scheduler end to end on snapshots.
func TestSchedulesWithThePolicy(t *testing.T) {
	p, err := Load(model, func(s string) { t.Log(s) })
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	s := learned.New(learned.Config{Policy: p, Log: func(l string) { t.Error(l) }})
	paths := []sched.PathInfo{{ID: 1, MinRTT: 1e7, SmoothedRTT: 1e7, CongestionWindow: 1e5, MSS: 1200},
		{ID: 2, MinRTT: 3e7, SmoothedRTT: 3e7, CongestionWindow: 1e5, MSS: 1200}}
	conn := sched.ConnInfo{SegmentSize: 1200}
	d := s.Decide(&conn, paths)
	if st := s.Stats(); st.PolicyErrors != 0 || st.Intervals != 1 {
		t.Fatalf("stats %+v", st)
	}
	if d.Action != sched.Wait && d.Paths == 0 {
		t.Fatalf("decision %+v", d)
	}
}
