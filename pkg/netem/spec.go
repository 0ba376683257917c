// Package netem builds real emulated networks out of Linux network
// namespaces: a client namespace, one router namespace per path and a server
// namespace, joined by veth pairs, with every impairment (rate, delay,
// jitter, loss, queue) applied in the router namespaces, per direction.
//
// Two shaping backends exist:
//
//   - "netem": tc netem (delay, jitter, loss) with a tbf child (rate), where
//     the kernel has sch_netem;
//   - "nfq": tbf for the rate, the iptables statistic match for loss and an
//     NFQUEUE rule plus the mpq-delayd daemon for delay, for kernels without
//     sch_netem (such as the project's machines).
//
// "auto" tries netem in a scratch namespace and falls back to nfq.
//
// Addressing (path p counts from 1): the client has 10.10.p.2/24 on its
// interface c<p>; router p has 10.10.p.1/24 (r<p>c) and 10.20.p.1/24 (r<p>s);
// the server has 10.20.p.2/24 on s<p> and its service address 10.20.0.1/32 on
// lo. The client routes by source address (policy table 100+p), so a socket
// bound to 10.10.p.2 uses path p; unbound traffic uses path 1. The server
// routes 10.10.p.0/24 back over path p, so every path is symmetric.
//
// All traffic stays inside the namespaces this package creates.
package netem

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
)

// Link is the impairment of one direction of one path.
type Link struct {
	RateMbit  float64 `json:"rate_mbit"`            // bottleneck rate, Mbit/s (10^6 bit/s), counted on L2 frames; 0 = unshaped
	DelayMs   float64 `json:"delay_ms"`             // one-way propagation delay added, ms
	JitterMs  float64 `json:"jitter_ms,omitempty"`  // uniform jitter half-width, ms; packets may be reordered
	LossPct   float64 `json:"loss_pct,omitempty"`   // random (Bernoulli) loss, percent of packets, applied before the delay
	QueuePkts int     `json:"queue_pkts,omitempty"` // bottleneck queue, packets of 1514 bytes; 0 = 50 ms worth of the rate
}

// Path is one client-router-server path.
type Path struct {
	Name string `json:"name,omitempty"` // free-form label, e.g. "wifi"
	Link *Link  `json:"link,omitempty"` // impairment of both directions, unless c2s or s2c is given
	C2S  *Link  `json:"c2s,omitempty"`  // client→server (upload) impairment; replaces link for that direction
	S2C  *Link  `json:"s2c,omitempty"`  // server→client (download) impairment; replaces link for that direction
}

// Up returns the client→server impairment of the path.
func (p Path) Up() Link { return pick(p.C2S, p.Link) }

// Down returns the server→client impairment of the path.
func (p Path) Down() Link { return pick(p.S2C, p.Link) }

func pick(dir, both *Link) Link {
	switch {
	case dir != nil:
		return *dir
	case both != nil:
		return *both
	}
	return Link{}
}

// Spec is a topology: the JSON format read by mpq-netns up -spec.
type Spec struct {
	Name    string `json:"name,omitempty"`    // scenario name, reported in results
	Prefix  string `json:"prefix,omitempty"`  // namespace name prefix; default "mpq" (namespaces mpq-client, mpq-r1, …, mpq-server)
	Backend string `json:"backend,omitempty"` // "auto" (default), "netem" or "nfq"
	TCPCC   string `json:"tcp_cc,omitempty"`  // TCP congestion control in the client and server namespaces; default "reno"
	Paths   []Path `json:"paths"`             // 1 to 8 paths, in path order
}

// Backends.
const (
	BackendAuto  = "auto"
	BackendNetem = "netem"
	BackendNFQ   = "nfq"
)

// MaxPaths bounds the number of paths of a Spec.
const MaxPaths = 8

// Presets are named specs; the map key is the preset name.
var Presets = map[string]Spec{
	// The root CI topology, lossless.
	"two-path": {Name: "two-path", Paths: []Path{
		{Name: "fast", Link: &Link{RateMbit: 20, DelayMs: 10}},
		{Name: "slow", Link: &Link{RateMbit: 10, DelayMs: 30}},
	}},
	// The root CI topology with 0.5% loss in each direction of each path.
	"two-path-lossy": {Name: "two-path-lossy", Paths: []Path{
		{Name: "fast", Link: &Link{RateMbit: 20, DelayMs: 10, LossPct: 0.5}},
		{Name: "slow", Link: &Link{RateMbit: 10, DelayMs: 30, LossPct: 0.5}},
	}},
	// LLHD (Electronics 2022) scenario #1: 10 Mbit/s, 10 ms, 1% and
	// 5 Mbit/s, 5 ms, 2%.
	"llhd-s1": {Name: "llhd-s1", Paths: []Path{
		{Name: "sf1", Link: &Link{RateMbit: 10, DelayMs: 10, LossPct: 1}},
		{Name: "sf2", Link: &Link{RateMbit: 5, DelayMs: 5, LossPct: 2}},
	}},
}

// PresetNames returns the preset names, sorted.
func PresetNames() []string {
	var n []string
	for k := range Presets {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// LoadSpec reads a Spec from a JSON file and validates it.
func LoadSpec(path string) (Spec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Spec{}, err
	}
	return ParseSpec(b)
}

// ParseSpec decodes and validates a JSON Spec; unknown fields are errors.
func ParseSpec(b []byte) (Spec, error) {
	var s Spec
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.DisallowUnknownFields()
	if err := d.Decode(&s); err != nil {
		return Spec{}, fmt.Errorf("netem: spec: %w", err)
	}
	s.fill()
	return s, s.Validate()
}

// fill sets defaults.
func (s *Spec) fill() {
	if s.Prefix == "" {
		s.Prefix = "mpq"
	}
	if s.Backend == "" {
		s.Backend = BackendAuto
	}
	if s.TCPCC == "" {
		s.TCPCC = "reno"
	}
}

// WithDefaults returns s with the default prefix, backend and TCP CC filled in.
func (s Spec) WithDefaults() Spec { s.fill(); return s }

// Validate reports the first problem of s.
func (s Spec) Validate() error {
	if len(s.Paths) == 0 || len(s.Paths) > MaxPaths {
		return fmt.Errorf("netem: spec needs 1 to %d paths, has %d", MaxPaths, len(s.Paths))
	}
	if s.Prefix != "" && !validName(s.Prefix) {
		return fmt.Errorf("netem: prefix %q: use letters, digits and '-' only, at most 12", s.Prefix)
	}
	switch s.Backend {
	case "", BackendAuto, BackendNetem, BackendNFQ:
	default:
		return fmt.Errorf("netem: backend %q: want auto, netem or nfq", s.Backend)
	}
	if s.TCPCC != "" && !validName(s.TCPCC) {
		return fmt.Errorf("netem: tcp_cc %q", s.TCPCC)
	}
	for i, p := range s.Paths {
		for _, d := range []struct {
			name string
			l    Link
		}{{"c2s", p.Up()}, {"s2c", p.Down()}} {
			l := d.l
			if l.RateMbit < 0 || l.RateMbit > 10000 || l.DelayMs < 0 || l.DelayMs > 10000 ||
				l.JitterMs < 0 || l.JitterMs > l.DelayMs || l.LossPct < 0 || l.LossPct >= 100 || l.QueuePkts < 0 {
				return fmt.Errorf("netem: path %d %s: out of range %+v (need 0<=rate<=10000, 0<=jitter<=delay<=10000, 0<=loss<100, queue>=0)", i+1, d.name, l)
			}
		}
	}
	return nil
}

func validName(s string) bool {
	if len(s) == 0 || len(s) > 12 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// CapacityDownBps is the sum of the server→client rates, bits/s; 0 if any
// path is unshaped.
func (s Spec) CapacityDownBps() float64 {
	var c float64
	for _, p := range s.Paths {
		r := p.Down().RateMbit
		if r == 0 {
			return 0
		}
		c += r * 1e6
	}
	return c
}

var errNoPath = errors.New("netem: no such path")
