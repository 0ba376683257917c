package emu

import (
	"testing"
	"testing/synctest"
	"time"
)

// An instant rate step changes the saturated throughput at its time.
func TestScheduleRateStep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := LinkConfig{RateBps: 10e6, Delay: 5 * time.Millisecond, QueueBytes: 20000,
			Schedule: []Step{{At: 2 * time.Second, Set: FieldRate, RateBps: 2e6}}}
		p := newPair(t, 1, cfg, LinkConfig{})
		p.sendEvery(0, 4000, 1200, time.Millisecond) // 9.8 Mbit/s of payload, 10.2 on the wire
		recv := p.close(time.Second)
		within(t, "rate before the step (bit/s)", wireRate(recv, 500*time.Millisecond, 2*time.Second), 9.5e6, 10.5e6)
		within(t, "rate after the step (bit/s)", wireRate(recv, 2200*time.Millisecond, 4*time.Second), 1.9e6, 2.1e6)
	})
}

// A delay ramp moves the one-way delay linearly; a loss step to 1 cuts the
// link; a later step restores it.
func TestScheduleRampAndLoss(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := LinkConfig{Delay: 10 * time.Millisecond, Schedule: []Step{
			{At: time.Second, Ramp: time.Second, Set: FieldDelay, Delay: 110 * time.Millisecond},
			{At: 3 * time.Second, Set: FieldLoss, Loss: 1},
			{At: 4 * time.Second, Set: FieldLoss | FieldDelay, Loss: 0, Delay: 10 * time.Millisecond},
		}}
		p := newPair(t, 1, cfg, LinkConfig{})
		p.sendEvery(0, 500, 100, 10*time.Millisecond)
		recv := p.close(time.Second)
		delayAt := func(sent time.Duration) time.Duration {
			for _, r := range recv {
				if r.sentAt == sent {
					return r.at - r.sentAt
				}
			}
			t.Fatalf("packet sent at %v was not delivered", sent)
			return 0
		}
		for _, c := range []struct{ sent, want time.Duration }{
			{500 * time.Millisecond, 10 * time.Millisecond},
			{time.Second, 10 * time.Millisecond},
			{1500 * time.Millisecond, 60 * time.Millisecond}, // halfway up the ramp
			{1750 * time.Millisecond, 85 * time.Millisecond},
			{2500 * time.Millisecond, 110 * time.Millisecond},
			{4500 * time.Millisecond, 10 * time.Millisecond},
		} {
			if got := delayAt(c.sent); got < c.want-time.Microsecond || got > c.want+time.Microsecond {
				t.Errorf("packet sent at %v: delay %v, want %v", c.sent, got, c.want)
			}
		}
		for _, r := range recv {
			if r.sentAt >= 3*time.Second && r.sentAt < 4*time.Second {
				t.Errorf("packet sent at %v delivered during the loss-1 step", r.sentAt)
			}
		}
	})
}

// Handoff: the link degrades from t1 over the ramp, is unusable until t2,
// then is back to base.
func TestHandoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := LinkConfig{RateBps: 20e6, Delay: 10 * time.Millisecond}
		t1, t2, ramp := time.Second, 3*time.Second, 500*time.Millisecond
		cfg := base
		cfg.Schedule = Handoff(t1, t2, base, ramp)
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		p := newPair(t, 1, cfg, LinkConfig{})
		p.sendEvery(0, 400, 100, 10*time.Millisecond)
		recv := p.close(time.Second)
		sentIn := func(from, to time.Duration) (n int, maxDelay time.Duration) {
			for _, r := range recv {
				if r.sentAt >= from && r.sentAt < to {
					n++
					maxDelay = max(maxDelay, r.at-r.sentAt)
				}
			}
			return n, maxDelay
		}
		if n, d := sentIn(0, t1); n != 100 || d > 11*time.Millisecond {
			t.Errorf("before t1: %d delivered (want 100), max delay %v", n, d)
		}
		if n, d := sentIn(t1+ramp/2, t1+ramp); n == 0 || n == 25 || d < 40*time.Millisecond {
			t.Errorf("late in the ramp: %d of 25 delivered (want some lost), max delay %v (want > 40ms)", n, d)
		}
		if n, _ := sentIn(t1+ramp, t2); n != 0 {
			t.Errorf("between t1+ramp and t2: %d delivered, want 0", n)
		}
		if n, d := sentIn(t2, 4*time.Second); n != 100 || d > 11*time.Millisecond {
			t.Errorf("after t2: %d delivered (want 100), max delay %v", n, d)
		}
	})
}
