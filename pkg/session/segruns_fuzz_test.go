package session

import "testing"

// FuzzSegRuns checks the out-of-order segment tracker against a model:
// arbitrary segments (sequence number, offset, length) are offered; it
// keeps exactly those that fit, their offsets never overlap, its runs stay
// sorted and disjoint, and popping in order hands every segment back once.
// (Protocol version 5 dropped the connection window's limit on segment
// offsets: the credit counts stream bytes, connflow.go.)
func FuzzSegRuns(f *testing.F) {
	f.Add([]byte{1, 10, 5, 3, 30, 5, 2, 15, 15})
	f.Add([]byte{1, 1, 1, 1, 1, 1, 2, 2, 2})
	f.Fuzz(func(t *testing.T, script []byte) {
		var rb segRuns
		next, nextOff := uint64(0), uint64(0)
		type seg struct{ off, n uint64 }
		model := map[uint64]seg{}
		for len(script) >= 3 {
			s := next + 1 + uint64(script[0]%32)
			o := nextOff + uint64(script[1])*8
			n := 1 + uint64(script[2])
			script = script[3:]
			if rb.has(s) {
				if _, ok := model[s]; !ok {
					t.Fatalf("has(%d) without the segment", s)
				}
				continue
			}
			if rb.fits(s, o, n, next, nextOff) != nil {
				continue
			}
			// The model agrees that it fits: no overlap with any held
			// segment, and room for the missing numbers on both sides.
			for q, g := range model {
				if q < s && g.off+g.n+(s-q-1) > o || q > s && o+n+(q-s-1) > g.off {
					t.Fatalf("segment %d at %d+%d accepted next to %d at %d+%d", s, o, n, q, g.off, g.n)
				}
			}
			if err := rb.insert(s, o, n); err != nil {
				continue // a count bound
			}
			model[s] = seg{o, n}
			if len(model) != rb.segs {
				t.Fatalf("%d segments tracked, model %d", rb.segs, len(model))
			}
			for i := 1; i < len(rb.runs); i++ {
				if rb.runs[i-1].end >= rb.runs[i].seq || rb.runs[i-1].endOff > rb.runs[i].off {
					t.Fatalf("runs %d and %d overlap or touch: %+v %+v", i-1, i, rb.runs[i-1], rb.runs[i])
				}
			}
			// Deliver the missing head now and then, as the in-order path does.
			if len(script) > 0 && script[0]%4 == 0 && len(rb.runs) > 0 && rb.fits(next, nextOff, rb.runs[0].off-nextOff, next, nextOff) == nil && rb.runs[0].seq == next+1 && rb.runs[0].off > nextOff {
				next, nextOff = next+1, rb.runs[0].off
				run, ok := rb.popFront(next)
				if !ok {
					t.Fatal("popFront found no run at next")
				}
				for q := run.seq; q < run.end; q++ {
					delete(model, q)
				}
				next, nextOff = run.end, run.endOff
			}
		}
	})
}
