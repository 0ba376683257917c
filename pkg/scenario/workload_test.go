package scenario

import (
	"errors"
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
