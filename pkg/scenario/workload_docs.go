package scenario

// WorkloadDoc documents one workload kind.
type WorkloadDoc struct {
	Kind string // Workload.Kind: WorkloadVideo, WorkloadWeb or WorkloadRPC
	// Doc is an example of the workload's JSON, what it does, its metrics
	// and its source, in one paragraph.
	Doc string
}

// WorkloadDocs document the workload kinds (Workload), as
// `mpquic-bench list` prints them, each with its source.
var WorkloadDocs = []WorkloadDoc{
	{WorkloadVideo, `{"kind": "video", "chunk_duration": "2s", "bitrate_bps": 4e6, "chunks": 42, "startup_buffer": "2s", "buffer_target": "4s"}: ` +
		"chunks of chunk_duration at a fixed bitrate_bps (chunk_duration·bitrate/8 bytes each; \"bytes\" must equal chunks × that), one stream per chunk, fetched one at a time " +
		"while the playback buffer holds less than buffer_target (default two chunks); playback starts once startup_buffer (default one chunk) has arrived. " +
		"Each request carries the play time left, which the server sets as the chunk stream's deadline hint (ConnInfo.Deadline). " +
		"Metrics (\"video\" in results.jsonl): first frame, rebuffer time and ratio, chunk completion p50/p95/p99, redundancy. " +
		"Source: the buffer-driven chunk player of XLINK (Zheng et al., SIGCOMM 2021, §2, §5) and DASH clients."},
	{WorkloadWeb, `{"kind": "web", "pages": 10, "think_time": "1s", "page": {"html_bytes": 18432, "groups": [{"name": "css", "count": 4, "bytes": 19968, "urgency": 0}, {"name": "font", "count": 3, "bytes": 44714, "after": "css", "urgency": 0}]}}: ` +
		"a web page fetched over HTTP/3 (pkg/h3) on the session: the HTML (urgency 0, incremental, as Chrome requests a navigation), then each group of objects at once when its dependency has arrived " +
		"(after: an earlier group, default the HTML), every object a request with the group's RFC 9218 priority header, which the server applies to the response stream; " +
		"the page is loaded pages times (default 1) with think_time between loads; bytes must equal the loads' total. Without page: the median desktop page of the HTTP Archive's " +
		"Web Almanac 2024 (Page Weight chapter: 18 KB HTML, 78 KB CSS, 613 KB JavaScript in 24 requests, 1,054 KB images in 18, 131 KB fonts; 4 stylesheets and 3 fonts ours) with Chrome's priorities " +
		"(Blink's TypeToPriority and ShouldLoadIncremental: CSS and fonts u=0, scripts u=1, async scripts u=3, images u=3 incremental). " +
		"Metrics (web in results.jsonl): page load time per load (HTML request to last byte of the last object), every object's completion time (CDF in the report), redundancy."},
	{WorkloadRPC, `{"kind": "rpc", "rpc": {"rate_hz": 20, "requests": 300, "request_bytes": 200, "response_bytes": 4096, "bulk_bytes": 20971520, "bulk_start": "5s", "urgency": 1}}: ` +
		"request/response pairs, one due every 1/rate_hz from the session's open, each on a stream of its own (the response at RFC 9218 urgency urgency), beside one bulk download of bulk_bytes " +
		"(the session's default priority) requested at bulk_start on the same session; bytes must equal the bulk plus every response. " +
		"Metrics (rpc in results.jsonl): request latency (from when it was due to its response's last byte) p50/p99 without the bulk transfer (requests due before it) and with it " +
		"(due while it runs), the bulk's completion time, redundancy. Source: issue 22's interactive requests beside a large transfer; sizes ours."},
}
