package bench

import (
	"time"

	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/scenario"
)

// player is the video workload's playback model (scenario.Workload), in
// times relative to the session's open. It is a pure function of the
// chunks' request and arrival times: chunk k plays from
//
//	p[k] = start + k·D            for the startup chunks (k < m),
//	p[k] = max(p[k-1] + D, a[k])  after them,
//
// where start is the arrival of the last startup chunk (the first frame),
// D the chunk duration and a[k] chunk k's arrival; a[k] > p[k-1]+D is a
// stall of a[k] − (p[k-1]+D). The buffer level at t is the media downloaded
// ahead of the playhead: every downloaded chunk before playback starts,
// max(0, p[last]+D − t) after. Not safe for concurrent use; its slices
// grow to the video's chunk count at most.
type player struct {
	d      time.Duration // chunk duration
	m      int           // startup chunks
	target time.Duration // request the next chunk when the level drops below this
	req    []time.Duration
	arr    []time.Duration
	play   []time.Duration // p[k], known once playback has started
	start  time.Duration   // first frame; valid when started
	stall  time.Duration
	stalls int
}

func newPlayer(w scenario.Workload) *player {
	return &player{d: w.ChunkDuration.D(), m: w.StartupChunks(), target: w.Target()}
}

func (p *player) started() bool { return len(p.arr) >= p.m }

// level is the buffer level at t (t no earlier than the last arrival).
func (p *player) level(t time.Duration) time.Duration {
	if !p.started() {
		return time.Duration(len(p.arr)) * p.d
	}
	return max(0, p.play[len(p.play)-1]+p.d-t)
}

// nextRequest is when the next chunk is requested, given that the previous
// one arrived at now: at once while the startup buffer fills, else when the
// level has dropped to the target.
func (p *player) nextRequest(now time.Duration) time.Duration {
	if !p.started() {
		return now
	}
	return max(now, p.play[len(p.play)-1]+p.d-p.target)
}

// deadline is the time the player will need a chunk requested at t: t plus
// the buffer level (the play time left).
func (p *player) deadline(t time.Duration) time.Duration { return t + p.level(t) }

// arrive records the next chunk, requested at req and read completely at at.
func (p *player) arrive(req, at time.Duration) {
	p.req = append(p.req, req)
	p.arr = append(p.arr, at)
	switch k := len(p.arr) - 1; {
	case k+1 == p.m:
		p.start = at
		for i := range p.m {
			p.play = append(p.play, at+time.Duration(i)*p.d)
		}
	case k >= p.m:
		due := p.play[k-1] + p.d
		if at > due {
			p.stall += at - due
			p.stalls++
		}
		p.play = append(p.play, max(due, at))
	}
}

// summary is the run's metrics.Video; the redundancy is left to the caller.
// Before playback has started the first frame is 0.
func (p *player) summary() *metrics.Video {
	v := &metrics.Video{Chunks: len(p.arr), RebufferSec: p.stall.Seconds(), Rebuffers: p.stalls}
	if p.started() {
		v.FirstFrameSec = p.start.Seconds()
	}
	if played := time.Duration(len(p.arr)) * p.d; played+p.stall > 0 {
		v.RebufferRatio = p.stall.Seconds() / (played + p.stall).Seconds()
	}
	for i := range p.arr {
		v.ChunkTimesSec = append(v.ChunkTimesSec, (p.arr[i] - p.req[i]).Seconds())
		v.ChunkStartSec = append(v.ChunkStartSec, p.req[i].Seconds())
	}
	v.ChunkP50Sec = metrics.Percentile(v.ChunkTimesSec, 0.50)
	v.ChunkP95Sec = metrics.Percentile(v.ChunkTimesSec, 0.95)
	v.ChunkP99Sec = metrics.Percentile(v.ChunkTimesSec, 0.99)
	return v
}
