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
// The median RTT of at least 20 replies is judged. Not the mean: a few
// pings that wait behind a descheduled delay daemon or a busy CPU raise it
// by milliseconds (an LLHD router chain read a 21.98 ms mean for a 20.16 ms
// path whose fastest ping took 20.84 ms). Not the minimum either: mpq-delayd
// releases each packet up to 1 ms before its due time to make up for late
// timer wake-ups, so that the mean delay matches, and under CPU load one
// ping in forty came back 1.7 ms faster than a two-hop path's configured
// RTT. The median ignores both tails as long as fewer than half the replies
// sit in them. Jitter (uniform in [delay−jitter, delay+jitter] per
// direction) leaves the distribution symmetric about the configured RTT;
// the tolerance grows by three standard errors of the sample median. A
// missing delay, a doubled one or a delay on one direction only moves every
// reply, so the median too.

// Defaults of the delay check.
const (
	defaultMinReplies = 20   // replies needed before the delay is judged
	maxPings          = 1000 // cap on pings per path however lossy the path (20 s at 20 ms spacing)
	pingSlack         = 1.5  // pings sent per reply needed, beyond the expected loss
)

// rttJudgement is the outcome of judgeRTT.
type rttJudgement struct {
	MedianMs float64 // median RTT of the replies, ms (NaN if too few)
	TolMs    float64 // allowed |MedianMs − wanted RTT|, ms
	Problem  string  // "" if within tolerance, else what is wrong, with numbers
}

// judgeRTT judges the ping RTTs rtts (ms, one per reply, any order) of sent
// pings against the wanted RTT wantMs. jitterMs is the sum of both
// directions' jitter half-widths (ms), tolMs the allowed error (ms), and
// minReplies the replies needed to judge at all. It never panics.
func judgeRTT(rtts []float64, sent int, wantMs, jitterMs, tolMs float64, minReplies int) rttJudgement {
	j := rttJudgement{MedianMs: math.NaN(), TolMs: tolMs}
	if len(rtts) < minReplies || len(rtts) == 0 {
		j.Problem = fmt.Sprintf("only %d of %d pings answered, need %d to judge the delay", len(rtts), sent, minReplies)
		return j
	}
	if slices.ContainsFunc(rtts, func(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) }) {
		j.Problem = "non-finite RTT among the replies"
		return j
	}
	s := slices.Sorted(slices.Values(rtts))
	j.MedianMs = median(s)
	if jitterMs > 0 {
		// The sample median's standard error is about 1.25 σ/√n; σ of the
		// sum of two uniform jitters is at most (j1+j2)/√3.
		j.TolMs += 3 * 1.25 * jitterMs / math.Sqrt(3) / math.Sqrt(float64(len(s)))
	}
	if math.Abs(j.MedianMs-wantMs) > j.TolMs {
		j.Problem = fmt.Sprintf("RTT median %.2f ms of %d replies, want %.2f ± %.2f ms", j.MedianMs, len(s), wantMs, j.TolMs)
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
