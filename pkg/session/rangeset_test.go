package session

import (
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// contains reports whether v is in the set (the model test's check; the
// session itself never asks).
func (s rangeset) contains(v uint64) bool {
	i := sort.Search(len(s), func(i int) bool { return s[i].end > v })
	return i < len(s) && s[i].start <= v
}

// The rangeset against a model (a set of values), over seeded random adds,
// removals below a moving base and gap walks: the spans stay ascending,
// disjoint and non-adjacent, and say exactly what the model holds.
func TestRangesetModel(t *testing.T) {
	for seed := uint64(1); seed <= 50; seed++ {
		rng := rand.New(rand.NewPCG(seed, 0))
		var rs rangeset
		model := map[uint64]bool{}
		var base uint64
		for step := 0; step < 400; step++ {
			switch rng.IntN(6) {
			case 5:
				lo := base + uint64(rng.IntN(200))
				hi := lo + uint64(rng.IntN(30))
				rs.remove(lo, hi)
				for v := lo; v < hi; v++ {
					delete(model, v)
				}
			case 0:
				base += uint64(rng.IntN(8))
				rs.removeBelow(base)
				for v := range model {
					if v < base {
						delete(model, v)
					}
				}
			case 1:
				lo := base + uint64(rng.IntN(200))
				hi := lo + uint64(rng.IntN(20))
				var got []uint64
				rs.gaps(lo, hi, func(a, b uint64) error {
					if a >= b {
						t.Fatalf("seed %d: empty gap [%d,%d)", seed, a, b)
					}
					for v := a; v < b; v++ {
						got = append(got, v)
					}
					return nil
				})
				var want []uint64
				for v := lo; v < hi; v++ {
					if !model[v] {
						want = append(want, v)
					}
				}
				if !slices.Equal(got, want) {
					t.Fatalf("seed %d: gaps of [%d,%d) = %v, want %v (set %v)", seed, lo, hi, got, want, rs)
				}
			default:
				lo := base + uint64(rng.IntN(200))
				hi := lo + uint64(rng.IntN(12))
				rs.add(lo, hi)
				for v := lo; v < hi; v++ {
					model[v] = true
				}
			}
			for i, sp := range rs {
				if sp.start >= sp.end || i > 0 && rs[i-1].end >= sp.start {
					t.Fatalf("seed %d: spans not ascending, disjoint and apart: %v", seed, rs)
				}
			}
			for v := base; v < base+240; v++ {
				if rs.contains(v) != model[v] {
					t.Fatalf("seed %d: contains(%d) = %v, model %v (set %v)", seed, v, rs.contains(v), model[v], rs)
				}
			}
		}
	}
}
