package session

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
)

// Seeded random frames of one stream, out of order, duplicated and
// overlapping, with reads in between, against the model (the stream's
// bytes): Read returns exactly the stream's bytes in order, never a byte
// past a gap; the blocks held stay within the window; the highest offset
// grows by what each frame adds. RFC 9000 §2.2: "Endpoints MUST be able to
// deliver stream data to an application as an ordered byte stream" and
// "An endpoint could receive data for a stream at the same stream offset
// multiple times."
//
// In half the seeds, most frames bring the first missing bytes, and a read
// that leaves nothing readable is followed by one that waits, its slice given to writeTo (a Read waiting on an
// empty buffer): a frame that brings the next bytes while nothing is held
// fills it without storing them.
func TestRecvBufModel(t *testing.T) {
	directSeeds := 0
	for seed := uint64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		size := 1 + rng.IntN(60_000)
		src := make([]byte, size)
		for i := range src {
			src[i] = byte(rng.IntN(256))
		}
		const window = 16 << 10
		b := newRecvBuf(window)
		var got []byte
		var highest uint64
		sent := 0       // frames are drawn from [0, sent+window) as flow control allows
		var wait []byte // the slice of a waiting read (direct seeds)
		direct, directBytes := seed%2 == 0, 0
		for len(got) < size {
			switch rng.IntN(3) {
			case 0, 1:
				limit := min(uint64(size), b.limit)
				off := uint64(rng.IntN(int(limit)))
				if next := b.read + b.readable(); direct && rng.IntN(4) > 0 && next < limit {
					off = next // the first missing byte, as most frames arrive in order
				}
				n := uint64(rng.IntN(3000))
				end := min(off+n, limit)
				fin := end == uint64(size)
				if off == end && !fin {
					continue
				}
				held := b.held()
				var toDst int
				var stored uint64
				var err error
				if wait != nil {
					toDst, stored, err = b.writeTo(off, src[off:end], fin, wait)
				} else {
					stored, err = b.write(off, src[off:end], fin)
				}
				if toDst > 0 {
					got = append(got, wait[:toDst]...)
					wait, directBytes = nil, directBytes+toDst
					b.limit = b.read + window
				}
				if err != nil {
					t.Fatalf("seed %d: write [%d,%d) fin %v: %v", seed, off, end, fin, err)
				}
				if b.held() != held+stored {
					t.Fatalf("seed %d: held %d after storing %d more, was %d", seed, b.held(), stored, held)
				}
				highest = max(highest, end)
				if b.highest != highest {
					t.Fatalf("seed %d: highest %d, want %d", seed, b.highest, highest)
				}
				sent++
			case 2:
				p := make([]byte, rng.IntN(5000))
				if direct {
					p = make([]byte, rng.IntN(20000)) // a reader that keeps up
				}
				if wait != nil {
					if b.readable() == 0 {
						continue // the reader waits for a frame
					}
					p, wait = wait, nil // woken: bytes were stored, not handed over
				}
				n := b.Read(p)
				if direct && b.readable() == 0 {
					wait = make([]byte, 1+rng.IntN(5000)) // the next read waits
				}
				got = append(got, p[:n]...)
				b.limit = b.read + window // the application consumed: credit again
			}
			if !bytes.Equal(got, src[:len(got)]) {
				t.Fatalf("seed %d: read %d bytes that differ from the stream", seed, len(got))
			}
			if held := len(b.blocks); held > window/bufBlock+2 {
				t.Fatalf("seed %d: %d blocks held for a %d-byte window", seed, held, window)
			}
		}
		if !b.eof() {
			t.Errorf("seed %d: all %d bytes read but no EOF", seed, size)
		}
		if directBytes > 0 {
			directSeeds++
		}
	}
	if directSeeds < 15 {
		t.Errorf("frames went straight into a waiting read in %d of 20 seeds, want at least 15", directSeeds)
	}
}

// RFC 9000 §4.1: "A receiver MUST close the connection with an error of
// type FLOW_CONTROL_ERROR if the sender violates the advertised connection
// or stream data limits". §4.5: "Once a final size for a stream is known,
// it cannot change. If a RESET_STREAM or STREAM frame is received
// indicating a change in the final size for the stream, an endpoint SHOULD
// respond with an error of type FINAL_SIZE_ERROR"; and "an endpoint SHOULD
// respond with an error of type FINAL_SIZE_ERROR if it receives ... a
// final size that is lower than the final size of the stream" data
// received.
func TestRecvBufErrors(t *testing.T) {
	b := newRecvBuf(100)
	if _, err := b.write(90, make([]byte, 11), false); !errors.Is(err, errFlowControl) {
		t.Errorf("one byte past the limit: %v, want FLOW_CONTROL_ERROR", err)
	}
	if _, err := b.write(0, make([]byte, 100), false); err != nil {
		t.Errorf("exactly the limit: %v", err)
	}
	if _, err := b.write(10, make([]byte, 5), true); !errors.Is(err, errFinalSize) {
		t.Errorf("a final size below data received: %v, want FINAL_SIZE_ERROR", err)
	}
	b = newRecvBuf(100)
	b.write(0, make([]byte, 20), true)
	if _, err := b.write(20, []byte{1}, false); !errors.Is(err, errFinalSize) {
		t.Errorf("data past the final size: %v, want FINAL_SIZE_ERROR", err)
	}
	if _, err := b.write(0, make([]byte, 10), true); !errors.Is(err, errFinalSize) {
		t.Errorf("a second, smaller final size: %v, want FINAL_SIZE_ERROR", err)
	}
	if _, err := b.write(5, make([]byte, 15), true); err != nil {
		t.Errorf("the same final size again (a retransmission): %v", err)
	}
}

// A frame is copied once, into its block: a 1,200-byte frame allocates
// nothing beyond the block it lands in.
func TestRecvBufOneCopy(t *testing.T) {
	b := newRecvBuf(1 << 20)
	p := make([]byte, 1200)
	b.write(0, p, false) // the first block
	allocs := testing.AllocsPerRun(100, func() {
		off := b.highest
		b.write(off, p, false)
		b.Read(p)
	})
	if allocs > 0.5 {
		t.Errorf("%.1f allocations per 1,200-byte frame written and read, want 0 (blocks are pooled)", allocs)
	}
}
