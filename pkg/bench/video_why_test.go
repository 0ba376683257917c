package bench

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/pkg/scenario"
	"github.com/mpqsched/mpqsched/sched"
)

// segRec is what the recording scheduler learnt of one segment: the path of
// its last transmission, when that was sent, and when it was acknowledged
// (all relative to the recorder's start), and whether it was ever lost.
type segRec struct {
	path          sched.PathID
	sent, acked   time.Duration
	lost, copied  bool
	size          uint64
	firstSentPath sched.PathID
}

// recorder wraps the server's scheduler and keeps, per segment, what the
// session's Observer calls say. Calls are serialized by the session.
type recorder struct {
	inner sched.Scheduler
	start time.Time
	segs  map[uint64]*segRec
}

func (r *recorder) Name() string { return r.inner.Name() }

func (r *recorder) Decide(c *sched.ConnInfo, p []sched.PathInfo) sched.Decision {
	if r.start.IsZero() {
		r.start = c.Now
	}
	return r.inner.Decide(c, p)
}

func (r *recorder) SegmentAcked(now time.Time, path sched.PathID, seq, size uint64, sentAt time.Time) {
	g := r.seg(seq)
	g.path, g.sent, g.acked, g.size = path, sentAt.Sub(r.start), now.Sub(r.start), size
	if o, ok := r.inner.(sched.Observer); ok {
		o.SegmentAcked(now, path, seq, size, sentAt)
	}
}

func (r *recorder) SegmentLost(now time.Time, path sched.PathID, seq uint64) {
	r.seg(seq).lost = true
	if o, ok := r.inner.(sched.Observer); ok {
		o.SegmentLost(now, path, seq)
	}
}

func (r *recorder) seg(seq uint64) *segRec {
	g := r.segs[seq]
	if g == nil {
		g = &segRec{}
		r.segs[seq] = g
	}
	return g
}

// TestVideoWhyReport is a measurement, not a check: on video-handoff it
// explains the slowest chunks of one run per scheduler from what the server's
// session acknowledged: for the slowest chunks, how long the chunk took, the
// bytes each path carried, and the segment acknowledged last (its path, when
// it was sent and acknowledged, whether it had been lost). Runs only with
// MPQ_VIDEO_WHY=1:
//
//	MPQ_VIDEO_WHY=1 go test -count=1 -v -run TestVideoWhyReport ./pkg/bench/
func TestVideoWhyReport(t *testing.T) {
	if os.Getenv("MPQ_VIDEO_WHY") != "1" {
		t.Skip("a measurement: set MPQ_VIDEO_WHY=1")
	}
	scn := os.Getenv("MPQ_VIDEO_WHY_SCENARIO")
	if scn == "" {
		scn = "video-handoff"
	}
	s, err := scenario.Get(scn)
	if err != nil {
		t.Fatal(err)
	}
	names := strings.Split(os.Getenv("MPQ_VIDEO_WHY_SCHEDULERS"), ",")
	if names[0] == "" {
		names = []string{"minrtt"}
	}
	for _, name := range names {
		for seed := int64(1); seed <= 2; seed++ {
			rec := &recorder{segs: map[uint64]*segRec{}}
			res, _ := runScenario(t, s, name, seed, func(r *Run) {
				r.NewServerScheduler = func() sched.Scheduler {
					in, err := sched.New(name)
					if err != nil {
						t.Fatal(err)
					}
					rec.inner = in
					return rec
				}
			})
			v := res.Video
			var b strings.Builder
			fmt.Fprintf(&b, "%s seed %d: p99 %.3f s, redundancy %.2f%%, per path %v\n", name, seed, v.ChunkP99Sec, 100*v.Redundancy, res.PerPathBytes)
			order := make([]int, len(v.ChunkTimesSec))
			for i := range order {
				order[i] = i
			}
			slices.SortFunc(order, func(a, b int) int {
				if v.ChunkTimesSec[a] > v.ChunkTimesSec[b] {
					return -1
				}
				return 1
			})
			// The recorder's clock starts at the server's first Decide,
			// about one RTT after the client's open: chunk windows are in
			// the client's frame; the offset is small against chunk times.
			for _, k := range order[:min(5, len(order))] {
				from := time.Duration(v.ChunkStartSec[k] * float64(time.Second))
				to := from + time.Duration(v.ChunkTimesSec[k]*float64(time.Second))
				per := map[sched.PathID]uint64{}
				var last *segRec
				var lastSeq uint64
				lost := 0
				for seq, g := range r2(rec.segs) {
					if g.acked < from || g.acked > to+50*time.Millisecond {
						continue
					}
					per[g.path] += g.size
					if g.lost {
						lost++
					}
					if last == nil || g.acked > last.acked {
						last, lastSeq = g, seq
					}
				}
				fmt.Fprintf(&b, "  chunk %2d: at %6.2f s took %.3f s; acked bytes per path %v; %d lost; last acked seg %d on path %d sent %.3f acked %.3f (lost %v)\n",
					k, from.Seconds(), v.ChunkTimesSec[k], per, lost, lastSeq, last.path, last.sent.Seconds(), last.acked.Seconds(), last.lost)
				// The other paths' segments of the chunk, and the longest gap
				// between path-0 sends within the chunk.
				var p0 []time.Duration
				var other []string
				for seq, g := range rec.segs {
					if g.acked < from || g.acked > to+50*time.Millisecond {
						continue
					}
					if g.path == 0 {
						p0 = append(p0, g.sent)
					} else if len(other) < 6 {
						other = append(other, fmt.Sprintf("seg %d path %d sent %.3f acked %.3f lost %v", seq, g.path, g.sent.Seconds(), g.acked.Seconds(), g.lost))
					}
				}
				slices.Sort(p0)
				var gap, gapAt time.Duration
				for i := 1; i < len(p0); i++ {
					if d := p0[i] - p0[i-1]; d > gap {
						gap, gapAt = d, p0[i-1]
					}
				}
				fmt.Fprintf(&b, "      longest pause of path-0 sends: %.3f s from %.3f; other paths: %s\n", gap.Seconds(), gapAt.Seconds(), strings.Join(other, "; "))
			}
			t.Log("\n" + b.String())
		}
	}
}

func r2(m map[uint64]*segRec) map[uint64]*segRec { return m }
