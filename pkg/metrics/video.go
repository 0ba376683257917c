package metrics

import (
	"math"
	"slices"
)

// Video is what a video-on-demand player saw in one run (the scenario
// workload "video"): times in seconds since the session opened, as FCT.
type Video struct {
	Chunks        int       `json:"chunks"`         // chunks downloaded
	FirstFrameSec float64   `json:"first_frame_s"`  // when playback started: the startup buffer was downloaded, s
	RebufferSec   float64   `json:"rebuffer_s"`     // total time playback stalled after it started, s
	RebufferRatio float64   `json:"rebuffer_ratio"` // RebufferSec / (RebufferSec + media played), in [0, 1)
	Rebuffers     int       `json:"rebuffers"`      // number of stalls
	ChunkP50Sec   float64   `json:"chunk_p50_s"`    // chunk completion time (request sent to last byte read), median, s
	ChunkP95Sec   float64   `json:"chunk_p95_s"`    // 95th percentile (nearest rank), s
	ChunkP99Sec   float64   `json:"chunk_p99_s"`    // 99th percentile (nearest rank), s
	Redundancy    float64   `json:"redundancy"`     // bytes sent more than once / application bytes delivered
	ChunkTimesSec []float64 `json:"chunk_times_s"`  // each chunk's completion time, in chunk order, s
	// ChunkStartSec is when each chunk was requested, s since the session
	// opened, in chunk order (as ChunkTimesSec); absent in older records.
	ChunkStartSec []float64 `json:"chunk_start_s,omitempty"`
}

// Percentile returns the nearest-rank q-quantile of xs (q in (0, 1]): the
// smallest value with at least a fraction q of xs at or below it; 0 for an
// empty xs. xs is not modified.
func Percentile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}
