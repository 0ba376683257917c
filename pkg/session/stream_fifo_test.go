package session

import (
	"math/rand/v2"
	"testing"

	"github.com/mpqsched/mpqsched/internal/alloctest"
)

// The FIFO returns streams in the order pushed, against a slice model.
func TestStreamFIFO(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 5))
	var q streamFIFO
	var model []*Stream
	longest := 0
	for i := 0; i < 20000; i++ {
		grow := (i/2000)%2 == 0 // phases of growth and shrinkage
		if len(model) == 0 || grow == (rng.IntN(3) > 0) {
			st := &Stream{id: uint64(i)}
			q.Push(st)
			model = append(model, st)
		} else {
			if got := q.Pop(); got != model[0] {
				t.Fatalf("step %d: popped stream %d, want %d", i, got.id, model[0].id)
			}
			model = model[1:]
		}
		if q.Len() != len(model) {
			t.Fatalf("step %d: Len %d, want %d", i, q.Len(), len(model))
		}
		if len(model) > 0 && q.Front() != model[0] {
			t.Fatalf("step %d: Front is stream %d, want %d", i, q.Front().id, model[0].id)
		}
		longest = max(longest, len(model))
		if cap(q.buf) > 4*longest+8 {
			t.Fatalf("step %d: array of %d for at most %d streams", i, cap(q.buf), longest)
		}
	}
}

// The framer's round robin (take the first ready stream, put it back at the
// end) does not allocate once the queue has its size.
func TestStreamFIFORotateAllocs(t *testing.T) {
	var q streamFIFO
	for i := range 5 {
		q.Push(&Stream{id: uint64(i)})
	}
	if a := alloctest.Mallocs(1000, func() { q.Push(q.Pop()) }); a != 0 {
		t.Errorf("rotation: %d allocations in 1000, want 0", a)
	}
	one := streamFIFO{}
	one.Push(&Stream{})
	if a := alloctest.Mallocs(1000, func() { one.Push(one.Pop()) }); a != 0 {
		t.Errorf("rotation of one stream: %d allocations in 1000, want 0", a)
	}
}
