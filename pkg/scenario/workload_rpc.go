package scenario

import "time"

// RPC is the rpc workload: Requests small request/response pairs, one
// every 1/RateHz seconds from the session's open, each on a stream of its
// own (the client sends RequestBytes, the server answers ResponseBytes),
// beside one bulk download of BulkBytes on the same session that starts
// BulkStart after the session's open. The responses go at RFC 9218 urgency
// Urgency (an interactive request above the bulk's default 3, not
// incremental); the bulk stream keeps the session's default (urgency 3,
// incremental). Requests issued before BulkStart measure the latency
// without the bulk transfer, requests issued while it runs the latency
// with it; requests after it has ended are counted in neither.
//
// Source: the interactive-requests-beside-a-bulk-transfer case of issue 22
// (a chat or API call during a large download). The sizes are ours, about
// those of a small JSON API call: a 200-byte request and a 4 KB response.
type RPC struct {
	RateHz        float64  `json:"rate_hz"`        // requests per second (> 0)
	Requests      int      `json:"requests"`       // number of request/response pairs (> 0)
	RequestBytes  int64    `json:"request_bytes"`  // each request, bytes (≥ 32: the header line fits)
	ResponseBytes int64    `json:"response_bytes"` // each response, bytes (> 0)
	BulkBytes     int64    `json:"bulk_bytes"`     // the bulk download, bytes (> 0)
	BulkStart     Duration `json:"bulk_start"`     // when the bulk download is requested, after the session's open (≥ 0)
	Urgency       uint8    `json:"urgency"`        // RFC 9218 urgency of the responses, 0..7
}

// Bounds of the rpc workload: every request is a stream and a record.
const (
	maxRPCs         = 100000
	minRequestBytes = 32
)

// TotalBytes is what the server sends: the bulk transfer and every
// response, bytes.
func (r RPC) TotalBytes() int64 { return r.BulkBytes + int64(r.Requests)*r.ResponseBytes }

// Interval is the time between two requests.
func (r RPC) Interval() time.Duration {
	return time.Duration(float64(time.Second) / r.RateHz)
}

// At is when request k (from 0) is issued, after the session's open.
func (r RPC) At(k int) time.Duration { return time.Duration(k) * r.Interval() }

func (c *checker) rpcWorkload(s Scenario) {
	w := s.Workload
	c.others(w, WorkloadRPC)
	r := w.RPC
	if r == nil {
		c.fail("workload.rpc", "an rpc workload needs its parameters")
		return
	}
	if !(r.RateHz > 0 && r.RateHz <= 1e6) {
		c.fail("workload.rpc.rate_hz", "%v must be in (0, 1e6]", r.RateHz)
	}
	if r.Requests <= 0 || r.Requests > maxRPCs {
		c.fail("workload.rpc.requests", "%d must be in 1..%d", r.Requests, maxRPCs)
	}
	if r.RequestBytes < minRequestBytes || r.RequestBytes > 1<<20 {
		c.fail("workload.rpc.request_bytes", "%d must be in %d..%d", r.RequestBytes, minRequestBytes, 1<<20)
	}
	if r.ResponseBytes <= 0 || r.ResponseBytes > 1<<30 {
		c.fail("workload.rpc.response_bytes", "%d must be in 1..%d", r.ResponseBytes, 1<<30)
	}
	if r.BulkBytes <= 0 || r.BulkBytes > 1<<40 {
		c.fail("workload.rpc.bulk_bytes", "%d must be in 1..%d", r.BulkBytes, int64(1)<<40)
	}
	c.nonNeg("workload.rpc.bulk_start", r.BulkStart)
	if r.Urgency > 7 {
		c.fail("workload.rpc.urgency", "%d must be in 0..7 (RFC 9218)", r.Urgency)
	}
	if c.err == nil {
		if last := r.At(r.Requests - 1); last >= s.Duration.D() {
			c.fail("workload.rpc.requests", "the last request would be issued at %v, not before the duration %v", last, s.Duration)
		}
		if r.BulkStart >= s.Duration {
			c.fail("workload.rpc.bulk_start", "%v is not before the duration %v", r.BulkStart, s.Duration)
		}
	}
}
