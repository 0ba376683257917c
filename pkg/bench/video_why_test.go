package bench

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"strconv"
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
// explains the slow chunks of each scheduler from what the server's session
// acknowledged. A chunk is slow if it took over 1.5 s (path 1 alone: p99
// 1.49 s). Each slow chunk is put in the first class that fits:
//   - window held: path 1 (index 0) paused sending for 200 ms or more
//     while a segment sent on another path before the pause was
//     acknowledged only after it (the receive window's left edge held on
//     the other path: 128 KB receive buffer, so path 1 could send nothing
//     new);
//   - tail on another path: the chunk's last byte came on another path,
//     over 100 ms after path 1's last;
//   - a segment lost (re-sent after its path failed or lost it);
//   - none of these.
//
// It prints per scheduler the slow chunks, how many began in a handoff
// window of path 2 (20-40 s, 60-80 s), the classes, and the mean longest
// pause between two path-1 sends within a slow chunk. Runs only with
// MPQ_VIDEO_WHY=1 (MPQ_VIDEO_WHY_SCHEDULERS: comma-separated, default
// minrtt; MPQ_VIDEO_WHY_SCENARIO, default video-handoff; MPQ_VIDEO_WHY_SLOW,
// the threshold in seconds, default 1.5; seeds 1-5):
//
//	MPQ_VIDEO_WHY=1 MPQ_VIDEO_WHY_SCHEDULERS=minrtt,blest go test -count=1 -v -run TestVideoWhyReport ./pkg/bench/
func TestVideoWhyReport(t *testing.T) {
	if os.Getenv("MPQ_VIDEO_WHY") != "1" {
		t.Skip("a measurement: set MPQ_VIDEO_WHY=1")
	}
	scn := cmp.Or(os.Getenv("MPQ_VIDEO_WHY_SCENARIO"), "video-handoff")
	s, err := scenario.Get(scn)
	if err != nil {
		t.Fatal(err)
	}
	slowSec := 1.5
	if v := os.Getenv("MPQ_VIDEO_WHY_SLOW"); v != "" {
		if slowSec, err = strconv.ParseFloat(v, 64); err != nil {
			t.Fatal(err)
		}
	}
	names := strings.Split(os.Getenv("MPQ_VIDEO_WHY_SCHEDULERS"), ",")
	if names[0] == "" {
		names = []string{"minrtt"}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s, slow: over %g s\n\n", scn, slowSec)
	b.WriteString("| scheduler | chunks | slow | of which began in a handoff | window held by another path's segment | tail on another path | a segment lost | none of these | mean longest path-1 pause (s) |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, name := range names {
		var chunks, slow, inHandoff, held, tail, lost, none int
		var pause time.Duration
		for seed := int64(1); seed <= 5; seed++ {
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
			chunks += len(v.ChunkTimesSec)
			// The recorder's clock starts at the server's first Decide, about
			// one RTT after the client's open: chunk windows are in the
			// client's frame; the offset (tens of ms) is small against them.
			for k, ct := range v.ChunkTimesSec {
				if ct <= slowSec {
					continue
				}
				slow++
				from := time.Duration(v.ChunkStartSec[k] * float64(time.Second))
				to := from + time.Duration(ct*float64(time.Second))
				if st := from.Seconds(); st >= 20 && st < 40 || st >= 60 && st < 80 {
					inHandoff++
				}
				var p0 []time.Duration
				for _, g := range rec.segs {
					if g.path == 0 && g.sent >= from && g.sent <= to {
						p0 = append(p0, g.sent)
					}
				}
				slices.Sort(p0)
				var gap, at time.Duration
				for i := 1; i < len(p0); i++ {
					if d := p0[i] - p0[i-1]; d > gap {
						gap, at = d, p0[i-1]
					}
				}
				pause += gap
				isHeld, isTail, isLost := false, false, false
				var last0, lastOther time.Duration // the last acknowledgement on path 1, on the others
				for _, g := range rec.segs {
					if g.acked < from || g.acked > to+50*time.Millisecond {
						continue
					}
					if g.path != 0 && g.sent <= at && g.acked >= at+gap && gap >= 200*time.Millisecond {
						isHeld = true
					}
					if g.lost {
						isLost = true
					}
					if g.path == 0 {
						last0 = max(last0, g.acked)
					} else {
						lastOther = max(lastOther, g.acked)
					}
				}
				isTail = lastOther > last0+100*time.Millisecond
				switch {
				case isHeld:
					held++
				case isTail:
					tail++
				case isLost:
					lost++
				default:
					none++
				}
			}
		}
		mp := 0.0
		if slow > 0 {
			mp = pause.Seconds() / float64(slow)
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %d | %d | %.3f |\n", name, chunks, slow, inHandoff, held, tail, lost, none, mp)
	}
	t.Log("\n" + b.String())
}
