package gonet

import "math"

// expf is e^x in float32 with about 1 ulp of error: x = n·ln2 + r with
// n = round(x/ln2) and |r| ≤ ln2/2, a degree-6 polynomial for e^r (the Cephes expf
// coefficients), and 2^n put in the exponent bits. It returns 0 below −87
// and e^88 above 88, which is all the activations need.
func expf(x float32) float32 {
	const (
		log2e = 1.44269504088896341
		ln2hi = 0.693359375
		ln2lo = -2.12194440e-4
	)
	if x < -87 {
		return 0
	}
	if x > 88 {
		x = 88
	}
	// n = round(x·log2e), by truncation of ±0.5 (math.Floor is a call,
	// and was half of Q's time).
	t := x * log2e
	if t < 0 {
		t -= 0.5
	} else {
		t += 0.5
	}
	n := float32(int32(t))
	r := x - n*ln2hi - n*ln2lo
	y := ((((((1.9875691500e-4*r+1.3981999507e-3)*r+8.3334519073e-3)*r+
		4.1665795894e-2)*r+1.6666665459e-1)*r+5.0000001201e-1)*r*r + r) + 1
	return y * math.Float32frombits(uint32(int32(n)+127)<<23)
}

// sigmoid is 1/(1+e^−x).
func sigmoid(x float32) float32 { return 1 / (1 + expf(-x)) }

// tanh is 1 − 2/(e^2x + 1), with |x| clipped at 9 where tanh is 1 in float32.
func tanh(x float32) float32 {
	if x > 9 {
		return 1
	}
	if x < -9 {
		return -1
	}
	return 1 - 2/(expf(2*x)+1)
}
