package emu

import (
	"testing"
	"testing/synctest"
	"time"
)

// A saturating sender gets the bottleneck rate, and the excess is dropped at
// the queue.
func TestThroughputSaturating(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const rate = 10e6
		p := newPair(t, 1, LinkConfig{RateBps: rate, Delay: 10 * time.Millisecond}, LinkConfig{})
		// 1200-byte payloads every 0.9 ms: 10.9 Mbit/s on the wire.
		p.sendEvery(0, 5500, 1200, 900*time.Microsecond)
		recv := p.close(time.Second)
		got := wireRate(recv, time.Second, 4*time.Second)
		within(t, "wire rate (bit/s)", got, 0.95*rate, 1.05*rate)
		ab, _ := p.link.Stats()
		if ab.DroppedQueue == 0 {
			t.Errorf("DroppedQueue = 0, want > 0 when offering 109%% of the rate")
		}
		if sum := ab.DeliveredPkts + ab.DroppedQueue + ab.DroppedLoss + ab.DroppedOutage + ab.DroppedRecv; sum != ab.OfferedPkts {
			t.Errorf("delivered+dropped = %d, offered = %d", sum, ab.OfferedPkts)
		}
	})
}

// One-way delay of an isolated packet is Delay plus its serialization time,
// (len+28)*8/rate.
func TestOneWayDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const rate, size = 10e6, 1000
		delay := 25 * time.Millisecond
		p := newPair(t, 1, LinkConfig{RateBps: rate, Delay: delay}, LinkConfig{})
		p.sendEvery(0, 20, size, 100*time.Millisecond)
		recv := p.close(time.Second)
		if len(recv) != 20 {
			t.Fatalf("received %d packets, want 20", len(recv))
		}
		want := delay + time.Duration(float64((size+Overhead)*8)/rate*1e9)
		for _, r := range recv {
			if d := r.at - r.sentAt; d < want-time.Microsecond || d > want+time.Microsecond {
				t.Errorf("packet %d: one-way delay %v, want %v", r.seq, d, want)
			}
		}
	})
}

// A burst larger than the queue keeps exactly what fits in QueueBytes.
func TestQueueOverflow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const size = 1000
		p := newPair(t, 1, LinkConfig{RateBps: 1e6, QueueBytes: 10 * (size + Overhead)}, LinkConfig{})
		for i := range 100 {
			p.send(uint32(i), size)
		}
		recv := p.close(2 * time.Second)
		ab, _ := p.link.Stats()
		if len(recv) != 10 || ab.DroppedQueue != 90 {
			t.Errorf("received %d, DroppedQueue %d; want 10 and 90", len(recv), ab.DroppedQueue)
		}
		for i, r := range recv {
			if r.seq != uint32(i) {
				t.Errorf("recv[%d].seq = %d, want %d (drop-tail keeps the head)", i, r.seq, i)
			}
		}
		// The queue drains at the rate: the last of 10 packets leaves after
		// 10 serialization times.
		want := 10 * time.Duration(float64((size+Overhead)*8)/1e6*1e9)
		if got := recv[len(recv)-1].at; got < want-time.Microsecond || got > want+time.Microsecond {
			t.Errorf("last arrival at %v, want %v", got, want)
		}
	})
}

// A seeded Bernoulli loss of 10% loses 10% of the packets, within sampling
// error.
func TestBernoulliLoss(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 20000
		p := newPair(t, 7, LinkConfig{Loss: 0.1, Delay: time.Millisecond}, LinkConfig{})
		p.sendEvery(0, n, 100, 100*time.Microsecond)
		recv := p.close(time.Second)
		lost := float64(n-len(recv)) / n
		within(t, "loss rate", lost, 0.09, 0.11) // 4.7 standard deviations
		ab, _ := p.link.Stats()
		if int(ab.DroppedLoss) != n-len(recv) {
			t.Errorf("DroppedLoss = %d, want %d", ab.DroppedLoss, n-len(recv))
		}
	})
}

// Packets whose flight overlaps an outage are dropped; all others arrive.
func TestOutages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		delay := 5 * time.Millisecond
		windows := []Window{{time.Second, 2 * time.Second}, {3 * time.Second, 3500 * time.Millisecond}}
		p := newPair(t, 1, LinkConfig{Delay: delay, Outages: windows}, LinkConfig{})
		p.sendEvery(0, 4000, 100, time.Millisecond)
		recv := p.close(time.Second)
		got := make(map[uint32]bool, len(recv))
		for _, r := range recv {
			got[r.seq] = true
		}
		for seq := range uint32(4000) {
			sent := time.Duration(seq) * time.Millisecond // sendEvery starts at 0
			overlaps := false
			for _, w := range windows {
				if sent < w.End && sent+delay >= w.Start {
					overlaps = true
				}
			}
			if got[seq] == overlaps {
				t.Errorf("packet sent at %v: delivered = %v, overlaps outage = %v", sent, got[seq], overlaps)
			}
		}
	})
}

// Jitter spreads delays over [Delay, Delay+Jitter] without reordering.
func TestJitterNoReorder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		delay, jitter := 10*time.Millisecond, 20*time.Millisecond
		p := newPair(t, 3, LinkConfig{Delay: delay, Jitter: jitter}, LinkConfig{})
		p.sendEvery(0, 2000, 100, 2*time.Millisecond)
		recv := p.close(time.Second)
		if len(recv) != 2000 {
			t.Fatalf("received %d, want 2000", len(recv))
		}
		lo, hi := time.Hour, time.Duration(0)
		for i, r := range recv {
			if r.seq != uint32(i) {
				t.Fatalf("recv[%d].seq = %d: reordered", i, r.seq)
			}
			d := r.at - r.sentAt
			lo, hi = min(lo, d), max(hi, d)
		}
		if lo < delay || hi > delay+jitter {
			t.Errorf("delays span [%v, %v], want within [%v, %v]", lo, hi, delay, delay+jitter)
		}
		if hi-lo < jitter/2 {
			t.Errorf("delays span only %v with jitter %v", hi-lo, jitter)
		}
	})
}
