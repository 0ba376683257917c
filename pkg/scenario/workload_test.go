package scenario

import (
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"testing"
)

// A video workload's invalid fields are named by their JSON path (issue 22:
// workload kinds "in the scenario format"; the format's rule: a validation
// error names the offending field).
func TestWorkloadValidation(t *testing.T) {
	base := func() Scenario {
		s, err := Get("video-hetero")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if err := base().Validate(); err != nil {
		t.Fatalf("video-hetero: %v", err)
	}
	cases := []struct {
		field string
		edit  func(*Scenario)
	}{
		{"workload.kind", func(s *Scenario) { s.Workload.Kind = "vod" }},
		{"workload.chunk_duration", func(s *Scenario) { s.Workload.ChunkDuration = 0 }},
		{"workload.bitrate_bps", func(s *Scenario) { s.Workload.BitrateBps = -1 }},
		{"workload.chunks", func(s *Scenario) { s.Workload.Chunks = 0 }},
		{"workload.chunks", func(s *Scenario) { s.Workload.Chunks = maxChunks + 1 }},
		{"workload.startup_buffer", func(s *Scenario) { s.Workload.StartupBuffer = -1 }},
		{"workload.startup_buffer", func(s *Scenario) { s.Workload.StartupBuffer = sec(1000) }},
		{"workload.buffer_target", func(s *Scenario) { s.Workload.BufferTarget = sec(1) }},
		{"bytes", func(s *Scenario) { s.Bytes++ }},
		{"timed", func(s *Scenario) { s.Timed = true }},
		{"ranges.bytes", func(s *Scenario) { s.Ranges = &Ranges{Bytes: &IntRange{1, 2}} }},
	}
	for _, c := range cases {
		s := base()
		c.edit(&s)
		err := s.Validate()
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Path != c.field {
			t.Errorf("want an error naming %s, got %v", c.field, err)
		}
	}
}

// The JSON form reads strictly: durations as strings, unknown workload
// fields rejected.
func TestWorkloadParse(t *testing.T) {
	const ok = `{"name":"v","paths":[{"up":{"rate_bps":1e6,"delay":"10ms"},"down":{"rate_bps":1e6,"delay":"10ms"}}],"bytes":2500,"duration":"10s",
	 "workload":{"kind":"video","chunk_duration":"10ms","bitrate_bps":1e6,"chunks":2,"startup_buffer":"10ms"}}`
	s, err := Parse(strings.NewReader(ok))
	if err != nil {
		t.Fatal(err)
	}
	if w := s.Workload; w == nil || w.ChunkBytes() != 1250 || w.StartupChunks() != 1 || w.Target() != 2*w.ChunkDuration.D() {
		t.Errorf("workload %+v: want 1250-byte chunks, one startup chunk, a 20 ms target", w)
	}
	bad := strings.Replace(ok, `"chunks":2`, `"chunks":2,"chunk_seconds":2`, 1)
	if _, err := Parse(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "chunk_seconds") {
		t.Errorf("unknown field: %v, want an error naming chunk_seconds", err)
	}
}

// The web and rpc workloads' invalid fields are named by their JSON path,
// and a kind's fields are refused on the others.
func TestWebRPCValidation(t *testing.T) {
	get := func(name string) Scenario {
		s, err := Get(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return s
	}
	page := func(s *Scenario) *Page {
		p := MedianPage()
		s.Workload.Page = &p
		return &p
	}
	cases := []struct {
		scn, field string
		edit       func(*Scenario)
	}{
		{"web-hetero", "workload.pages", func(s *Scenario) { s.Workload.Pages = -1 }},
		{"web-hetero", "workload.pages", func(s *Scenario) { s.Workload.Pages = maxPageLoads + 1 }},
		{"web-hetero", "workload.think_time", func(s *Scenario) { s.Workload.ThinkTime = -1 }},
		{"web-hetero", "workload.page.html_bytes", func(s *Scenario) { page(s).HTMLBytes = 0 }},
		{"web-hetero", "workload.page.groups[1].name", func(s *Scenario) { page(s).Groups[1].Name = "css" }},
		{"web-hetero", "workload.page.groups[0].name", func(s *Scenario) { page(s).Groups[0].Name = "a b" }},
		{"web-hetero", "workload.page.groups[2].count", func(s *Scenario) { page(s).Groups[2].Count = 0 }},
		{"web-hetero", "workload.page.groups[3].bytes", func(s *Scenario) { page(s).Groups[3].Bytes = -5 }},
		{"web-hetero", "workload.page.groups[0].after", func(s *Scenario) { page(s).Groups[0].After = "font" }},
		{"web-hetero", "workload.page.groups[4].after", func(s *Scenario) { page(s).Groups[4].After = "nope" }},
		{"web-hetero", "workload.page.groups[1].urgency", func(s *Scenario) { page(s).Groups[1].Urgency = 8 }},
		{"web-hetero", "workload.page.groups", func(s *Scenario) { page(s).Groups[3].Count = maxPageObjects }},
		{"web-hetero", "workload", func(s *Scenario) { s.Workload.Chunks = 3 }},
		{"web-hetero", "workload.rpc", func(s *Scenario) { s.Workload.RPC = &RPC{} }},
		{"web-hetero", "bytes", func(s *Scenario) { s.Bytes-- }},
		{"web-hetero", "timed", func(s *Scenario) { s.Timed = true }},
		{"rpc-hetero", "workload.rpc", func(s *Scenario) { s.Workload.RPC = nil }},
		{"rpc-hetero", "workload.rpc.rate_hz", func(s *Scenario) { s.Workload.RPC.RateHz = 0 }},
		{"rpc-hetero", "workload.rpc.requests", func(s *Scenario) { s.Workload.RPC.Requests = 0 }},
		{"rpc-hetero", "workload.rpc.requests", func(s *Scenario) { s.Workload.RPC.Requests = 2000 }}, // the last at 99.95 s, past the 60 s limit
		{"rpc-hetero", "workload.rpc.request_bytes", func(s *Scenario) { s.Workload.RPC.RequestBytes = 31 }},
		{"rpc-hetero", "workload.rpc.response_bytes", func(s *Scenario) { s.Workload.RPC.ResponseBytes = 0 }},
		{"rpc-hetero", "workload.rpc.bulk_bytes", func(s *Scenario) { s.Workload.RPC.BulkBytes = 0 }},
		{"rpc-hetero", "workload.rpc.bulk_start", func(s *Scenario) { s.Workload.RPC.BulkStart = -1 }},
		{"rpc-hetero", "workload.rpc.bulk_start", func(s *Scenario) { s.Workload.RPC.BulkStart = sec(60) }},
		{"rpc-hetero", "workload.rpc.urgency", func(s *Scenario) { s.Workload.RPC.Urgency = 9 }},
		{"rpc-hetero", "workload", func(s *Scenario) { s.Workload.Pages = 2 }},
		{"video-hetero", "workload.rpc", func(s *Scenario) { s.Workload.RPC = &RPC{RateHz: 1} }},
	}
	for _, c := range cases {
		s := get(c.scn)
		c.edit(&s)
		err := s.Validate()
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Path != c.field {
			t.Errorf("%s: want an error naming %s, got %v", c.scn, c.field, err)
		}
	}
}

// The median page as the Web Almanac 2024 gives it (scenario.MedianPage's
// doc): 18 KB HTML, 78 KB CSS, 613 KB of JavaScript in 24 requests, 1,054 KB
// of images in 18, 131 KB of fonts; 1,894 KB in 50 requests, each type's
// bytes split evenly (rounded down to whole bytes), Chrome's priorities.
func TestMedianPage(t *testing.T) {
	p := MedianPage()
	objs := p.Objects()
	if len(objs) != 50 {
		t.Fatalf("%d objects, want 50", len(objs))
	}
	byType := map[string][2]int64{} // bytes, count
	for _, o := range objs {
		typ := strings.SplitN(o.Name, "-", 2)[0]
		v := byType[typ]
		byType[typ] = [2]int64{v[0] + o.Bytes, v[1] + 1}
	}
	want := map[string][2]int64{"html": {18 * 1024, 1}, "css": {78 * 1024, 4}, "script": {613 * 1024, 24}, "image": {1054 * 1024, 18}, "font": {131 * 1024, 3}}
	for typ, w := range want {
		g := byType[typ]
		if g[1] != w[1] || g[0] > w[0] || g[0] < w[0]-w[1] { // each object rounded down by less than a byte
			t.Errorf("%s: %d bytes in %d objects, want %d in %d", typ, g[0], g[1], w[0], w[1])
		}
	}
	if tb := p.TotalBytes(); tb > 1894*1024 || tb < 1894*1024-50 {
		t.Errorf("page of %d bytes, want 1,894 KB", tb)
	}
	prio := map[string][2]int{} // urgency, incremental
	for _, o := range objs {
		inc := 0
		if o.Incremental {
			inc = 1
		}
		prio[strings.TrimSuffix(o.Name, o.Name[strings.LastIndex(o.Name, "-")+1:])] = [2]int{int(o.Urgency), inc}
	}
	for name, w := range map[string][2]int{"css-": {0, 0}, "script-": {1, 0}, "script-async-": {3, 0}, "image-": {3, 1}, "font-": {0, 0}} {
		if prio[name] != w {
			t.Errorf("%s*: urgency/incremental %v, want %v (Chrome)", name, prio[name], w)
		}
	}
	if objs[0].Name != "html" || objs[0].Urgency != 0 || !objs[0].Incremental {
		t.Errorf("html %+v: want urgency 0, incremental", objs[0])
	}
	if f := objs[len(objs)-1]; f.After != 0 || f.Name != "font-3" {
		t.Errorf("last object %+v: want font-3, after the stylesheets (group 0)", f)
	}
}

// A web and an rpc workload read from JSON, unknown fields refused.
func TestWebRPCParse(t *testing.T) {
	const web = `{"name":"w","paths":[{"up":{"rate_bps":1e6,"delay":"10ms"},"down":{"rate_bps":1e6,"delay":"10ms"}}],"bytes":3000,"duration":"10s",
	 "workload":{"kind":"web","pages":2,"think_time":"1s","page":{"html_bytes":500,"groups":[{"name":"js","count":2,"bytes":500,"urgency":1}]}}}`
	s, err := Parse(strings.NewReader(web))
	if err != nil {
		t.Fatal(err)
	}
	if w := s.Workload; w.PageLoads() != 2 || len(w.WebPage().Objects()) != 3 || w.TotalBytes() != 3000 {
		t.Errorf("web workload %+v: want 2 loads of 3 objects, 3000 bytes", w)
	}
	const rpc = `{"name":"r","paths":[{"up":{"rate_bps":1e6,"delay":"10ms"},"down":{"rate_bps":1e6,"delay":"10ms"}}],"bytes":1004000,"duration":"10s",
	 "workload":{"kind":"rpc","rpc":{"rate_hz":10,"requests":1,"request_bytes":100,"response_bytes":4000,"bulk_bytes":1000000,"bulk_start":"1s","urgency":1}}}`
	if _, err := Parse(strings.NewReader(rpc)); err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(rpc, `"urgency":1`, `"urgency":1,"priority":2`, 1)
	if _, err := Parse(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "priority") {
		t.Errorf("unknown field: %v, want an error naming priority", err)
	}
}

// Issue 22, item 5: "Web, video and rpc each on hetero-2path, edar-handoff's
// paths, a lossy LTE trace path beside Wi-Fi"; "each scenario gets its
// single-path baselines". make bench-workloads runs exactly the multipath
// workload scenarios of the library (WORKLOAD_MULTI), each of which has a
// baseline per path, and its baselines' globs match them.
func TestBenchWorkloads(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	var multi []string
	for _, line := range strings.Split(string(mk), "\n") {
		if v, ok := strings.CutPrefix(line, "WORKLOAD_MULTI      := "); ok {
			multi = strings.Split(v, ",")
		}
	}
	var want []string
	for _, s := range Library() {
		if s.Workload != nil && !slices.Contains(s.Tags, "baseline") {
			want = append(want, s.Name)
		}
	}
	slices.Sort(want)
	got := slices.Sorted(slices.Values(multi))
	if !slices.Equal(got, want) {
		t.Errorf("WORKLOAD_MULTI %v, want the library's multipath workload scenarios %v", got, want)
	}
	sets := map[string]map[string]bool{} // kind → path sets
	for _, n := range multi {
		s, err := Get(n)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range s.Paths {
			b, err := Get(n + "-" + p.Name + "-only")
			if err != nil || len(b.Paths) != 1 || !slices.Contains(b.Tags, "baseline") || b.Workload.Kind != s.Workload.Kind {
				t.Errorf("%s: baseline for %s: %v", n, p.Name, err)
			}
			if ok, _ := path.Match("*-*-only", b.Name); !ok {
				t.Errorf("%s does not match the baselines' glob", b.Name)
			}
		}
		if sets[s.Workload.Kind] == nil {
			sets[s.Workload.Kind] = map[string]bool{}
		}
		sets[s.Workload.Kind][s.Paths[0].Name+"/"+s.Paths[1].Name+fmt.Sprint(s.Paths[1].Down.Handoffs != nil)] = true
	}
	for _, kind := range []string{WorkloadVideo, WorkloadWeb, WorkloadRPC} {
		for _, set := range []string{"fast/slowfalse", "path1/path2true", "wifi/ltefalse"} {
			if !sets[kind][set] {
				t.Errorf("no %s scenario on the %s paths", kind, set)
			}
		}
	}
}
