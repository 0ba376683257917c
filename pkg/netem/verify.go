package netem

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// VerifyOptions tune Verify. Zero values take the defaults in brackets.
type VerifyOptions struct {
	Pings      int           // pings per path, raised on lossy paths so that about 1.5 MinReplies come back (at most 1000) [40]
	MinReplies int           // ping replies needed to judge a path's delay; fewer is a failure [20]
	RTTAbsTol  time.Duration // allowed |median − wanted| RTT, absolute part [1.5 ms]
	RTTRelTol  float64       // allowed RTT error, fraction of the wanted RTT; the larger of the two applies [0.05]
	RateRelTol float64       // allowed rate error, fraction of the wanted rate [0.05]
	RateDur    time.Duration // duration of each UDP rate probe; the first quarter is not measured [2 s]
	Offer      float64       // probe send rate as a multiple of the wanted rate [1.3]
}

func (v *VerifyOptions) fill() {
	if v.Pings <= 0 {
		v.Pings = 40
	}
	if v.MinReplies <= 0 {
		v.MinReplies = defaultMinReplies
	}
	if v.RTTAbsTol == 0 {
		v.RTTAbsTol = 1500 * time.Microsecond
	}
	if v.RTTRelTol == 0 {
		v.RTTRelTol = 0.05
	}
	if v.RateRelTol == 0 {
		v.RateRelTol = 0.05
	}
	if v.RateDur == 0 {
		v.RateDur = 2 * time.Second
	}
	if v.Offer == 0 {
		v.Offer = 1.3
	}
}

// PathCheck is what Verify measured on one path.
type PathCheck struct {
	Path        int      `json:"path"`               // path number, from 1
	WantRTTms   float64  `json:"want_rtt_ms"`        // both delays plus a ping's serialization both ways, ms
	RTTms       float64  `json:"rtt_ms"`             // mean ping RTT, ms (reported, not judged)
	MinRTTms    float64  `json:"min_rtt_ms"`         // minimum ping RTT, ms (reported, not judged)
	MedianRTTms float64  `json:"median_rtt_ms"`      // median ping RTT, ms: the RTT judged
	Pings       int      `json:"pings"`              // pings sent
	Replies     int      `json:"replies"`            // ping replies received (duplicates not counted)
	PingLossPct float64  `json:"ping_loss_pct"`      // pings lost, percent
	WantUpBps   float64  `json:"want_up_bps"`        // client→server rate asked for, bits/s (0: unshaped, not measured)
	UpBps       float64  `json:"up_bps"`             // client→server rate measured, bits/s (L2)
	WantDownBps float64  `json:"want_down_bps"`      // server→client rate asked for, bits/s
	DownBps     float64  `json:"down_bps"`           // server→client rate measured, bits/s (L2)
	OK          bool     `json:"ok"`                 // every figure within tolerance
	Problems    []string `json:"problems,omitempty"` // what was out of tolerance, with numbers
}

// Verify measures each path's RTT (ping from the client's path address to
// the server) and each direction's rate (a paced UDP probe at Offer times the
// wanted rate, run inside the namespaces with the mpq-netns binary), compares
// them with s and returns the checks and an error naming every figure out of
// tolerance.
func Verify(s Spec, o Options, v VerifyOptions) ([]PathCheck, error) {
	s = s.WithDefaults()
	v.fill()
	tool := o.ToolPath
	if tool == "" {
		var err error
		if tool, err = os.Executable(); err != nil {
			return nil, err
		}
	}
	r := runner{log: o.Log}
	var out []PathCheck
	var bad []string
	for p := 1; p <= len(s.Paths); p++ {
		up, down := s.Paths[p-1].Up(), s.Paths[p-1].Down()
		c := PathCheck{Path: p, WantUpBps: up.RateMbit * 1e6, WantDownBps: down.RateMbit * 1e6, OK: true}
		c.WantRTTms = up.DelayMs + down.DelayMs + serMs(98, up.RateMbit) + serMs(98, down.RateMbit)
		deliver := (1 - up.LossPct/100) * (1 - down.LossPct/100)
		sent, rtts, err := ping(r, s.ClientNS(), ClientAddr(p), ServerAddr, pingCount(v.Pings, v.MinReplies, deliver))
		if err != nil {
			c.Problems = append(c.Problems, err.Error())
		} else {
			c.fillRTT(sent, rtts)
			tol := math.Max(float64(v.RTTAbsTol)/1e6, v.RTTRelTol*c.WantRTTms)
			j := judgeRTT(rtts, sent, c.WantRTTms, up.JitterMs+down.JitterMs, tol, v.MinReplies)
			if j.Problem != "" {
				c.Problems = append(c.Problems, j.Problem)
			}
		}
		port := 5300 + 2*p
		if c.WantUpBps > 0 {
			c.UpBps, err = probe(tool, s.ServerNS(), ServerAddr, port, s.ClientNS(), ClientAddr(p), c.WantUpBps*v.Offer, v.RateDur)
			c.Problems = append(c.Problems, rateProblem("up", c.UpBps, c.WantUpBps, v.RateRelTol, err)...)
		}
		if c.WantDownBps > 0 {
			c.DownBps, err = probe(tool, s.ClientNS(), ClientAddr(p), port+1, s.ServerNS(), ServerAddr, c.WantDownBps*v.Offer, v.RateDur)
			c.Problems = append(c.Problems, rateProblem("down", c.DownBps, c.WantDownBps, v.RateRelTol, err)...)
		}
		if len(c.Problems) > 0 {
			c.OK = false
			for _, pr := range c.Problems {
				bad = append(bad, fmt.Sprintf("path %d: %s", p, pr))
			}
		}
		out = append(out, c)
	}
	if len(bad) > 0 {
		return out, errors.New("netem: verify failed:\n  " + strings.Join(bad, "\n  "))
	}
	return out, nil
}

// serMs is the serialization time of n bytes at rateMbit, ms (0 if unshaped).
func serMs(n int, rateMbit float64) float64 {
	if rateMbit == 0 {
		return 0
	}
	return float64(n*8) / (rateMbit * 1e6) * 1e3
}

func rateProblem(dir string, got, want, tol float64, err error) []string {
	if err != nil {
		return []string{fmt.Sprintf("%s rate probe: %v", dir, err)}
	}
	if math.Abs(got-want) > tol*want {
		return []string{fmt.Sprintf("%s rate %.3f Mbit/s, want %.3f ± %.0f%%", dir, got/1e6, want/1e6, tol*100)}
	}
	return nil
}

// ping sends n pings from address from to address to inside namespace ns
// and returns the pings sent and the RTT of each reply, ms.
func ping(r runner, ns, from, to string, n int) (sent int, rtts []float64, err error) {
	out, err := r.ns(ns, "ping", "-n", "-c", strconv.Itoa(n), "-i", "0.02", "-W", "2", "-I", from, to)
	sent, rtts, ok := parsePing(out)
	if !ok || sent == 0 {
		if err == nil {
			err = fmt.Errorf("unparsable ping output: %s", out)
		}
		return 0, nil, fmt.Errorf("ping %s→%s: %w", from, to, err)
	}
	// ping exits 1 when some replies are missing: judged by the counts.
	return sent, rtts, nil
}

// fillRTT records the mean, minimum, median and loss of the replies rtts
// (ms) to sent pings.
func (c *PathCheck) fillRTT(sent int, rtts []float64) {
	c.Pings, c.Replies = sent, len(rtts)
	c.PingLossPct = 100 * float64(sent-len(rtts)) / float64(sent)
	if len(rtts) == 0 {
		return
	}
	s := slices.Sorted(slices.Values(rtts))
	sum := 0.0
	for _, x := range s {
		sum += x
	}
	c.RTTms, c.MinRTTms, c.MedianRTTms = sum/float64(len(s)), s[0], median(s)
}

// probe runs a UDP receiver in rxNS on rxAddr:port and a paced sender in txNS
// from txAddr, and returns the received L2 rate in bits/s.
func probe(tool, rxNS, rxAddr string, port int, txNS, txAddr string, offerBps float64, dur time.Duration) (float64, error) {
	addr := fmt.Sprintf("%s:%d", rxAddr, port)
	// Both ends run SCHED_FIFO where chrt exists: on a loaded machine a
	// descheduled sender would leave the link idle and read as a slow link.
	rt := []string{}
	if _, err := exec.LookPath("chrt"); err == nil {
		rt = []string{"chrt", "-f", "30"}
	}
	rx := exec.Command("ip", slices.Concat([]string{"netns", "exec", rxNS}, rt, []string{tool, "_udprecv", "-addr", addr, "-idle", "500ms", "-max", (dur + 5*time.Second).String(), "-skip", (dur / 4).String()})...)
	stdout, err := rx.StdoutPipe()
	if err != nil {
		return 0, err
	}
	var stderr strings.Builder
	rx.Stderr = &stderr
	if err := rx.Start(); err != nil {
		return 0, err
	}
	defer func() { _ = rx.Process.Kill(); _ = rx.Wait() }()
	br := bufio.NewReader(stdout)
	if line, err := br.ReadString('\n'); err != nil || strings.TrimSpace(line) != "ready" {
		return 0, fmt.Errorf("receiver in %s did not start: %q %v %s", rxNS, line, err, stderr.String())
	}
	tx := exec.Command("ip", slices.Concat([]string{"netns", "exec", txNS}, rt, []string{tool, "_udpsend", "-from", txAddr, "-to", addr,
		"-rate", strconv.FormatFloat(offerBps, 'f', 0, 64), "-size", "1400", "-for", dur.String()})...)
	if b, err := tx.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("sender in %s: %v: %s", txNS, err, b)
	}
	b, err := io.ReadAll(br)
	if err != nil {
		return 0, err
	}
	var res RateResult
	if err := json.Unmarshal(b, &res); err != nil {
		return 0, fmt.Errorf("receiver in %s: %v: %q %s", rxNS, err, b, stderr.String())
	}
	return res.WireBps, nil
}

// FormatChecks renders checks as a fixed-width table.
func FormatChecks(cs []PathCheck) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-4s %9s %9s %9s %9s %7s %11s %11s %11s %11s %s\n", "path", "want_rtt", "rtt_med", "rtt_min", "rtt_avg", "ploss%", "want_up", "up", "want_down", "down", "ok")
	for _, c := range cs {
		fmt.Fprintf(&b, "%-4d %7.2fms %7.2fms %7.2fms %7.2fms %7.1f %9.3fM %9.3fM %9.3fM %9.3fM %v\n", c.Path, c.WantRTTms, c.MedianRTTms, c.MinRTTms, c.RTTms, c.PingLossPct,
			c.WantUpBps/1e6, c.UpBps/1e6, c.WantDownBps/1e6, c.DownBps/1e6, c.OK)
	}
	return b.String()
}
