package netem

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The delay check, separated from the commands so that it can be tested
// without root. mininet/linkcheck.py applies the same rule.
//
// Why not the mean: a few pings that wait behind a descheduled delay daemon
// or a busy CPU raise the mean by milliseconds (an LLHD router chain read a
// 21.98 ms mean for a 20.16 ms path whose fastest ping took 20.84 ms).
// Queueing and scheduling only ever add delay, so without jitter the
// fastest of enough replies is the one that saw the configured delay and
// nothing else: the minimum is judged. With jitter (uniform in
// [delay−jitter, delay+jitter] per direction) the minimum sits below the
// configured RTT by up to the two half-widths, while the RTT's distribution
// stays symmetric about it: the median is judged, with an allowance for its
// sampling error. A missing delay, a doubled one or a delay on one direction
// only moves every reply, so the minimum and the median alike.

// Defaults of the delay check.
const (
	defaultMinReplies = 20   // replies needed before the delay is judged
	maxPings          = 1000 // cap on pings per path however lossy the path (20 s at 20 ms spacing)
	pingSlack         = 1.5  // pings sent per reply needed, beyond the expected loss
)

// rttJudgement is the outcome of judgeRTT.
type rttJudgement struct {
	Stat    string  // "min" or "median": the statistic judged
	GotMs   float64 // its value, ms
	TolMs   float64 // allowed |GotMs − wanted RTT|, ms
	Problem string  // "" if within tolerance, else what is wrong, with numbers
}

// judgeRTT judges the ping RTTs rtts (ms, one per reply, any order) of sent
// pings against the wanted RTT wantMs. jitterMs is the sum of both
// directions' jitter half-widths (ms), tolMs the allowed error (ms), and
// minReplies the replies needed to judge at all. It never panics.
func judgeRTT(rtts []float64, sent int, wantMs, jitterMs, tolMs float64, minReplies int) rttJudgement {
	j := rttJudgement{Stat: "min", TolMs: tolMs}
	if jitterMs > 0 {
		j.Stat = "median"
	}
	if len(rtts) < minReplies || len(rtts) == 0 {
		j.Problem = fmt.Sprintf("only %d of %d pings answered, need %d to judge the delay", len(rtts), sent, minReplies)
		return j
	}
	s := slices.Clone(rtts)
	slices.Sort(s)
	if jitterMs > 0 {
		j.GotMs = median(s)
		// The sample median's standard error is about 1.25 σ/√n; σ of the
		// sum of two uniform jitters is at most (j1+j2)/√3. Three of them.
		j.TolMs += 3 * 1.25 * jitterMs / math.Sqrt(3) / math.Sqrt(float64(len(s)))
	} else {
		j.GotMs = s[0]
	}
	if math.IsNaN(j.GotMs) || math.Abs(j.GotMs-wantMs) > j.TolMs {
		j.Problem = fmt.Sprintf("RTT %s %.2f ms of %d replies, want %.2f ± %.2f ms", j.Stat, j.GotMs, len(s), wantMs, j.TolMs)
	}
	return j
}

// median of sorted values (at least one).
func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// pingCount is the number of pings to send so that about pingSlack times
// minReplies come back when a fraction deliver (0..1] of the round trips
// survives the path's loss; at least base, at most maxPings.
func pingCount(base, minReplies int, deliver float64) int {
	need := float64(maxPings)
	if deliver > 0 {
		need = math.Min(math.Ceil(pingSlack*float64(minReplies)/deliver), maxPings)
	}
	return max(base, int(need))
}

var (
	pingReply = regexp.MustCompile(`^\d+ bytes from .*time=([0-9.]+) ms`)
	pingSent  = regexp.MustCompile(`(\d+) packets transmitted`)
)

// parsePing returns the pings sent and the RTT of each reply (ms) from the
// output of iputils ping without -q. Duplicate replies are skipped. iputils
// prints a reply's time truncated to 0.1 ms between 10 and 100 ms and to
// 1 ms above. ok is false if there is no summary line.
func parsePing(out string) (sent int, rtts []float64, ok bool) {
	m := pingSent.FindStringSubmatch(out)
	if m == nil {
		return 0, nil, false
	}
	sent, _ = strconv.Atoi(m[1])
	for _, line := range strings.Split(out, "\n") {
		r := pingReply.FindStringSubmatch(line)
		if r == nil || strings.Contains(line, "(DUP!)") {
			continue
		}
		if v, err := strconv.ParseFloat(r[1], 64); err == nil && !math.IsNaN(v) && !math.IsInf(v, 0) {
			rtts = append(rtts, v)
		}
	}
	return sent, rtts, true
}
