// Package gonet is a pure-Go float32 forward pass of the EdAR Q-network
// (paper §IV.C), with its weights read from the ONNX file that
// training/edar exports. It implements edar.Policy without cgo.
//
// The network, for a State with n subflows:
//
//   - LSTM1: six LSTMs of 10 units, one per subflow feature series (RTT,
//     RTO, throughput, cwnd, loss, in-flight), each run over the k+1 = 6
//     steps of history of every subflow; the last two hidden states of each
//     are kept: 6 × 2 × 10 = 120 values per subflow.
//   - LSTM2: 60 units run over the n subflows (n is dynamic); its last
//     hidden state is the representation h_θ(E^1, …, E^n).
//   - Core: [M_t (3), h (60)] → 128 → 32 → 2 with ReLU on the hidden layers;
//     the output is Q(s, normal), Q(s, redundant).
//
// 58,706 parameters. The ONNX file packs the six LSTM1s block-diagonally in
// one LSTM node; Load checks that the off-block weights are zero.
package gonet

import (
	"fmt"
	"math"
	"os"
	"slices"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/mpqsched/mpqsched/sched/edar"
)

// blas32 is gonum's pure-Go BLAS (assembly kernels on amd64, no cgo).
var blas32 gonum.Implementation

// GraphID is the ONNX metadata value "edar.graph" this package computes.
const GraphID = "edar-qnet-v1"

// graphOps is the node sequence of the exported graph (training/edar/edar_export.py).
var graphOps = []string{"Transpose", "LSTM", "Slice", "Transpose", "Reshape", "LSTM", "Reshape",
	"Concat", "Gemm", "Relu", "Gemm", "Relu", "Gemm"}

// Network sizes.
const (
	T    = edar.HistoryLen      // LSTM1 sequence length (6)
	F    = edar.SubflowFeatures // feature series per subflow (6)
	H1   = 10                   // units of each LSTM1
	H2   = 60                   // units of LSTM2
	In2  = 2 * F * H1           // LSTM2 input per subflow (120)
	Core = edar.ConnFeatures + H2
	FC1  = 128
	FC2  = 32
)

// Net is a loaded Q-network. Q is safe for concurrent use (calls are
// serialised); it does not allocate.
type Net struct {
	// LSTM1, per feature f: input weights w1[f][4·H1] (scalar input),
	// recurrent r1[f][4·H1][H1] row-major, bias b1[f][4·H1] (Wb + Rb).
	// Gate blocks in ONNX order i, o, f, c.
	w1 [F][4 * H1]float32
	r1 [F][4 * H1 * H1]float32
	b1 [F][4 * H1]float32
	// LSTM2: w2[4·H2][In2], r2[4·H2][H2] row-major, b2[4·H2].
	w2 []float32
	r2 []float32
	b2 []float32
	// Core, Gemm layout [in][out] row-major.
	fc1, fc1b, fc2, fc2b, out, outb []float32

	meta map[string]string

	mu sync.Mutex
	// scratch, guarded by mu
	rep   [edar.MaxSubflows][In2]float32
	gates [4 * H2]float32
	h, c  [H2]float32
	z     [Core]float32
	a1    [FC1]float32
	a2    [FC2]float32
}

// Load reads the ONNX model at path.
func Load(path string) (*Net, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("gonet: %w", err)
	}
	n, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("gonet: %s: %w", path, err)
	}
	return n, nil
}

// Parse reads an ONNX model from memory.
func Parse(b []byte) (*Net, error) {
	m, err := parseModel(b)
	if err != nil {
		return nil, fmt.Errorf("not a readable ONNX model: %w", err)
	}
	if g := m.metadata["edar.graph"]; g != GraphID {
		return nil, fmt.Errorf("metadata edar.graph = %q, want %q (not an EdAR model, or a newer graph)", g, GraphID)
	}
	if !slices.Equal(m.ops, graphOps) {
		return nil, fmt.Errorf("graph nodes %v, want %v", m.ops, graphOps)
	}
	get := func(name string, dims ...int64) ([]float32, error) {
		t, ok := m.initializers[name]
		if !ok {
			return nil, fmt.Errorf("initializer %q missing", name)
		}
		if len(t.dims) != len(dims) {
			return nil, fmt.Errorf("initializer %q has shape %v, want %v", name, t.dims, dims)
		}
		for i := range dims {
			if t.dims[i] != dims[i] {
				return nil, fmt.Errorf("initializer %q has shape %v, want %v", name, t.dims, dims)
			}
		}
		for _, v := range t.data {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return nil, fmt.Errorf("initializer %q has a non-finite value", name)
			}
		}
		return t.data, nil
	}
	n := &Net{meta: m.metadata}
	const hp = F * H1
	w1, err := get("lstm1_W", 1, 4*hp, F)
	if err != nil {
		return nil, err
	}
	r1, err := get("lstm1_R", 1, 4*hp, hp)
	if err != nil {
		return nil, err
	}
	b1, err := get("lstm1_B", 1, 8*hp)
	if err != nil {
		return nil, err
	}
	// Unpack the block-diagonal LSTM1: row g·60 + f·10 + u belongs to
	// feature f; its only input column is f and its recurrent columns are
	// f·10 … f·10+9.
	for g := 0; g < 4; g++ {
		for f := 0; f < F; f++ {
			for u := 0; u < H1; u++ {
				row := g*hp + f*H1 + u
				for col := 0; col < F; col++ {
					if v := w1[row*F+col]; col != f && v != 0 {
						return nil, fmt.Errorf("lstm1_W is not block-diagonal (row %d col %d = %g)", row, col, v)
					}
				}
				for col := 0; col < hp; col++ {
					v := r1[row*hp+col]
					if col/H1 != f {
						if v != 0 {
							return nil, fmt.Errorf("lstm1_R is not block-diagonal (row %d col %d = %g)", row, col, v)
						}
						continue
					}
					n.r1[f][(g*H1+u)*H1+col%H1] = v
				}
				n.w1[f][g*H1+u] = w1[row*F+f]
				n.b1[f][g*H1+u] = b1[row] + b1[4*hp+row]
			}
		}
	}
	if n.w2, err = get("lstm2_W", 1, 4*H2, In2); err != nil {
		return nil, err
	}
	if n.r2, err = get("lstm2_R", 1, 4*H2, H2); err != nil {
		return nil, err
	}
	b2, err := get("lstm2_B", 1, 8*H2)
	if err != nil {
		return nil, err
	}
	n.b2 = make([]float32, 4*H2)
	for i := range n.b2 {
		n.b2[i] = b2[i] + b2[4*H2+i]
	}
	for _, l := range []struct {
		name    string
		w, b    *[]float32
		in, out int64
	}{{"fc1", &n.fc1, &n.fc1b, Core, FC1}, {"fc2", &n.fc2, &n.fc2b, FC1, FC2}, {"out", &n.out, &n.outb, FC2, 2}} {
		if *l.w, err = get(l.name+"_W", l.in, l.out); err != nil {
			return nil, err
		}
		if *l.b, err = get(l.name+"_b", l.out); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// Metadata returns the model's ONNX metadata_props (edar.synthetic,
// edar.steps, …). The map must not be modified.
func (n *Net) Metadata() map[string]string { return n.meta }

// Synthetic reports whether the model says it was trained on synthetic
// transitions (only to prove the pipeline; not a usable EdAR model).
func (n *Net) Synthetic() bool { return n.meta["edar.synthetic"] == "true" }

// Q implements edar.Policy: q[0] = Q(s, normal), q[1] = Q(s, redundant).
func (n *Net) Q(s *edar.State, q *[2]float32) error {
	if s.N < 1 || s.N > edar.MaxSubflows {
		return fmt.Errorf("gonet: state has %d subflows, want 1..%d", s.N, edar.MaxSubflows)
	}
	n.mu.Lock()
	defer n.mu.Unlock()

	// LSTM1 per subflow i and feature f over T steps; keep h_{T-2}, h_{T-1}
	// at rep[i][f·10 …] and rep[i][60 + f·10 …] (the ONNX Y[4], Y[5] layout).
	for i := 0; i < s.N; i++ {
		for f := 0; f < F; f++ {
			var h, c [H1]float32
			w, r, b := &n.w1[f], &n.r1[f], &n.b1[f]
			for t := 0; t < T; t++ {
				x := s.Sub[i][t][f]
				var g [4 * H1]float32
				for k := range g {
					row := (*[H1]float32)(r[k*H1:])
					g[k] = b[k] + w[k]*x +
						(row[0]*h[0] + row[1]*h[1] + row[2]*h[2] + row[3]*h[3] + row[4]*h[4]) +
						(row[5]*h[5] + row[6]*h[6] + row[7]*h[7] + row[8]*h[8] + row[9]*h[9])
				}
				for u := 0; u < H1; u++ {
					ig, og, fg, cg := sigmoid(g[u]), sigmoid(g[H1+u]), sigmoid(g[2*H1+u]), tanh(g[3*H1+u])
					c[u] = fg*c[u] + ig*cg
					h[u] = og * tanh(c[u])
				}
				if t == T-2 {
					copy(n.rep[i][f*H1:], h[:])
				}
			}
			copy(n.rep[i][F*H1+f*H1:], h[:])
		}
	}

	// LSTM2 over the subflows.
	n.h, n.c = [H2]float32{}, [H2]float32{}
	for i := 0; i < s.N; i++ {
		x := &n.rep[i]
		// gates = W2·x + R2·h + b2 (gonum's float32 BLAS, SIMD on amd64)
		copy(n.gates[:], n.b2)
		blas32.Sgemv(blas.NoTrans, 4*H2, In2, 1, n.w2, In2, x[:], 1, 1, n.gates[:], 1)
		blas32.Sgemv(blas.NoTrans, 4*H2, H2, 1, n.r2, H2, n.h[:], 1, 1, n.gates[:], 1)
		for u := 0; u < H2; u++ {
			g := &n.gates
			ig, og, fg, cg := sigmoid(g[u]), sigmoid(g[H2+u]), sigmoid(g[2*H2+u]), tanh(g[3*H2+u])
			n.c[u] = fg*n.c[u] + ig*cg
			n.h[u] = og * tanh(n.c[u])
		}
	}

	// Core.
	copy(n.z[:], s.Conn[:])
	copy(n.z[edar.ConnFeatures:], n.h[:])
	dense(n.a1[:], n.z[:], n.fc1, n.fc1b, true)
	dense(n.a2[:], n.a1[:], n.fc2, n.fc2b, true)
	var o [2]float32
	dense(o[:], n.a2[:], n.out, n.outb, false)
	for _, v := range o {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("gonet: non-finite Q-value %v", o)
		}
	}
	*q = o
	return nil
}

// dense computes y = x·W + b (W is [len(x)][len(y)] row-major), with ReLU.
func dense(y, x, w, b []float32, relu bool) {
	copy(y, b)
	m := len(y)
	for i, xv := range x {
		if xv == 0 {
			continue
		}
		row := w[i*m : i*m+m]
		for j := range y {
			y[j] += xv * row[j]
		}
	}
	if relu {
		for j, v := range y {
			if v < 0 {
				y[j] = 0
			}
		}
	}
}

var _ edar.Policy = (*Net)(nil)
