package main

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/nfq"
)

// fakeConn records when each packet id was accepted.
type fakeConn struct {
	mu  sync.Mutex
	at  map[uint32]time.Time
	ord []uint32
}

func (f *fakeConn) SendVerdicts(ids []uint32, v nfq.Verdict) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, id := range ids {
		if v != nfq.Accept {
			panic("not an accept")
		}
		f.at[id] = time.Now()
		f.ord = append(f.ord, id)
	}
	return nil
}

// snapshot returns copies of the acceptance times and order.
func (f *fakeConn) snapshot() (map[uint32]time.Time, []uint32) {
	f.mu.Lock()
	defer f.mu.Unlock()
	at := make(map[uint32]time.Time, len(f.at))
	for k, v := range f.at {
		at[k] = v
	}
	return at, append([]uint32(nil), f.ord...)
}

func pkts(ids ...uint32) []nfq.Packet {
	var p []nfq.Packet
	for _, id := range ids {
		p = append(p, nfq.Packet{ID: id})
	}
	return p
}

// A fixed delay accepts every packet exactly delay after it arrived, in
// arrival order.
func TestFixedDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeConn{at: map[uint32]time.Time{}}
		d := newDelayer(f, 10*time.Millisecond, 0, 1)
		done := make(chan struct{})
		go func() { d.run(); close(done) }()
		t0 := time.Now()
		d.add(pkts(1, 2), t0)
		time.Sleep(3 * time.Millisecond)
		d.add(pkts(3), time.Now())
		time.Sleep(20 * time.Millisecond)
		at, ord := f.snapshot()
		want := map[uint32]time.Duration{1: 10 * time.Millisecond, 2: 10 * time.Millisecond, 3: 13 * time.Millisecond}
		for id, w := range want {
			if got := at[id].Sub(t0); got != w {
				t.Errorf("packet %d accepted at %v, want %v", id, got, w)
			}
		}
		if len(ord) != 3 || ord[0] != 1 || ord[1] != 2 || ord[2] != 3 {
			t.Errorf("order %v, want [1 2 3]", ord)
		}
		if n := d.flush(); n != 0 {
			t.Errorf("flush released %d, want 0", n)
		}
		<-done
	})
}

// With jitter every delay lies in [delay-jitter, delay+jitter], and flush
// releases whatever is still held.
func TestJitterAndFlush(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeConn{at: map[uint32]time.Time{}}
		d := newDelayer(f, 20*time.Millisecond, 5*time.Millisecond, 7)
		done := make(chan struct{})
		go func() { d.run(); close(done) }()
		t0 := time.Now()
		var ids []uint32
		for i := uint32(0); i < 200; i++ {
			ids = append(ids, i)
		}
		d.add(pkts(ids...), t0)
		time.Sleep(30 * time.Millisecond)
		at, _ := f.snapshot()
		for _, id := range ids {
			got := at[id].Sub(t0)
			if got < 15*time.Millisecond || got > 25*time.Millisecond {
				t.Fatalf("packet %d delayed %v, want within 20±5 ms", id, got)
			}
		}
		d.add(pkts(1000, 1001), time.Now())
		if n := d.flush(); n != 2 {
			t.Errorf("flush released %d, want 2", n)
		}
		<-done
		if in, out := d.counts(); in != 202 || out != 202 {
			t.Errorf("counts in %d out %d, want 202 202", in, out)
		}
	})
}
