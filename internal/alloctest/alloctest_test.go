package alloctest

import (
	"testing"
)

var sink []byte

// The reason for the package: one allocation in 100 calls is a mean of
// 0.01, which testing.AllocsPerRun truncates to 0 and Mallocs counts.
func TestOneInAHundred(t *testing.T) {
	i := 0
	f := func() {
		if i++; i%100 == 0 {
			sink = make([]byte, 64)
		}
	}
	if a := testing.AllocsPerRun(1000, f); a != 0 {
		t.Fatalf("AllocsPerRun = %v; the premise (it truncates to 0) no longer holds", a)
	}
	if n := Mallocs(1000, f); n < 9 || n > 11 {
		t.Errorf("Mallocs over 1000 calls allocating every 100th = %d, want 10", n)
	}
	if n := Mallocs(1000, func() { i++ }); n != 0 {
		t.Errorf("Mallocs of a function that does not allocate = %d, want 0", n)
	}
	if n := Mallocs(10, func() { sink = make([]byte, 64) }); n != 10 {
		t.Errorf("Mallocs of 10 calls allocating once each = %d, want 10", n)
	}
}
