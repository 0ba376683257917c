package graph

import (
	"errors"
	"fmt"
	"math"
)

// Run evaluates the graph on inputs (by name; every graph input must be
// given) and returns its output. It allocates the intermediate tensors; it
// fails, never panics, on shapes that do not fit.
func (g *Graph) Run(inputs map[string]*Tensor) (*Tensor, error) {
	vals := make(map[string]*Tensor, len(g.nodes)+len(inputs))
	for _, in := range g.inputs {
		t, ok := inputs[in]
		if !ok {
			return nil, fmt.Errorf("graph: input %q not given", in)
		}
		if n := size(t.Shape); n != len(t.Data) || len(t.Shape) > MaxRank {
			return nil, fmt.Errorf("graph: input %q has shape %v and %d values", in, t.Shape, len(t.Data))
		}
		vals[in] = t
	}
	get := func(name string) (*Tensor, error) {
		if t := vals[name]; t != nil {
			return t, nil
		}
		if t := g.consts[name]; t != nil {
			return t, nil
		}
		return nil, fmt.Errorf("value %q is not a float tensor", name)
	}
	for i, n := range g.nodes {
		out, err := g.eval(&n, get)
		if err != nil {
			return nil, fmt.Errorf("graph: node %d (%s): %w", i, n.op, err)
		}
		if len(out.Shape) > MaxRank || size(out.Shape) > 1<<22 {
			return nil, fmt.Errorf("graph: node %d (%s): output shape %v too large", i, n.op, out.Shape)
		}
		vals[n.out[0]] = out
	}
	out, err := get(g.output)
	if err != nil {
		return nil, err
	}
	for _, v := range out.Data {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, fmt.Errorf("graph: non-finite output %v", out.Data)
		}
	}
	return out, nil
}

func size(shape []int) int {
	n := 1
	for _, d := range shape {
		if d < 0 {
			return -1
		}
		n *= d
	}
	return n
}

func (g *Graph) eval(n *node, get func(string) (*Tensor, error)) (*Tensor, error) {
	args := make([]*Tensor, 0, len(n.in))
	for k, name := range n.in {
		if n.op == "Reshape" && k == 1 || name == "" {
			continue // the shape is an int64 initializer; "" an omitted input
		}
		t, err := get(name)
		if err != nil {
			return nil, err
		}
		args = append(args, t)
	}
	need := map[string]int{"Gemm": 2, "MatMul": 2, "Add": 2, "Sub": 2, "Mul": 2, "Div": 2}
	if k, ok := need[n.op]; ok && len(args) < k {
		return nil, fmt.Errorf("%d inputs, want %d", len(args), k)
	}
	if len(args) == 0 {
		return nil, errors.New("no input")
	}
	x := args[0]
	switch n.op {
	case "Identity":
		return x, nil
	case "Relu":
		return unary(x, func(v float32) float32 { return max(v, 0) }), nil
	case "LeakyRelu":
		alpha := float32(0.01)
		if a, ok := n.attrs["alpha"]; ok {
			alpha = a.f
		}
		return unary(x, func(v float32) float32 {
			if v < 0 {
				return alpha * v
			}
			return v
		}), nil
	case "Tanh":
		return unary(x, func(v float32) float32 { return float32(math.Tanh(float64(v))) }), nil
	case "Sigmoid":
		return unary(x, func(v float32) float32 { return float32(1 / (1 + math.Exp(-float64(v)))) }), nil
	case "Clip":
		lo, hi := float32(math.Inf(-1)), float32(math.Inf(1))
		if len(args) > 1 && len(args[1].Data) == 1 {
			lo = args[1].Data[0]
		}
		if len(args) > 2 && len(args[2].Data) == 1 {
			hi = args[2].Data[0]
		}
		return unary(x, func(v float32) float32 { return min(max(v, lo), hi) }), nil
	case "Add", "Sub", "Mul", "Div":
		return broadcast(n.op, x, args[1])
	case "MatMul":
		return matmul(x, args[1])
	case "Gemm":
		return gemm(n, args)
	case "Softmax":
		a, given := n.attrs["axis"]
		return softmax(x, a, given)
	case "Reshape":
		return reshape(x, g.ints[n.in[1]], n.in[1])
	case "Flatten":
		axis := 1
		if a, ok := n.attrs["axis"]; ok {
			axis = int(a.i)
		}
		if axis < 0 {
			axis += len(x.Shape)
		}
		if axis < 0 || axis > len(x.Shape) {
			return nil, fmt.Errorf("axis %d of shape %v", axis, x.Shape)
		}
		return &Tensor{Shape: []int{size(x.Shape[:axis]), size(x.Shape[axis:])}, Data: x.Data}, nil
	case "Concat":
		return concat(args, int(n.attrs["axis"].i))
	}
	return nil, fmt.Errorf("operator %q", n.op)
}

func unary(x *Tensor, f func(float32) float32) *Tensor {
	out := &Tensor{Shape: x.Shape, Data: make([]float32, len(x.Data))}
	for i, v := range x.Data {
		out.Data[i] = f(v)
	}
	return out
}

// broadcast applies a binary operator with numpy's broadcasting rules.
func broadcast(op string, a, b *Tensor) (*Tensor, error) {
	r := max(len(a.Shape), len(b.Shape))
	shape := make([]int, r)
	pad := func(s []int) []int { return append(make([]int, r-len(s)), s...) }
	as, bs := pad(a.Shape), pad(b.Shape)
	for i := 0; i < r; i++ {
		if i < r-len(a.Shape) {
			as[i] = 1
		}
		if i < r-len(b.Shape) {
			bs[i] = 1
		}
		switch {
		case as[i] == bs[i], bs[i] == 1:
			shape[i] = as[i]
		case as[i] == 1:
			shape[i] = bs[i]
		default:
			return nil, fmt.Errorf("shapes %v and %v do not broadcast", a.Shape, b.Shape)
		}
	}
	strides := func(s []int) []int {
		st := make([]int, r)
		k := 1
		for i := r - 1; i >= 0; i-- {
			if s[i] != 1 {
				st[i] = k
			}
			k *= s[i]
		}
		return st
	}
	sa, sb := strides(as), strides(bs)
	out := &Tensor{Shape: shape, Data: make([]float32, size(shape))}
	idx := make([]int, r)
	for o := range out.Data {
		ia, ib := 0, 0
		for i := 0; i < r; i++ {
			ia += idx[i] * sa[i]
			ib += idx[i] * sb[i]
		}
		x, y := a.Data[ia], b.Data[ib]
		switch op {
		case "Add":
			out.Data[o] = x + y
		case "Sub":
			out.Data[o] = x - y
		case "Mul":
			out.Data[o] = x * y
		case "Div":
			out.Data[o] = x / y
		}
		for i := r - 1; i >= 0; i-- {
			idx[i]++
			if idx[i] < shape[i] {
				break
			}
			idx[i] = 0
		}
	}
	return out, nil
}

// matmul multiplies [m, k] by [k, n] (2-D only).
func matmul(a, b *Tensor) (*Tensor, error) {
	if len(a.Shape) != 2 || len(b.Shape) != 2 || a.Shape[1] != b.Shape[0] {
		return nil, fmt.Errorf("MatMul of %v and %v (2-D, inner dimensions equal)", a.Shape, b.Shape)
	}
	m, k, n := a.Shape[0], a.Shape[1], b.Shape[1]
	out := &Tensor{Shape: []int{m, n}, Data: make([]float32, m*n)}
	for i := 0; i < m; i++ {
		row := out.Data[i*n : i*n+n]
		for p := 0; p < k; p++ {
			x := a.Data[i*k+p]
			if x == 0 {
				continue
			}
			w := b.Data[p*n : p*n+n]
			for j := range row {
				row[j] += x * w[j]
			}
		}
	}
	return out, nil
}

// gemm is alpha·A'·B' + beta·C with A' = A or Aᵀ, B' = B or Bᵀ.
func gemm(n *node, args []*Tensor) (*Tensor, error) {
	a, b := args[0], args[1]
	if len(a.Shape) != 2 || len(b.Shape) != 2 {
		return nil, fmt.Errorf("Gemm of %v and %v (2-D)", a.Shape, b.Shape)
	}
	if n.attrs["transA"].i != 0 {
		a = transpose(a)
	}
	if n.attrs["transB"].i != 0 {
		b = transpose(b)
	}
	out, err := matmul(a, b)
	if err != nil {
		return nil, err
	}
	alpha, beta := float32(1), float32(1)
	if v, ok := n.attrs["alpha"]; ok {
		alpha = v.f
	}
	if v, ok := n.attrs["beta"]; ok {
		beta = v.f
	}
	if alpha != 1 {
		for i := range out.Data {
			out.Data[i] *= alpha
		}
	}
	if len(args) > 2 {
		c := args[2]
		if beta != 1 {
			c = unary(c, func(v float32) float32 { return beta * v })
		}
		return broadcast("Add", out, c)
	}
	return out, nil
}

func transpose(a *Tensor) *Tensor {
	m, n := a.Shape[0], a.Shape[1]
	out := &Tensor{Shape: []int{n, m}, Data: make([]float32, m*n)}
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			out.Data[j*m+i] = a.Data[i*n+j]
		}
	}
	return out
}

// softmax over the last axis (opset 13's default; an axis attribute must
// name the last axis).
func softmax(x *Tensor, a attr, given bool) (*Tensor, error) {
	r := len(x.Shape)
	if r == 0 {
		return nil, errors.New("softmax of a scalar")
	}
	if given && a.i != -1 && int(a.i) != r-1 {
		return nil, fmt.Errorf("softmax axis %d of shape %v: only the last axis", a.i, x.Shape)
	}
	inner := x.Shape[r-1]
	out := &Tensor{Shape: x.Shape, Data: make([]float32, len(x.Data))}
	for s := 0; inner > 0 && s+inner <= len(x.Data); s += inner {
		m := float32(math.Inf(-1))
		for _, v := range x.Data[s : s+inner] {
			m = max(m, v)
		}
		var z float64
		for i, v := range x.Data[s : s+inner] {
			e := math.Exp(float64(v - m))
			out.Data[s+i] = float32(e)
			z += e
		}
		for i := s; i < s+inner; i++ {
			out.Data[i] = float32(float64(out.Data[i]) / z)
		}
	}
	return out, nil
}

func reshape(x *Tensor, shape []int64, name string) (*Tensor, error) {
	if shape == nil {
		return nil, fmt.Errorf("Reshape's shape %q must be an int64 initializer", name)
	}
	out := make([]int, len(shape))
	known, infer := 1, -1
	for i, d := range shape {
		switch {
		case d == 0 && i < len(x.Shape):
			out[i] = x.Shape[i]
		case d == -1 && infer < 0:
			infer = i
			continue
		case d > 0:
			out[i] = int(d)
		default:
			return nil, fmt.Errorf("Reshape to %v", shape)
		}
		known *= out[i]
	}
	if infer >= 0 {
		if known == 0 || len(x.Data)%known != 0 {
			return nil, fmt.Errorf("Reshape of %v to %v", x.Shape, shape)
		}
		out[infer] = len(x.Data) / known
	}
	if size(out) != len(x.Data) {
		return nil, fmt.Errorf("Reshape of %v to %v", x.Shape, shape)
	}
	return &Tensor{Shape: out, Data: x.Data}, nil
}

func concat(args []*Tensor, axis int) (*Tensor, error) {
	r := len(args[0].Shape)
	if axis < 0 {
		axis += r
	}
	if axis < 0 || axis >= r {
		return nil, fmt.Errorf("Concat axis %d of rank %d", axis, r)
	}
	shape := append([]int(nil), args[0].Shape...)
	shape[axis] = 0
	for _, t := range args {
		if len(t.Shape) != r {
			return nil, errors.New("Concat of different ranks")
		}
		for i := range t.Shape {
			if i != axis && t.Shape[i] != args[0].Shape[i] {
				return nil, fmt.Errorf("Concat of %v and %v on axis %d", args[0].Shape, t.Shape, axis)
			}
		}
		shape[axis] += t.Shape[axis]
	}
	outer := size(shape[:axis])
	out := &Tensor{Shape: shape, Data: make([]float32, 0, size(shape))}
	for o := 0; o < outer; o++ {
		for _, t := range args {
			chunk := size(t.Shape[axis:])
			out.Data = append(out.Data, t.Data[o*chunk:(o+1)*chunk]...)
		}
	}
	return out, nil
}
