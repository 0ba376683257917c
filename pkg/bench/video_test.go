package bench

import (
	"math"
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/pkg/scenario"
	"github.com/mpqsched/mpqsched/sched"
)

// The player model against a timeline worked by hand (issue 22: "video:
// chunks of D seconds at bitrate B ..., requested as the playback buffer
// allows. Metrics: first frame, rebuffer time and ratio, and chunk
// completion time p50/p95/p99"). D = 1 s, startup buffer 2 s (2 chunks),
// target 2 s, 4 chunks:
//
//	chunk 0: requested 0,   arrives 0.5 (startup: request the next at once)
//	chunk 1: requested 0.5, arrives 1.0: first frame at 1.0, chunks 0-1 play
//	         1-3; level 2 s, not below the target, so chunk 2 is asked for
//	         when the level reaches 2 s: at once (3 − 2 = 1.0), deadline 3.0
//	chunk 2: requested 1.0, arrives 4.0: due at 3.0, a 1 s stall; it plays 4-5
//	         and the level at 4.0 is 1 s: request at once, deadline 5.0
//	chunk 3: requested 4.0, arrives 4.5: due at 5.0, no stall
//
// Rebuffer 1 s over 4 s of media: ratio 1/5; completion times 0.5, 0.5, 3.0,
// 0.5 s: p50 0.5, p95 and p99 3.0.
func TestVideoPlayerTimeline(t *testing.T) {
	s := func(v float64) time.Duration { return time.Duration(v * float64(time.Second)) }
	w := scenario.Workload{Kind: scenario.WorkloadVideo, ChunkDuration: scenario.Duration(s(1)), BitrateBps: 8000, Chunks: 4,
		StartupBuffer: scenario.Duration(s(2)), BufferTarget: scenario.Duration(s(2))}
	p := newPlayer(w)
	steps := []struct {
		now, wantReq, wantDeadline, arrive float64
	}{
		{now: 0, wantReq: 0, wantDeadline: 0, arrive: 0.5},
		{now: 0.5, wantReq: 0.5, wantDeadline: 1.5, arrive: 1.0}, // before the start the level is what has arrived: 1 s
		{now: 1.0, wantReq: 1.0, wantDeadline: 3.0, arrive: 4.0},
		{now: 4.0, wantReq: 4.0, wantDeadline: 5.0, arrive: 4.5},
	}
	for k, st := range steps {
		req := p.nextRequest(s(st.now))
		if req != s(st.wantReq) {
			t.Errorf("chunk %d: request at %v, want %v", k, req, s(st.wantReq))
		}
		if d := p.deadline(req); d != s(st.wantDeadline) {
			t.Errorf("chunk %d: deadline %v, want %v", k, d, s(st.wantDeadline))
		}
		p.arrive(req, s(st.arrive))
	}
	v := p.summary()
	if v.Chunks != 4 || v.FirstFrameSec != 1.0 || v.RebufferSec != 1.0 || v.Rebuffers != 1 || math.Abs(v.RebufferRatio-0.2) > 1e-12 {
		t.Errorf("summary %+v, want 4 chunks, first frame 1 s, one 1 s rebuffer, ratio 0.2", v)
	}
	if v.ChunkP50Sec != 0.5 || v.ChunkP95Sec != 3.0 || v.ChunkP99Sec != 3.0 {
		t.Errorf("chunk p50/p95/p99 = %v/%v/%v, want 0.5/3/3", v.ChunkP50Sec, v.ChunkP95Sec, v.ChunkP99Sec)
	}
}

// With a full buffer the player waits: one startup chunk of 1 s, target
// 2 s. Chunk 0 arrives at 1.0 (first frame, plays 1-2); chunk 1 is asked
// for at once (level 1 s < 2 s) and arrives at 1.2 (plays 2-3, level 1.8 s
// at 1.2): chunk 2 is asked for at once too; it arrives at 1.3 and plays
// 3-4, so the level at 1.3 is 2.7 s and chunk 3 waits until 4 − 2 = 2.0.
func TestVideoPlayerWaits(t *testing.T) {
	s := func(v float64) time.Duration { return time.Duration(v * float64(time.Second)) }
	w := scenario.Workload{Kind: scenario.WorkloadVideo, ChunkDuration: scenario.Duration(s(1)), BitrateBps: 8000, Chunks: 4}
	p := newPlayer(w)
	p.arrive(0, s(1.0))
	if r := p.nextRequest(s(1.0)); r != s(1.0) {
		t.Errorf("chunk 1 at %v, want 1s", r)
	}
	p.arrive(s(1.0), s(1.2))
	if r := p.nextRequest(s(1.2)); r != s(1.2) {
		t.Errorf("chunk 2 at %v, want 1.2s", r)
	}
	p.arrive(s(1.2), s(1.3))
	if r := p.nextRequest(s(1.3)); r != s(2.0) {
		t.Errorf("chunk 3 at %v, want 2s", r)
	}
	if d := p.deadline(s(2.0)); d != s(4.0) {
		t.Errorf("chunk 3's deadline %v, want 4s", d)
	}
}

// videoTest is a video over two lossless paths of 10 Mbit/s, 20 ms and
// 40 ms RTT: 8 chunks of 0.5 s at 4 Mbit/s (250 kB each), playback after
// the first chunk, target 1 s.
func videoTest() scenario.Scenario {
	l := func(delayMs float64) scenario.Link {
		return scenario.Link{RateBps: 10 * scenario.Mbps, Delay: scenario.Duration(delayMs * float64(time.Millisecond))}
	}
	w := &scenario.Workload{Kind: scenario.WorkloadVideo, ChunkDuration: scenario.Duration(500 * time.Millisecond), BitrateBps: 4e6, Chunks: 8}
	return scenario.Scenario{
		Name:     "video-test",
		Paths:    []scenario.PathSpec{{Name: "a", Up: l(10), Down: l(10)}, {Name: "b", Up: l(20), Down: l(20)}},
		Bytes:    w.TotalBytes(),
		Duration: scenario.Duration(30 * time.Second),
		Workload: w,
	}
}

// One video end to end in virtual time, under minRTT and XLINK. The ranges
// come from the setup:
//   - first frame: path a's handshake and the request (2 RTTs, 40 ms) plus
//     250 kB at both paths' 20 Mbit/s (0.1 s) at least; under 1 s (250 kB on
//     path a alone is 0.2 s, slow start adds a few RTTs);
//   - each chunk takes at least a round trip plus 250 kB at 20 Mbit/s
//     (0.12 s) and, at 8 times the bitrate in capacity, less than a chunk's
//     0.5 s, so nothing rebuffers;
//   - the player paces its requests: chunk 7 is asked for when the level
//     falls to 1 s, 2.5 s after the first frame (7 × 0.5 − 1), so the last
//     byte arrives in [first frame + 2.62 s, first frame + 3 s];
//   - neither sends anything twice on lossless paths (XLINK copies only in
//     re-injection rounds, which this session does not run);
//   - the deadline hint reaches the server's scheduler: the chunks'
//     streams carry a deadline (ConnInfo.Deadline) at most the buffer
//     target (1 s) plus a chunk's time ahead of the decision, and none more
//     than a chunk's time late (nothing rebuffers).
func TestVideoEndToEnd(t *testing.T) {
	for _, name := range []string{"minrtt", "xlink"} {
		var seen deadlineSeen
		res, _ := runScenario(t, videoTest(), name, 1, func(r *Run) {
			r.NewServerScheduler = func() sched.Scheduler {
				in, _ := sched.New(name)
				return &wrap{in, &seen}
			}
		})
		if seen.n == 0 || seen.max > 1500*time.Millisecond || seen.min < -500*time.Millisecond {
			t.Errorf("%s: %d decisions with a deadline, ahead by %v to %v; want some, within [-0.5 s, 1.5 s]", name, seen.n, seen.min, seen.max)
		}
		v := res.Video
		if v == nil {
			t.Fatalf("%s: no video metrics", name)
		}
		t.Logf("%s: first frame %.3f s, rebuffer %.3f s, chunks p50/p95/p99 %.3f/%.3f/%.3f s, FCT %.3f s, redundancy %.2f%%",
			name, v.FirstFrameSec, v.RebufferSec, v.ChunkP50Sec, v.ChunkP95Sec, v.ChunkP99Sec, res.FCTSeconds, 100*v.Redundancy)
		if v.Chunks != 8 || !res.SHA256OK || res.Bytes != uint64(8*250000) {
			t.Errorf("%s: %d chunks, sha %v, %d bytes; want 8 verified chunks of 250000 bytes", name, v.Chunks, res.SHA256OK, res.Bytes)
		}
		if v.FirstFrameSec < 0.14 || v.FirstFrameSec >= 1 {
			t.Errorf("%s: first frame %.3f s, want in [0.14, 1)", name, v.FirstFrameSec)
		}
		for k, c := range v.ChunkTimesSec {
			if c < 0.12 || c >= 0.5 {
				t.Errorf("%s: chunk %d took %.3f s, want in [0.12, 0.5)", name, k, c)
			}
		}
		if v.RebufferSec != 0 || v.RebufferRatio != 0 {
			t.Errorf("%s: rebuffer %.3f s (ratio %.3f), want none", name, v.RebufferSec, v.RebufferRatio)
		}
		if lo, hi := v.FirstFrameSec+2.62, v.FirstFrameSec+3; res.FCTSeconds < lo || res.FCTSeconds > hi {
			t.Errorf("%s: last chunk at %.3f s, want in [%.3f, %.3f]", name, res.FCTSeconds, lo, hi)
		}
		if v.Redundancy > 0.01 {
			t.Errorf("%s: redundancy %.3f, want < 0.01 on lossless paths", name, v.Redundancy)
		}
	}
}

// deadlineSeen records, over a scheduler's decisions on data with a
// deadline hint, how far ahead the deadline was (min and max).
type deadlineSeen struct {
	n        int
	min, max time.Duration
}

// wrap forwards to a scheduler and records the deadlines it is shown.
type wrap struct {
	sched.Scheduler
	seen *deadlineSeen
}

func (w *wrap) Decide(c *sched.ConnInfo, p []sched.PathInfo) sched.Decision {
	if c.HasStream && !c.Deadline.IsZero() {
		d := c.Deadline.Sub(c.Now)
		if w.seen.n == 0 || d < w.seen.min {
			w.seen.min = d
		}
		if w.seen.n == 0 || d > w.seen.max {
			w.seen.max = d
		}
		w.seen.n++
	}
	return w.Scheduler.Decide(c, p)
}
