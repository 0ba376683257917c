package gonet

import (
	"math"
	"testing"
)

func TestActivationsAccuracy(t *testing.T) {
	var worstS, worstT float64
	for x := -30.0; x <= 30; x += 0.0007 {
		s := 1 / (1 + math.Exp(-x))
		worstS = math.Max(worstS, math.Abs(float64(sigmoid(float32(x)))-s))
		worstT = math.Max(worstT, math.Abs(float64(tanh(float32(x)))-math.Tanh(x)))
	}
	// float32 itself resolves about 6e-8 near 1.
	if worstS > 2e-7 || worstT > 4e-7 {
		t.Fatalf("max abs error: sigmoid %.3g, tanh %.3g", worstS, worstT)
	}
	t.Logf("max abs error: sigmoid %.3g, tanh %.3g", worstS, worstT)
}
