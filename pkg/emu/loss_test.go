package emu

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// lossPattern sends n packets over a fresh link from seed and returns, per
// packet, whether it was lost.
func lossPattern(t *testing.T, seed int64, cfg LinkConfig, n int) []bool {
	var lost []bool
	synctest.Test(t, func(t *testing.T) {
		p := newPair(t, seed, cfg, LinkConfig{})
		p.sendEvery(0, n, 100, 100*time.Microsecond)
		recv := p.close(time.Second)
		lost = make([]bool, n)
		for i := range lost {
			lost[i] = true
		}
		for _, r := range recv {
			lost[r.seq] = false
		}
	})
	return lost
}

// meanBurst returns the loss rate and the mean length of runs of losses.
func meanBurst(lost []bool) (rate, burst float64) {
	losses, runs := 0, 0
	for i, l := range lost {
		if l {
			losses++
			if i == 0 || !lost[i-1] {
				runs++
			}
		}
	}
	return float64(losses) / float64(len(lost)), float64(losses) / float64(max(runs, 1))
}

// Gilbert–Elliott loss at the same mean comes in longer bursts than
// Bernoulli loss.
func TestGilbertElliottBurstier(t *testing.T) {
	const n, mean = 50000, 0.05
	ge := BurstyLoss(mean, 8)
	if m := ge.MeanLoss(); m < mean-1e-9 || m > mean+1e-9 {
		t.Fatalf("BurstyLoss(%v, 8).MeanLoss() = %v", mean, m)
	}
	rb, bb := meanBurst(lossPattern(t, 11, LinkConfig{Loss: mean}, n))
	rg, bg := meanBurst(lossPattern(t, 11, LinkConfig{GE: ge}, n))
	t.Logf("Bernoulli: rate %.4f, mean burst %.2f; GE: rate %.4f, mean burst %.2f", rb, bb, rg, bg)
	within(t, "Bernoulli loss rate", rb, 0.045, 0.055)
	within(t, "GE loss rate", rg, 0.035, 0.065) // bursts make the estimate noisier
	within(t, "Bernoulli mean burst (packets)", bb, 1, 1.1)
	within(t, "GE mean burst (packets)", bg, 6, 10)
}

// The same seed gives the same drop pattern; another seed gives another.
func TestDeterminism(t *testing.T) {
	cfg := LinkConfig{RateBps: 5e6, Delay: 10 * time.Millisecond, Jitter: 5 * time.Millisecond,
		Loss: 0.05, QueueBytes: 8000}
	a := lossPattern(t, 42, cfg, 5000)
	b := lossPattern(t, 42, cfg, 5000)
	c := lossPattern(t, 43, cfg, 5000)
	if !slices.Equal(a, b) {
		t.Error("same seed, different drop patterns")
	}
	if slices.Equal(a, c) {
		t.Error("seeds 42 and 43 gave the same drop pattern")
	}
	ge := LinkConfig{GE: BurstyLoss(0.1, 4)}
	if !slices.Equal(lossPattern(t, 5, ge, 5000), lossPattern(t, 5, ge, 5000)) {
		t.Error("GE: same seed, different drop patterns")
	}
}
