package schedtest

import "testing"

var sink []byte

// Issue 19, finding 11: "testing.AllocsPerRun truncates its mean, so the
// allocation tests pass even if 99% of calls allocate." TotalAllocs must
// see a call that allocates once in 100 calls, and must read 0 for one
// that never allocates.
func TestTotalAllocsSeesRareAllocations(t *testing.T) {
	i := 0
	rare := func() {
		i++
		if i%100 == 0 {
			sink = make([]byte, 64+i%2)
		}
	}
	if got := TotalAllocs(1000, rare); got < 10 {
		t.Errorf("TotalAllocs = %d for a function that allocates in 1 call of 100, want ≥ 10 per 1000 calls", got)
	}
	if got := TotalAllocs(1000, func() { i++ }); got != 0 {
		t.Errorf("TotalAllocs = %d for a function that never allocates, want 0", got)
	}
}
