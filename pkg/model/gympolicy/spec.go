// Package gympolicy runs a policy exported by the training environment
// (python/mpqgym/export.py) as a learned.Policy, so that sched/learned
// schedules with it in mpquic-bench and mpquic-server. The model runs on
// onnxruntime (pkg/model/ort's library) when it is there, else on the
// pure-Go interpreter pkg/model/graph when the graph's operators allow
// (logged either way), as EdAR's model does through pkg/model/policy.
//
// # The model contract (docs/gym.md)
//
// An ONNX model whose metadata_props hold
//
//	mpqgym.policy   "1"
//	mpqgym.slots    P, the observation's path slots
//	mpqgym.inputs   the observation keys it reads, comma-separated, in input order:
//	                conn, paths, present, report, edar_conn, edar_sub
//	mpqgym.actions  "joint": output logits[1, 2^(P+1)]; index k is the action
//	                whose bit i (i < P) marks path slot i and bit P asks for copies
//	                "modes": output logits[1, 2]; 0 = every path, new data (minRTT),
//	                1 = every path, copies (EdAR's redundant mode)
//
// Each input is float32 named as its key with a leading batch axis of 1 and
// the observation's shape (conn [1,18], paths [1,P,20], present [1,P],
// report [1,11+P], edar_conn [1,3], edar_sub [1,P,6,6]); the output is named
// "logits". The action is the arg max (the first on ties).
package gympolicy

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mpqsched/mpqsched/sched/edar"
	"github.com/mpqsched/mpqsched/sched/learned"
)

// Metadata keys and the output's name.
const (
	MetaPolicy  = "mpqgym.policy"
	MetaSlots   = "mpqgym.slots"
	MetaInputs  = "mpqgym.inputs"
	MetaActions = "mpqgym.actions"
	Output      = "logits"
	Version     = "1"
)

// Action encodings (MetaActions).
const (
	Joint = "joint"
	Modes = "modes"
)

// spec is what the metadata says.
type spec struct {
	slots   int
	inputs  []string
	shapes  [][]int64 // per input, with the batch axis
	actions string
	n       int // logits
}

// parseSpec checks the metadata.
func parseSpec(meta map[string]string) (*spec, error) {
	if v := meta[MetaPolicy]; v != Version {
		return nil, fmt.Errorf("metadata %s = %q, want %q (not a policy exported by mpqgym, or a newer one)", MetaPolicy, v, Version)
	}
	s := &spec{actions: meta[MetaActions]}
	var err error
	if s.slots, err = strconv.Atoi(meta[MetaSlots]); err != nil || s.slots < 1 || s.slots > learned.MaxSlots {
		return nil, fmt.Errorf("metadata %s = %q, want 1..%d", MetaSlots, meta[MetaSlots], learned.MaxSlots)
	}
	P := int64(s.slots)
	switch s.actions {
	case Joint:
		s.n = 1 << (s.slots + 1)
	case Modes:
		s.n = 2
	default:
		return nil, fmt.Errorf("metadata %s = %q, want %q or %q", MetaActions, s.actions, Joint, Modes)
	}
	seen := map[string]bool{}
	for _, k := range strings.Split(meta[MetaInputs], ",") {
		var shape []int64
		switch k {
		case "conn":
			shape = []int64{1, learned.NumConnFeatures}
		case "paths":
			shape = []int64{1, P, learned.NumPathFeatures}
		case "present":
			shape = []int64{1, P}
		case "report":
			shape = []int64{1, learned.NumReportFeatures + P}
		case "edar_conn":
			shape = []int64{1, edar.ConnFeatures}
		case "edar_sub":
			shape = []int64{1, P, edar.HistoryLen, edar.SubflowFeatures}
		default:
			return nil, fmt.Errorf("metadata %s: unknown observation key %q", MetaInputs, k)
		}
		if seen[k] {
			return nil, fmt.Errorf("metadata %s names %q twice", MetaInputs, k)
		}
		seen[k] = true
		s.inputs = append(s.inputs, k)
		s.shapes = append(s.shapes, shape)
	}
	return s, nil
}

// edarState reports whether an input needs EdAR's state.
func (s *spec) edarState() bool {
	for _, k := range s.inputs {
		if strings.HasPrefix(k, "edar_") {
			return true
		}
	}
	return false
}

// fill writes input k of observation o to dst (len = the input's size).
func (s *spec) fill(k int, o *learned.Observation, dst []float32) {
	var row [learned.NumPathFeatures + learned.NumConnFeatures + learned.NumReportFeatures + learned.MaxSlots]float64
	put := func(v []float64) {
		for i, x := range v {
			dst[i] = float32(x)
		}
		dst = dst[len(v):]
	}
	switch s.inputs[k] {
	case "conn":
		o.ConnFeatures(row[:])
		put(row[:learned.NumConnFeatures])
	case "paths":
		for i := 0; i < s.slots; i++ {
			o.PathFeatures(i, row[:])
			put(row[:learned.NumPathFeatures])
		}
	case "present":
		for i := 0; i < s.slots; i++ {
			dst[i] = 0
			if i < o.N {
				dst[i] = 1
			}
		}
	case "report":
		o.ReportFeatures(row[:], s.slots)
		put(row[:learned.NumReportFeatures+s.slots])
	case "edar_conn":
		copy(dst, o.Edar.Conn[:])
	case "edar_sub":
		for i := 0; i < s.slots; i++ {
			for j := range o.Edar.Sub[i] {
				copy(dst, o.Edar.Sub[i][j][:])
				dst = dst[edar.SubflowFeatures:]
			}
		}
	}
}

// decode turns the arg max of logits into an action.
func (s *spec) decode(logits []float32, o *learned.Observation, a *learned.Action) {
	best := 0
	for i, v := range logits {
		if v > logits[best] {
			best = i
		}
	}
	if s.actions == Modes {
		*a = learned.Action{Paths: 1<<uint(o.N) - 1, Copy: best == 1}
		return
	}
	mask := uint64(best) & (1<<uint(s.slots) - 1)
	*a = learned.Action{Paths: 0, Copy: best>>uint(s.slots)&1 == 1}
	a.Paths = 0
	for i := 0; i < o.N && i < s.slots; i++ {
		if mask>>uint(i)&1 == 1 {
			a.Paths = a.Paths.Add(i)
		}
	}
}
