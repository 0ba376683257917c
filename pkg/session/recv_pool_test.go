package session

import (
	"testing"

	"github.com/mpqsched/mpqsched/internal/alloctest"
)

// Recycling a segment buffer or a byte-queue chunk does not allocate: the
// pools hold array pointers, so Put boxes no new slice header. (Under the
// race detector sync.Pool drops a quarter of its Puts on purpose, so the
// counts are not checked there.)
func TestPoolsDoNotAllocate(t *testing.T) {
	if a := alloctest.Mallocs(1000, func() { putSegBuf(getSegBuf(DefaultSegmentSize)) }); a != 0 && !raceEnabled {
		t.Errorf("segment buffer: %d allocations in 1000 gets and puts, want 0", a)
	}
	q := byteQueue{recycle: true}
	b := make([]byte, chunkSize)
	if a := alloctest.Mallocs(100, func() { q.Append(b); q.Read(b) }); a != 0 && !raceEnabled {
		t.Errorf("byte queue chunk: %d allocations in 100 appends and reads, want 0", a)
	}
	if a := alloctest.Mallocs(1000, func() { putSegBuf(getSegBuf(segBufCapLarge)) }); a != 0 && !raceEnabled {
		t.Errorf("large segment buffer: %d allocations in 1000 gets and puts, want 0", a)
	}
	// Issue 30's server memory: the copies of unacknowledged segments are
	// most of a sending session's heap, so a default segment's buffer holds
	// it without slack (it had 2048 bytes for 1200, 41% slack).
	for _, c := range []struct{ n, cap int }{
		{1, DefaultSegmentSize}, {DefaultSegmentSize, DefaultSegmentSize},
		{DefaultSegmentSize + 1, 2048}, {2048, 2048}, {2049, 2049}, {16 << 10, 16 << 10},
	} {
		g := getSegBuf(c.n)
		if len(g) != 0 || cap(g) != c.cap {
			t.Errorf("getSegBuf(%d): len %d cap %d, want 0 and %d", c.n, len(g), cap(g), c.cap)
		}
		putSegBuf(g)
	}
}
