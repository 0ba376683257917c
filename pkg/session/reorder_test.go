package session

import (
	"testing"

	"github.com/mpqsched/mpqsched/internal/alloctest"
)

// A reorder buffer that fills one hole after another (a segment arrives
// ahead of the next in-order one, which then arrives and releases it, as on
// two paths of different RTTs) allocates nothing once warm: the runs array
// and the runs' buffer lists are reused. (Not counted under the race
// detector, where sync.Pool drops a quarter of the segment buffers' Puts.)
func TestReorderFillDrainAllocs(t *testing.T) {
	var rb reorderBuf
	next, off := uint64(0), uint64(0)
	payload := make([]byte, DefaultSegmentSize)
	step := func() {
		// Segments next+1 and next+2 arrive ahead of next.
		for k := uint64(1); k <= 2; k++ {
			if err := rb.insert(next+k, off+k*DefaultSegmentSize, payload); err != nil {
				t.Fatal(err)
			}
		}
		next, off = next+1, off+DefaultSegmentSize // next arrives and is delivered
		run, ok := rb.popFront(next)
		if !ok || len(run.bufs) != 2 || rb.segs != 0 || rb.held != 0 {
			t.Fatalf("popFront(%d): %d buffers, %v; %d segments and %d bytes left", next, len(run.bufs), ok, rb.segs, rb.held)
		}
		for _, b := range run.bufs {
			putSegBuf(b)
		}
		rb.recycle(run.bufs)
		next, off = next+2, off+2*DefaultSegmentSize
	}
	if a := alloctest.Mallocs(1000, step); a != 0 && !raceEnabled {
		t.Errorf("%d allocations in 1000 holes filled, want 0", a)
	}
}
