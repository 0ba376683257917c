package session

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"github.com/mpqsched/mpqsched/pkg/wire"
)

// The inbox (inbox.go) against a model, with several posters at once and
// seeded random interleavings: each poster stands for a path's datagram
// reader, posting numbered events and, when the inbox is full, draining it
// under the session's lock and handling its own event after the others,
// as controlArrived does; a drainer stands for the loop's send pass. Every
// event must be handled exactly once, each poster's in the order it
// posted them, and the inbox must never hold more than inboxMax.
func TestInboxModel(t *testing.T) {
	full := 0 // posts the inbox refused, over all seeds
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 0x1b0c))
		posters, perPoster := 2+rng.IntN(3), 200+rng.IntN(300)
		var (
			ib      inbox
			mu      sync.Mutex // Session.mu
			next    = make([]uint64, posters)
			handled int
			bad     []string
		)
		handle := func(ev *inboxEvent) error { // mu held
			p, k := ev.id>>32, ev.id&0xffffffff
			if k != next[p] {
				bad = append(bad, "out of order or twice")
			}
			next[p] = k + 1
			handled++
			return nil
		}
		var wg sync.WaitGroup
		for p := range posters {
			yield := rng.IntN(4) // how often this poster gives way
			wg.Go(func() {
				for k := range perPoster {
					id := uint64(p)<<32 | uint64(k)
					if ib.post(wire.TypeSilent, nil, nil, id) {
						continue
					}
					mu.Lock()
					full++
					ib.drain(handle)
					handle(&inboxEvent{kind: wire.TypeSilent, id: id})
					mu.Unlock()
					if yield > 0 && k%yield == 0 {
						runtime.Gosched()
					}
				}
			})
		}
		stop := make(chan struct{})
		drained := make(chan struct{})
		go func() { // the loop
			defer close(drained)
			for {
				mu.Lock()
				ib.drain(handle)
				mu.Unlock()
				select {
				case <-stop:
					return
				default:
					runtime.Gosched()
				}
			}
		}()
		wg.Wait()
		close(stop)
		<-drained
		mu.Lock()
		ib.drain(handle)
		mu.Unlock()
		if len(ib.q) > inboxMax {
			t.Fatalf("seed %d: the inbox's storage grew to %d events, over its bound %d", seed, len(ib.q), inboxMax)
		}
		if len(bad) > 0 {
			t.Fatalf("seed %d: %s (first of %d)", seed, bad[0], len(bad))
		}
		if want := posters * perPoster; handled != want {
			t.Fatalf("seed %d: %d events handled, want %d", seed, handled, want)
		}
		for p := range posters {
			if next[p] != uint64(perPoster) {
				t.Fatalf("seed %d: poster %d's last event handled %d, want %d", seed, p, next[p], perPoster)
			}
		}
	}
	t.Logf("%d posts found the inbox full", full)
	if full == 0 {
		t.Error("no post found the inbox full: the readers' own drain went untested")
	}
}

// An inbox holds at most inboxMax events: post refuses the next, and a
// drain empties it.
func TestInboxBound(t *testing.T) {
	var ib inbox
	for k := range inboxMax {
		if !ib.post(wire.TypeAckReq, nil, nil, uint64(k)) {
			t.Fatalf("post %d refused, want room for %d", k, inboxMax)
		}
	}
	if ib.post(wire.TypeAckReq, nil, nil, inboxMax) {
		t.Fatalf("post %d accepted, want the inbox full at %d", inboxMax, inboxMax)
	}
	n := 0
	ib.drain(func(*inboxEvent) error { n++; return nil })
	if n != inboxMax || !ib.post(wire.TypeAckReq, nil, nil, 0) {
		t.Fatalf("drained %d events, then full: %v", n, ib.n)
	}
}
