package graph

import (
	"os"
	"testing"
)

// FuzzParse: corrupt models give errors, never a panic or a huge
// allocation, in Parse and in Run.
func FuzzParse(f *testing.F) {
	b, err := os.ReadFile("../testdata/gym-policy.onnx")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(b[:len(b)/3])
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := Parse(data)
		if err != nil || g == nil {
			return
		}
		in := map[string]*Tensor{}
		for _, name := range g.Inputs() {
			in[name] = &Tensor{Shape: []int{1, 4}, Data: make([]float32, 4)}
		}
		g.Run(in) // errors are fine; panics are not
	})
}

// numpy's broadcasting, and the operators' arithmetic on small cases.
func TestOperators(t *testing.T) {
	a := &Tensor{Shape: []int{2, 3}, Data: []float32{1, 2, 3, 4, 5, 6}}
	b := &Tensor{Shape: []int{3}, Data: []float32{10, 20, 30}}
	c, err := broadcast("Add", a, b)
	if err != nil || c.Data[4] != 25 || c.Shape[0] != 2 || c.Shape[1] != 3 {
		t.Fatalf("[2,3]+[3]: %v %v", c, err)
	}
	col := &Tensor{Shape: []int{2, 1}, Data: []float32{1, 2}}
	if c, _ := broadcast("Mul", a, col); c.Data[5] != 12 || c.Data[0] != 1 {
		t.Fatalf("[2,3]*[2,1]: %v", c.Data)
	}
	if _, err := broadcast("Add", a, &Tensor{Shape: []int{2}, Data: []float32{1, 2}}); err == nil {
		t.Fatal("[2,3]+[2] broadcast")
	}
	w := &Tensor{Shape: []int{3, 2}, Data: []float32{1, 0, 0, 1, 1, 1}}
	if m, err := matmul(a, w); err != nil || m.Data[0] != 4 || m.Data[1] != 5 || m.Data[3] != 11 {
		t.Fatalf("matmul: %v %v", m, err)
	}
	s, _ := softmax(&Tensor{Shape: []int{1, 2}, Data: []float32{0, 0}}, attr{}, false)
	if s.Data[0] != 0.5 {
		t.Fatalf("softmax: %v", s.Data)
	}
	r, err := reshape(a, []int64{0, -1}, "s")
	if err != nil || r.Shape[1] != 3 {
		t.Fatalf("reshape: %v %v", r, err)
	}
	if cat, err := concat([]*Tensor{a, col}, 1); err != nil || cat.Shape[1] != 4 || cat.Data[3] != 1 || cat.Data[7] != 2 {
		t.Fatalf("concat: %v %v", cat, err)
	}
}
