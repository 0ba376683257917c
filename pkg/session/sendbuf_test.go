package session

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// A stream's bytes through sendBuf and recvBuf over a seeded random
// network that loses, reorders, duplicates and late-acknowledges frames
// (a lost frame may still arrive, as a copy on another path would): every
// byte arrives once in order, the sender frees every block once all is
// acknowledged, and a lost range is sent again only if it was not
// acknowledged meanwhile. RFC 9000 §13.3: "Data sent in CRYPTO and STREAM
// frames is retransmitted in new STREAM frames unless the endpoint has
// reset the corresponding stream."
func TestSendBufRecvBufModel(t *testing.T) {
	type frame struct {
		off  uint64
		data []byte
		fin  bool
	}
	for seed := uint64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewPCG(seed, 9))
		src := make([]byte, 1+rng.IntN(80_000))
		for i := range src {
			src[i] = byte(rng.IntN(256))
		}
		var s sendBuf
		r := newRecvBuf(uint64(len(src)))
		var flight []frame
		written := 0
		var got []byte
		for steps := 0; !s.done() || len(got) < len(src); steps++ {
			if steps > 200_000 {
				t.Fatalf("seed %d: no progress: %d of %d bytes read; acked %d of %d, unsent %v, fin sent %v acked %v",
					seed, len(got), len(src), s.acked, s.end, s.unsent, s.finSent, s.finAcked)
			}
			switch rng.IntN(6) {
			case 0: // the application writes
				if written < len(src) {
					n := min(len(src)-written, 1+rng.IntN(5000))
					s.write(src[written : written+n])
					written += n
					if written == len(src) {
						s.close()
					}
				}
			case 1, 2: // a packet is packed
				if off, n, fin, ok := s.next(1 + rng.IntN(1300)); ok {
					f := frame{off, s.appendTo(nil, off, n), fin}
					s.sent(off, n, fin)
					flight = append(flight, f)
				}
			case 3, 4: // a frame in flight arrives and is acknowledged, in any order
				if len(flight) > 0 {
					i := rng.IntN(len(flight))
					f := flight[i]
					if _, err := r.write(f.off, f.data, f.fin); err != nil {
						t.Fatalf("seed %d: %v", seed, err)
					}
					// The Ack may be lost: the frame stays in flight until
					// acknowledged or declared lost; an acknowledged one may
					// still arrive again (a copy on another path).
					if rng.IntN(4) > 0 {
						s.ackedRange(f.off, len(f.data), f.fin)
						if rng.IntN(3) > 0 {
							flight = append(flight[:i], flight[i+1:]...)
						}
					}
				}
			case 5: // a frame is declared lost (it may still arrive later)
				if len(flight) > 0 {
					i := rng.IntN(len(flight))
					f := flight[i]
					s.lost(f.off, len(f.data), f.fin)
					if rng.IntN(2) == 0 {
						flight = append(flight[:i], flight[i+1:]...)
					}
				}
			}
			p := make([]byte, rng.IntN(4000))
			n := r.Read(p)
			got = append(got, p[:n]...)
			if !bytes.Equal(got, src[:len(got)]) {
				t.Fatalf("seed %d: read bytes differ from the stream at %d", seed, len(got))
			}
			// Nothing is framed that is acknowledged (new frames only
			// carry unacknowledged ranges).
			if sp, ok := s.unsent.first(); ok && sp.start < s.acked {
				t.Fatalf("seed %d: unsent %v below the acknowledged prefix %d", seed, sp, s.acked)
			}
		}
		if !r.eof() || len(s.blocks) > 1 || s.buffered() != 0 {
			t.Errorf("seed %d: eof %v, %d blocks kept, %d bytes buffered; want EOF, ≤ 1, 0", seed, r.eof(), len(s.blocks), s.buffered())
		}
	}
}

// A 1,200-byte Write is one frame (issue 30: "A 1,200-byte Write is one
// frame"), and a frame ends at the FIN once the stream is closed.
func TestSendBufFraming(t *testing.T) {
	var s sendBuf
	s.write(make([]byte, 1200))
	s.close()
	off, n, fin, ok := s.next(1200)
	if !ok || off != 0 || n != 1200 || !fin {
		t.Fatalf("next = %d, %d, fin %v, %v; want one 1,200-byte frame with the FIN", off, n, fin, ok)
	}
	s.sent(off, n, fin)
	if _, _, _, ok := s.next(1200); ok {
		t.Error("something more to send after the whole stream and its FIN went out")
	}
	// RFC 9000 §3.1: the FIN alone is retransmitted if only it was lost.
	s.ackedRange(0, 1200, false)
	s.lost(0, 1200, true)
	if off, n, fin, ok := s.next(1200); !ok || off != 1200 || n != 0 || !fin {
		t.Errorf("after the data was acknowledged and the frame lost: next = %d, %d, %v, %v; want the FIN alone at 1200", off, n, fin, ok)
	}
}
