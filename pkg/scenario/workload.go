package scenario

import (
	"math"
	"time"
)

// WorkloadVideo is the kind of a video-on-demand workload (see Workload).
const WorkloadVideo = "video"

// Workload is what the application runs over the session instead of one
// bulk download. Only the kind "video" exists so far:
//
// A video of Chunks chunks of ChunkDuration seconds each, encoded at
// BitrateBps (a fixed rung, no ladder), so each chunk is
// ChunkDuration·BitrateBps/8 bytes (ChunkBytes, rounded down). The client fetches chunk k on
// a stream of its own (request/response, like the bulk download) one chunk at
// a time, as soon as the previous one has arrived and the playback buffer
// (media downloaded ahead of the playhead) is below BufferTarget; playback
// starts once StartupBuffer of media is downloaded and stalls (a rebuffer)
// whenever the playhead reaches the end of the downloaded media. This is
// the chunk-by-chunk, buffer-driven player of DASH clients and of XLINK's
// short-video app (Zheng et al., "XLINK: QoE-Driven Multi-Path QUIC
// Transport in Large-scale Video Services", SIGCOMM 2021, §2 and §5): the
// client tells the server the play time left in the buffer with each
// request, which sets the chunk stream's deadline hint.
type Workload struct {
	// Kind is the workload: "video".
	Kind string `json:"kind"`
	// ChunkDuration is the media length of one chunk (> 0).
	ChunkDuration Duration `json:"chunk_duration"`
	// BitrateBps is the video's encoding rate, bits/s (> 0).
	BitrateBps float64 `json:"bitrate_bps"`
	// Chunks is the number of chunks in the video (> 0).
	Chunks int `json:"chunks"`
	// StartupBuffer is the media downloaded before playback starts (the
	// first frame), at least one chunk; it is rounded up to whole chunks.
	// 0 means one chunk.
	StartupBuffer Duration `json:"startup_buffer,omitempty"`
	// BufferTarget is the buffer level below which the client requests
	// the next chunk; 0 means two chunks.
	BufferTarget Duration `json:"buffer_target,omitempty"`
}

// ChunkBytes is the size of one chunk, bytes: ChunkDuration·BitrateBps/8,
// rounded down, at least 1.
func (w Workload) ChunkBytes() int64 {
	return max(1, int64(math.Floor(w.ChunkDuration.Seconds()*w.BitrateBps/8)))
}

// TotalBytes is the whole video, bytes.
func (w Workload) TotalBytes() int64 { return w.ChunkBytes() * int64(w.Chunks) }

// StartupChunks is the number of chunks downloaded before playback starts
// (StartupBuffer rounded up to whole chunks, at least 1).
func (w Workload) StartupChunks() int {
	if w.StartupBuffer <= 0 || w.ChunkDuration <= 0 {
		return 1
	}
	n := int((w.StartupBuffer + w.ChunkDuration - 1) / w.ChunkDuration)
	return min(max(n, 1), max(w.Chunks, 1))
}

// Target is BufferTarget with its default applied.
func (w Workload) Target() time.Duration {
	if w.BufferTarget > 0 {
		return w.BufferTarget.D()
	}
	return 2 * w.ChunkDuration.D()
}

// maxChunks bounds Chunks: every chunk is a stream and a record in the
// result.
const maxChunks = 100000

func (c *checker) workload(s Scenario) {
	w := s.Workload
	if w == nil {
		return
	}
	if w.Kind != WorkloadVideo {
		c.fail("workload.kind", "%q is not a workload kind (video)", w.Kind)
		return
	}
	if w.ChunkDuration <= 0 {
		c.fail("workload.chunk_duration", "%v must be > 0", w.ChunkDuration)
	}
	c.rate("workload.bitrate_bps", w.BitrateBps)
	if w.Chunks <= 0 || w.Chunks > maxChunks {
		c.fail("workload.chunks", "%d must be in 1..%d", w.Chunks, maxChunks)
	}
	c.nonNeg("workload.startup_buffer", w.StartupBuffer)
	if w.Chunks > 0 && w.ChunkDuration > 0 && w.StartupBuffer > w.ChunkDuration*Duration(w.Chunks) {
		c.fail("workload.startup_buffer", "%v is longer than the video (%d chunks of %v)", w.StartupBuffer, w.Chunks, w.ChunkDuration)
	}
	c.nonNeg("workload.buffer_target", w.BufferTarget)
	if w.BufferTarget > 0 && w.BufferTarget < w.ChunkDuration {
		c.fail("workload.buffer_target", "%v is below one chunk (%v): the client would never request", w.BufferTarget, w.ChunkDuration)
	}
	if c.err == nil && s.Bytes != w.TotalBytes() {
		c.fail("bytes", "%d must equal the video's size, chunks × chunk bytes = %d", s.Bytes, w.TotalBytes())
	}
	if s.Timed {
		c.fail("timed", "a video workload ends when the last chunk arrives; it cannot be timed")
	}
	if s.Ranges != nil && s.Ranges.Bytes != nil {
		c.fail("ranges.bytes", "the video workload fixes the size")
	}
	if s.Sweep != nil && len(s.Sweep.Bytes) > 0 {
		c.fail("sweep.bytes", "the video workload fixes the size")
	}
}
