package emu

import (
	"fmt"
	"math/rand/v2"
)

// GilbertElliott is a two-state Markov (Gilbert–Elliott) loss model for
// bursty loss. Before each packet that reaches the loss stage, the state moves
// good→bad with probability PGoodBad or bad→good with probability PBadGood;
// the packet is then lost with probability LossGood or LossBad of the current
// state. All fields are per-packet probabilities in [0, 1]. The model starts
// in the good state.
type GilbertElliott struct {
	PGoodBad float64 // per-packet probability of the transition good→bad
	PBadGood float64 // per-packet probability of the transition bad→good
	LossGood float64 // loss probability of a packet in the good state
	LossBad  float64 // loss probability of a packet in the bad state
}

// BurstyLoss returns a Gilbert–Elliott model whose stationary loss rate is
// mean (a fraction in [0, 1)) and whose bad state, which loses every packet,
// lasts meanBurst packets on average (meanBurst >= 1). The good state loses
// nothing.
func BurstyLoss(mean, meanBurst float64) *GilbertElliott {
	if meanBurst < 1 {
		meanBurst = 1
	}
	r := 1 / meanBurst
	// Stationary P(bad) = p/(p+r) = mean  =>  p = mean*r/(1-mean).
	p := 0.0
	if mean > 0 && mean < 1 {
		p = mean * r / (1 - mean)
	}
	return &GilbertElliott{PGoodBad: p, PBadGood: r, LossGood: 0, LossBad: 1}
}

// MeanLoss returns the stationary loss probability of the model, in [0, 1].
func (g GilbertElliott) MeanLoss() float64 {
	if g.PGoodBad+g.PBadGood == 0 {
		return g.LossGood // never leaves the good state
	}
	bad := g.PGoodBad / (g.PGoodBad + g.PBadGood)
	return (1-bad)*g.LossGood + bad*g.LossBad
}

func (g *GilbertElliott) validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"PGoodBad", g.PGoodBad}, {"PBadGood", g.PBadGood}, {"LossGood", g.LossGood}, {"LossBad", g.LossBad}} {
		if !(f.v >= 0 && f.v <= 1) {
			return fmt.Errorf("GE.%s = %v: must be in [0,1]", f.name, f.v)
		}
	}
	return nil
}

// lossModel is the per-direction loss state: an optional Gilbert–Elliott
// chain plus an independent Bernoulli loss whose probability is given per
// packet (it may follow a Schedule).
type lossModel struct {
	ge  *GilbertElliott // nil: Bernoulli only
	bad bool            // current Gilbert–Elliott state
	rng *rand.Rand      // seeded stream used only for loss draws
}

// lost draws whether the next packet is lost; p is the Bernoulli loss
// probability in force for this packet.
func (m *lossModel) lost(p float64) bool {
	l := false
	if g := m.ge; g != nil {
		if m.bad {
			if m.rng.Float64() < g.PBadGood {
				m.bad = false
			}
		} else if m.rng.Float64() < g.PGoodBad {
			m.bad = true
		}
		q := g.LossGood
		if m.bad {
			q = g.LossBad
		}
		l = q > 0 && m.rng.Float64() < q
	}
	if p > 0 && m.rng.Float64() < p {
		l = true
	}
	return l
}
