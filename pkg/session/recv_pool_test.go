package session

import "testing"

// Recycling a segment buffer or a byte-queue chunk does not allocate: the
// pools hold array pointers, so Put boxes no new slice header.
func TestPoolsDoNotAllocate(t *testing.T) {
	if a := testing.AllocsPerRun(1000, func() { putSegBuf(getSegBuf(DefaultSegmentSize)) }); a != 0 {
		t.Errorf("segment buffer: %v allocations per get and put, want 0", a)
	}
	q := byteQueue{recycle: true}
	b := make([]byte, chunkSize)
	if a := testing.AllocsPerRun(100, func() { q.Append(b); q.Read(b) }); a != 0 {
		t.Errorf("byte queue chunk: %v allocations per append and read, want 0", a)
	}
	if g := getSegBuf(DefaultSegmentSize); len(g) != 0 || cap(g) != segBufCap {
		t.Errorf("getSegBuf: len %d cap %d, want 0 and %d", len(g), cap(g), segBufCap)
	}
}
