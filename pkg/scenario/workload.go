package scenario

import (
	"math"
	"time"
)

// The workload kinds (see Workload).
const (
	WorkloadVideo = "video" // video on demand: chunks with playback deadlines
	WorkloadWeb   = "web"   // a web page over HTTP/3 with RFC 9218 priorities (workload_web.go)
	WorkloadRPC   = "rpc"   // request/response pairs beside a bulk transfer (workload_rpc.go)
)

// Workload is what the application runs over the session instead of one
// bulk download, by Kind. The fields of a kind are zero for the others
// (validation refuses them).
//
// "web" and "rpc": see Page and RPC.
//
// "video": a video of Chunks chunks of ChunkDuration seconds each, encoded at
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
	// Kind is the workload: "video", "web" or "rpc".
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

	// Page is the web workload's page; nil means MedianPage().
	Page *Page `json:"page,omitempty"`
	// Pages is how many times the web workload loads the page, one load
	// after another on the same session (no cache); 0 means once.
	Pages int `json:"pages,omitempty"`
	// ThinkTime is the web workload's pause between one page load's end and
	// the next load's start.
	ThinkTime Duration `json:"think_time,omitempty"`

	// RPC is the rpc workload's parameters (required for kind "rpc").
	RPC *RPC `json:"rpc,omitempty"`
}

// ChunkBytes is the size of one video chunk, bytes:
// ChunkDuration·BitrateBps/8, rounded down, at least 1.
func (w Workload) ChunkBytes() int64 {
	return max(1, int64(math.Floor(w.ChunkDuration.Seconds()*w.BitrateBps/8)))
}

// TotalBytes is the application data the workload moves from the server to
// the client, bytes: the whole video; every page load's objects; the bulk
// transfer and every RPC response. A scenario's Bytes must equal it.
func (w Workload) TotalBytes() int64 {
	switch w.Kind {
	case WorkloadWeb:
		return int64(w.PageLoads()) * w.WebPage().TotalBytes()
	case WorkloadRPC:
		if w.RPC == nil {
			return 0
		}
		return w.RPC.TotalBytes()
	}
	return w.ChunkBytes() * int64(w.Chunks)
}

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
	switch w.Kind {
	case WorkloadVideo:
		c.videoWorkload(s)
	case WorkloadWeb:
		c.webWorkload(s)
	case WorkloadRPC:
		c.rpcWorkload(s)
	default:
		c.fail("workload.kind", "%q is not a workload kind (video, web, rpc)", w.Kind)
		return
	}
	if c.err == nil && s.Bytes != w.TotalBytes() {
		c.fail("bytes", "%d must equal the workload's size, %d", s.Bytes, w.TotalBytes())
	}
	if s.Timed {
		c.fail("timed", "a %s workload ends when its last byte arrives; it cannot be timed", w.Kind)
	}
	if s.Ranges != nil && s.Ranges.Bytes != nil {
		c.fail("ranges.bytes", "the %s workload fixes the size", w.Kind)
	}
	if s.Sweep != nil && len(s.Sweep.Bytes) > 0 {
		c.fail("sweep.bytes", "the %s workload fixes the size", w.Kind)
	}
}

// others refuses the fields of the kinds other than kind.
func (c *checker) others(w *Workload, kind string) {
	if kind != WorkloadVideo && (w.ChunkDuration != 0 || w.BitrateBps != 0 || w.Chunks != 0 || w.StartupBuffer != 0 || w.BufferTarget != 0) {
		c.fail("workload", "a %s workload has no video fields (chunk_duration, bitrate_bps, chunks, startup_buffer, buffer_target)", kind)
	}
	if kind != WorkloadWeb && (w.Page != nil || w.Pages != 0 || w.ThinkTime != 0) {
		c.fail("workload", "a %s workload has no web fields (page, pages, think_time)", kind)
	}
	if kind != WorkloadRPC && w.RPC != nil {
		c.fail("workload.rpc", "a %s workload has no rpc parameters", kind)
	}
}

func (c *checker) videoWorkload(s Scenario) {
	w := s.Workload
	c.others(w, WorkloadVideo)
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
}
