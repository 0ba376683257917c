package metrics

// Web is what a browser saw in one run of the web workload (scenario
// workload "web"). A page load runs from its HTML request (the session
// already up) to the last byte of its last object.
type Web struct {
	Pages           int       `json:"pages"`            // page loads completed
	PageLoadSec     []float64 `json:"page_load_s"`      // each load's page load time, in load order, s
	PageLoadMeanSec float64   `json:"page_load_mean_s"` // mean of PageLoadSec, s
	PageLoadP95Sec  float64   `json:"page_load_p95_s"`  // 95th percentile of PageLoadSec (nearest rank), s
	Objects         int       `json:"objects"`          // objects fetched, over all loads
	ObjectTimesSec  []float64 `json:"object_times_s"`   // each object's completion time (request sent to last byte read), load after load, in page order, s
	ObjectP50Sec    float64   `json:"object_p50_s"`     // median object completion time, s
	ObjectP99Sec    float64   `json:"object_p99_s"`     // 99th percentile (nearest rank), s
	HTMLMeanSec     float64   `json:"html_mean_s"`      // mean completion time of the loads' HTML, s
	Redundancy      float64   `json:"redundancy"`       // bytes sent more than once / application bytes delivered
	StartSec        []float64 `json:"page_start_s"`     // when each load began, s since the session opened
}

// RPC is what the client of the rpc workload saw (scenario workload
// "rpc"). A request's latency runs from the time it was due (one every
// 1/rate from the session's open) to the last byte of its response.
// "Idle" requests were due before the bulk download was requested, "loaded"
// ones while it ran (from its request to its last byte).
type RPC struct {
	Requests      int       `json:"requests"`         // requests completed
	LatencySec    []float64 `json:"latency_s"`        // each request's latency, in request order, s
	IdleCount     int       `json:"idle_count"`       // requests due before the bulk download
	IdleP50Sec    float64   `json:"idle_p50_s"`       // their median latency, s
	IdleP99Sec    float64   `json:"idle_p99_s"`       // their 99th percentile latency (nearest rank), s
	LoadedCount   int       `json:"loaded_count"`     // requests due while the bulk download ran
	LoadedP50Sec  float64   `json:"loaded_p50_s"`     // their median latency, s
	LoadedP99Sec  float64   `json:"loaded_p99_s"`     // their 99th percentile latency (nearest rank), s
	BulkStartSec  float64   `json:"bulk_start_s"`     // when the bulk download was requested, s since the session opened
	BulkSec       float64   `json:"bulk_s"`           // its completion time (request to last byte), s
	Redundancy    float64   `json:"redundancy"`       // bytes sent more than once / application bytes delivered
	LoadedLatency []float64 `json:"loaded_latency_s"` // the loaded requests' latencies, s
}
