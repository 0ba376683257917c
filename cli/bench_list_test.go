package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mpqsched/mpqsched/pkg/scenario"
)

// Issue 22, item 1: each workload kind "is documented in mpquic-bench list,
// with its source". Every kind a library scenario uses has an entry naming
// its source and its metrics, and list prints each heading once.
func TestListDocumentsWorkloads(t *testing.T) {
	var out bytes.Buffer
	if err := listCmd(nil, &out, &out); err != nil {
		t.Fatal(err)
	}
	doc := map[string]string{}
	for _, w := range scenario.WorkloadDocs {
		doc[w.Kind] = w.Doc
	}
	for _, s := range scenario.Library() {
		if s.Workload == nil {
			continue
		}
		d := doc[s.Workload.Kind]
		if !strings.Contains(d, "Source") && !strings.Contains(d, "Web Almanac") || !strings.Contains(d, "Metrics") {
			t.Errorf("%s: workload %q has no entry with its source and metrics", s.Name, s.Workload.Kind)
		}
	}
	for _, h := range []string{"SCHEDULERS", "WORKLOADS", "SCENARIOS"} {
		if n := strings.Count(out.String(), "\n"+h); n != 1 && !(h == "SCHEDULERS" && strings.HasPrefix(out.String(), h)) {
			t.Errorf("heading %s printed %d times", h, n)
		}
	}
	for _, kind := range []string{"video", "web", "rpc"} {
		if !strings.Contains(out.String(), "\n  "+kind+" ") {
			t.Errorf("list does not document %s", kind)
		}
	}
}
