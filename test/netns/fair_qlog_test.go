package netns

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// What the QUIC senders' qlogs say about a run: quic-go's own congestion
// controller (NewReno) on each path connection of the server. The session
// server writes one file per path connection (-qlog DIR); plain quic-go's
// server writes one per connection when QLOGDIR is set
// (qlog.DefaultConnectionTracer in cli's single-path baseline, cli/baseline.go).

// qlogConn is one connection's congestion-control events.
type qlogConn struct {
	file        string
	first, last time.Time    // first and last event
	states      []qlogState  // congestion_state_updated, in order
	recoveries  []time.Time  // entries into recovery: window reductions
	lost        int          // packets declared lost
	spurious    int          // losses found spurious (quic-go may undo a reduction)
	sent        int          // packets sent
	cwnd        []qlogMetric // congestion window and bytes in flight, at each metrics update
}

type qlogState struct {
	t     time.Time
	state string // slow_start, congestion_avoidance, recovery, application_limited
}

type qlogMetric struct {
	t              time.Time
	cwnd, inflight int // bytes
}

// parseQlog reads one JSON-SEQ qlog file as quic-go v0.65 writes it.
func parseQlog(path string) (qlogConn, error) {
	c := qlogConn{file: path}
	b, err := os.ReadFile(path)
	if err != nil {
		return c, err
	}
	recs := bytes.Split(b, []byte{0x1e})
	var ref time.Time
	for _, r := range recs {
		r = bytes.TrimSpace(r)
		if len(r) == 0 {
			continue
		}
		if ref.IsZero() {
			var h struct {
				Trace struct {
					CommonFields struct {
						ReferenceTime struct {
							Wall string `json:"wall_clock_time"`
						} `json:"reference_time"`
					} `json:"common_fields"`
				} `json:"trace"`
			}
			if err := json.Unmarshal(r, &h); err != nil {
				return c, fmt.Errorf("%s: header: %w", path, err)
			}
			if ref, err = time.Parse(time.RFC3339Nano, h.Trace.CommonFields.ReferenceTime.Wall); err != nil {
				return c, fmt.Errorf("%s: reference time: %w", path, err)
			}
			continue
		}
		var ev struct {
			Time float64         `json:"time"` // ms since ref
			Name string          `json:"name"`
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(r, &ev); err != nil {
			break // a record cut short by the process's end
		}
		at := ref.Add(time.Duration(ev.Time * 1e6))
		if c.first.IsZero() {
			c.first = at
		}
		c.last = at
		switch ev.Name {
		case "transport:packet_sent":
			c.sent++
		case "recovery:packet_lost":
			c.lost++
		case "recovery:spurious_loss":
			c.spurious++
		case "recovery:congestion_state_updated":
			var d struct {
				New string `json:"new"`
			}
			if json.Unmarshal(ev.Data, &d) == nil {
				c.states = append(c.states, qlogState{at, d.New})
				if d.New == "recovery" {
					c.recoveries = append(c.recoveries, at)
				}
			}
		case "recovery:metrics_updated":
			var d struct {
				CWND     *int `json:"congestion_window"`
				InFlight int  `json:"bytes_in_flight"`
			}
			if json.Unmarshal(ev.Data, &d) == nil && d.CWND != nil {
				c.cwnd = append(c.cwnd, qlogMetric{at, *d.CWND, d.InFlight})
			}
		}
	}
	if ref.IsZero() {
		return c, fmt.Errorf("%s: no qlog header", path)
	}
	return c, nil
}

// stateShares is the fraction of [from, to) ∩ the connection's life spent
// in each congestion state.
func (c *qlogConn) stateShares(from, to time.Time) map[string]float64 {
	if c.first.After(from) {
		from = c.first
	}
	if c.last.Before(to) {
		to = c.last
	}
	out := map[string]float64{}
	if !to.After(from) {
		return out
	}
	total := to.Sub(from).Seconds()
	for i, s := range c.states {
		end := to
		if i+1 < len(c.states) {
			end = c.states[i+1].t
		}
		a, b := s.t, end
		if a.Before(from) {
			a = from
		}
		if b.After(to) {
			b = to
		}
		if b.After(a) {
			out[s.state] += b.Sub(a).Seconds() / total
		}
	}
	return out
}

// recoveriesIn counts the window reductions in [from, to).
func (c *qlogConn) recoveriesIn(from, to time.Time) int {
	n := 0
	for _, r := range c.recoveries {
		if !r.Before(from) && r.Before(to) {
			n++
		}
	}
	return n
}

// cwndLimited is the fraction of the metrics updates in [from, to) at
// which bytes in flight were within 3 packets (quic-go's maxBurstPackets)
// of the window: quic-go's own test of being window-limited.
func (c *qlogConn) cwndLimited(from, to time.Time) (float64, int) {
	n, lim := 0, 0
	for _, m := range c.cwnd {
		if m.t.Before(from) || !m.t.Before(to) {
			continue
		}
		n++
		if m.cwnd-m.inflight <= 3*1452 { // 1452: quic-go's largest packet on a 1500-byte MTU
			lim++
		}
	}
	if n == 0 {
		return 0, 0
	}
	return float64(lim) / float64(n), n
}

// takeQlogs parses and removes every *.sqlog in dir whose name contains
// role ("server").
func takeQlogs(dir, role string) ([]qlogConn, error) {
	fs, err := filepath.Glob(filepath.Join(dir, "*.sqlog"))
	if err != nil {
		return nil, err
	}
	var out []qlogConn
	var errs []string
	for _, f := range fs {
		if !strings.Contains(filepath.Base(f), role) {
			_ = os.Remove(f)
			continue
		}
		c, err := parseQlog(f)
		_ = os.Remove(f)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		out = append(out, c)
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("qlog: %s", strings.Join(errs, "; "))
	}
	return out, nil
}
