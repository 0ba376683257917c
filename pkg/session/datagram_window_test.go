package session

import (
	"math/rand/v2"
	"testing"
)

// The window against a model that remembers every sequence number: in any
// order of arrivals, with duplicates, a datagram is delivered at most once;
// within DatagramWindow of the newest, a new one is always delivered and a
// copy always discarded; further back everything is discarded.
func TestDatagramWindowAgainstModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for run := range 50 {
		var w dgramWindow
		delivered := map[uint64]bool{}
		var top uint64 // 1 + highest delivered
		spread := uint64(1 + rng.IntN(3*DatagramWindow))
		var base uint64
		for range 5000 {
			base += uint64(rng.IntN(4))
			seq := base + uint64(rng.IntN(int(spread)))
			if rng.IntN(50) == 0 {
				seq = uint64(rng.IntN(int(base + 1))) // an old one now and then
			}
			if rng.IntN(500) == 0 {
				seq += 1 << 40 // a jump far ahead
				base = seq
			}
			want := dgramNew
			switch {
			case seq < top && top-1-seq >= DatagramWindow:
				want = dgramLate
			case delivered[seq]:
				want = dgramDup
			}
			got := w.check(seq)
			if got != want {
				t.Fatalf("run %d: seq %d (top %d): got verdict %d, want %d", run, seq, top, got, want)
			}
			if got == dgramNew {
				w.mark(seq)
				delivered[seq] = true
				top = max(top, seq+1)
			}
		}
	}
}

// Slides by every distance across word boundaries keep the marks that stay
// in the window.
func TestDatagramWindowSlide(t *testing.T) {
	for n := uint64(1); n <= DatagramWindow+1; n++ {
		var w dgramWindow
		w.mark(0)
		w.mark(5)
		w.mark(5 + n)
		for _, q := range []uint64{0, 5} {
			want := dgramDup
			if 5+n-q >= DatagramWindow {
				want = dgramLate
			}
			if got := w.check(q); got != want {
				t.Fatalf("slide %d: seq %d: got %d, want %d", n, q, got, want)
			}
		}
		if got := w.check(5 + n); got != dgramDup {
			t.Fatalf("slide %d: newest not marked", n)
		}
		if n > 1 {
			if got := w.check(4 + n); got != dgramNew {
				t.Fatalf("slide %d: seq %d not delivered but verdict %d", n, 4+n, got)
			}
		}
	}
}
