package session

import (
	"testing"

	"github.com/mpqsched/mpqsched/internal/alloctest"
)

// Recycling a send buffer's block or a byte-queue chunk does not allocate:
// the pools hold array pointers, so Put boxes no new slice header. (Under
// the race detector sync.Pool drops a quarter of its Puts on purpose, so
// the counts are not checked there.)
func TestPoolsDoNotAllocate(t *testing.T) {
	if a := alloctest.Mallocs(1000, func() { putSendBlock(getSendBlock()) }); a != 0 && !raceEnabled {
		t.Errorf("send buffer block: %d allocations in 1000 gets and puts, want 0", a)
	}
	q := byteQueue{recycle: true}
	b := make([]byte, chunkSize)
	if a := alloctest.Mallocs(100, func() { q.Append(b); q.Read(b) }); a != 0 && !raceEnabled {
		t.Errorf("byte queue chunk: %d allocations in 100 appends and reads, want 0", a)
	}
}
