package cli

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/mpqsched/mpqsched/pkg/report"
	"github.com/mpqsched/mpqsched/pkg/scenario"
	"github.com/mpqsched/mpqsched/sched"
)

func reportCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("report", "report DIR", "Rebuilds DIR/summary.csv, DIR/plots/ and DIR/results.md from DIR/results.jsonl\nand prints the path of results.md.", stdout)
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("report takes one results directory, got %d arguments", len(pos))
	}
	md, err := report.Markdown(pos[0])
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, md)
	return nil
}

// workloadDocs documents the scenario workload kinds (scenario.Workload) in
// list, each with its source.
var workloadDocs = []struct{ kind, doc string }{
	{scenario.WorkloadVideo, `{"kind": "video", "chunk_duration": "2s", "bitrate_bps": 4e6, "chunks": 42, "startup_buffer": "2s", "buffer_target": "4s"}: ` +
		"chunks of chunk_duration at a fixed bitrate_bps (chunk_duration·bitrate/8 bytes each; \"bytes\" must equal chunks × that), one stream per chunk, fetched one at a time " +
		"while the playback buffer holds less than buffer_target (default two chunks); playback starts once startup_buffer (default one chunk) has arrived. " +
		"Each request carries the play time left, which the server sets as the chunk stream's deadline hint (ConnInfo.Deadline). " +
		"Metrics (\"video\" in results.jsonl): first frame, rebuffer time and ratio, chunk completion p50/p95/p99, redundancy. " +
		"Source: the buffer-driven chunk player of XLINK (Zheng et al., SIGCOMM 2021, §2, §5) and DASH clients."},
	{scenario.WorkloadWeb, `{"kind": "web", "pages": 10, "think_time": "1s", "page": {"html_bytes": 18432, "groups": [{"name": "css", "count": 4, "bytes": 19968, "urgency": 0}, {"name": "font", "count": 3, "bytes": 44714, "after": "css", "urgency": 0}]}}: ` +
		"a web page fetched over HTTP/3 (pkg/h3) on the session: the HTML (urgency 0, incremental, as Chrome requests a navigation), then each group of objects at once when its dependency has arrived " +
		"(after: an earlier group, default the HTML), every object a request with the group's RFC 9218 priority header, which the server applies to the response stream; " +
		"the page is loaded pages times (default 1) with think_time between loads; bytes must equal the loads' total. Without page: the median desktop page of the HTTP Archive's " +
		"Web Almanac 2024 (Page Weight chapter: 18 KB HTML, 78 KB CSS, 613 KB JavaScript in 24 requests, 1,054 KB images in 18, 131 KB fonts; 4 stylesheets and 3 fonts ours) with Chrome's priorities " +
		"(Blink's TypeToPriority and ShouldLoadIncremental: CSS and fonts u=0, scripts u=1, async scripts u=3, images u=3 incremental). " +
		"Metrics (web in results.jsonl): page load time per load (HTML request to last byte of the last object), every object's completion time (CDF in the report), redundancy."},
	{scenario.WorkloadRPC, `{"kind": "rpc", "rpc": {"rate_hz": 20, "requests": 300, "request_bytes": 200, "response_bytes": 4096, "bulk_bytes": 20971520, "bulk_start": "5s", "urgency": 1}}: ` +
		"request/response pairs, one due every 1/rate_hz from the session's open, each on a stream of its own (the response at RFC 9218 urgency urgency), beside one bulk download of bulk_bytes " +
		"(the session's default priority) requested at bulk_start on the same session; bytes must equal the bulk plus every response. " +
		"Metrics (rpc in results.jsonl): request latency (from when it was due to its response's last byte) p50/p99 without the bulk transfer (requests due before it) and with it " +
		"(due while it runs), the bulk's completion time, redundancy. Source: issue 22's interactive requests beside a large transfer; sizes ours."},
}

// listWidth is the line width list wraps scenario descriptions to, columns.
const listWidth = 100

func listCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("list", "list", "Lists the registered schedulers and the scenario library, with each scenario's\nfull description.", stdout)
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("list takes no arguments, got %q", pos)
	}
	fmt.Fprintln(stdout, "SCHEDULERS")
	for _, n := range sched.Names() {
		fmt.Fprintf(stdout, "  %s\n", n)
	}
	lib := scenario.Library()
	width := 0
	for _, s := range lib {
		width = max(width, len(s.Name))
	}
	indent := strings.Repeat(" ", 2+width+2)
	fmt.Fprintln(stdout, "\nWORKLOADS (a scenario's \"workload\"; without one, a scenario is one download of \"bytes\")")
	for _, w := range workloadDocs {
		lines := wrap(w.doc, max(listWidth-len(indent), 30))
		fmt.Fprintf(stdout, "  %-*s  %s\n", width, w.kind, lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintf(stdout, "%s%s\n", indent, l)
		}
	}
	fmt.Fprintln(stdout, "\nSCENARIOS")
	for _, s := range lib {
		lines := wrap(s.Description, max(listWidth-len(indent), 30))
		if len(lines) == 0 {
			lines = []string{""}
		}
		fmt.Fprintf(stdout, "  %-*s  %s\n", width, s.Name, lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintf(stdout, "%s%s\n", indent, l)
		}
	}
	return nil
}

// wrap splits text into lines of at most width characters at spaces; a word
// longer than width gets a line of its own. No word is dropped or cut.
func wrap(text string, width int) []string {
	var lines, cur []string
	n := 0 // characters in cur, spaces included
	for _, w := range strings.Fields(text) {
		lw := utf8.RuneCountInString(w)
		if len(cur) > 0 && n+1+lw > width {
			lines = append(lines, strings.Join(cur, " "))
			cur, n = cur[:0], 0
		}
		if len(cur) > 0 {
			n++
		}
		cur = append(cur, w)
		n += lw
	}
	if len(cur) > 0 {
		lines = append(lines, strings.Join(cur, " "))
	}
	return lines
}
