package netem

import (
	"slices"
	"strings"
	"testing"
)

func TestParseSpec(t *testing.T) {
	s, err := ParseSpec([]byte(`{
  "name": "asym",
  "paths": [
    {"name": "wifi", "link": {"rate_mbit": 20, "delay_ms": 10, "loss_pct": 0.5}},
    {"name": "lte", "c2s": {"rate_mbit": 2, "delay_ms": 40}, "s2c": {"rate_mbit": 10, "delay_ms": 30, "jitter_ms": 5, "queue_pkts": 100}}
  ]
}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.Prefix != "mpq" || s.Backend != BackendAuto || s.TCPCC != "reno" {
		t.Errorf("defaults: got prefix %q backend %q tcp_cc %q", s.Prefix, s.Backend, s.TCPCC)
	}
	if got, want := s.Paths[0].Up(), (Link{RateMbit: 20, DelayMs: 10, LossPct: 0.5}); got != want {
		t.Errorf("path 1 c2s = %+v, want %+v", got, want)
	}
	if got := s.Paths[1].Down(); got.JitterMs != 5 || got.QueuePkts != 100 || got.RateMbit != 10 {
		t.Errorf("path 2 s2c = %+v", got)
	}
	if got := s.CapacityDownBps(); got != 30e6 {
		t.Errorf("capacity %v bit/s, want 30e6", got)
	}
	if got, want := s.Namespaces(), []string{"mpq-client", "mpq-server", "mpq-r1", "mpq-r2"}; !slices.Equal(got, want) {
		t.Errorf("namespaces %v, want %v", got, want)
	}
}

func TestParseSpecRejects(t *testing.T) {
	for name, js := range map[string]string{
		"no paths":      `{"paths": []}`,
		"unknown field": `{"paths": [{"link": {"rate": 1}}]}`,
		"jitter>delay":  `{"paths": [{"link": {"delay_ms": 1, "jitter_ms": 2}}]}`,
		"loss 100":      `{"paths": [{"link": {"loss_pct": 100}}]}`,
		"bad backend":   `{"backend": "ovs", "paths": [{}]}`,
		"bad prefix":    `{"prefix": "a b", "paths": [{}]}`,
	} {
		if _, err := ParseSpec([]byte(js)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestNS(t *testing.T) {
	s := Presets["two-path"]
	for role, want := range map[string]string{"client": "mpq-client", "server": "mpq-server", "r2": "mpq-r2"} {
		if got, err := s.NS(role); err != nil || got != want {
			t.Errorf("NS(%q) = %q, %v; want %q", role, got, err, want)
		}
	}
	for _, bad := range []string{"r3", "r0", "r1x", "router"} {
		if _, err := s.NS(bad); err == nil {
			t.Errorf("NS(%q) accepted", bad)
		}
	}
}

func TestTBFArgs(t *testing.T) {
	if got := strings.Join(tbfArgs(Link{RateMbit: 20}), " "); got != "tbf rate 20000000bit burst 20000 latency 50ms" {
		t.Errorf("got %q", got)
	}
	if got := strings.Join(tbfArgs(Link{RateMbit: 100, QueuePkts: 10}), " "); got != "tbf rate 100000000bit burst 25000 limit 40140" {
		t.Errorf("got %q", got)
	}
}
