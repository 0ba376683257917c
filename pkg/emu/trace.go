package emu

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// TraceMTU is the packet size one trace opportunity stands for, bytes.
const TraceMTU = 1500

// Trace is a Mahimahi packet-delivery trace: each entry is a time, in
// milliseconds from the start of the trace, at which one packet of up to
// TraceMTU bytes may leave the bottleneck queue. The trace repeats with a
// period equal to its last timestamp.
//
// Link model: each packet, whatever its size, consumes one opportunity: it
// departs at the first unused opportunity at or after its arrival.
// Opportunities that find the queue empty are lost, as in Mahimahi. Trace
// time 0 is the Network start.
type Trace struct {
	ms     []uint32      // opportunity times within one period, ms, non-decreasing
	period time.Duration // repetition period: the last timestamp
}

// ParseTrace reads a Mahimahi trace: one non-negative integer millisecond
// timestamp per line, non-decreasing. Blank lines are skipped. The last
// timestamp, the period, must be positive.
func ParseTrace(r io.Reader) (*Trace, error) {
	t := &Trace{}
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" {
			continue
		}
		v, err := strconv.ParseUint(s, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("emu: trace line %d: %q is not a non-negative integer of milliseconds", line, s)
		}
		if k := len(t.ms); k > 0 && uint32(v) < t.ms[k-1] {
			return nil, fmt.Errorf("emu: trace line %d: timestamp %d ms is before the previous one (%d ms)", line, v, t.ms[k-1])
		}
		t.ms = append(t.ms, uint32(v))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("emu: trace line %d: %w", line+1, err)
	}
	if len(t.ms) == 0 {
		return nil, fmt.Errorf("emu: trace has no timestamps")
	}
	last := t.ms[len(t.ms)-1]
	if last == 0 {
		return nil, fmt.Errorf("emu: trace line %d: last timestamp is 0, so the period would be zero", line)
	}
	t.period = time.Duration(last) * time.Millisecond
	return t, nil
}

// LoadTrace reads a Mahimahi trace file.
func LoadTrace(path string) (*Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t, err := ParseTrace(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// Period returns the time after which the trace repeats.
func (t *Trace) Period() time.Duration { return t.period }

// Len returns the number of delivery opportunities per period.
func (t *Trace) Len() int { return len(t.ms) }

// MeanRateBps returns the trace's mean capacity, bits/s: Len opportunities of
// TraceMTU bytes per Period.
func (t *Trace) MeanRateBps() float64 {
	return float64(len(t.ms)) * TraceMTU * 8 / t.period.Seconds()
}

// WriteTo writes the trace in Mahimahi format, one timestamp per line.
func (t *Trace) WriteTo(w io.Writer) (int64, error) {
	bw := bufio.NewWriter(w)
	var n int64
	var b []byte
	for _, v := range t.ms {
		b = strconv.AppendUint(b[:0], uint64(v), 10)
		b = append(b, '\n')
		k, err := bw.Write(b)
		n += int64(k)
		if err != nil {
			return n, err
		}
	}
	return n, bw.Flush()
}

// oppTime returns the time of opportunity k (counted from the Network start
// across repetitions).
func (t *Trace) oppTime(k int64) time.Duration {
	n := int64(len(t.ms))
	return time.Duration(k/n)*t.period + time.Duration(t.ms[k%n])*time.Millisecond
}

// firstAtOrAfter returns the index of the first opportunity at or after at.
func (t *Trace) firstAtOrAfter(at time.Duration) int64 {
	cycle := int64(at / t.period)
	off := at - time.Duration(cycle)*t.period
	i := sort.Search(len(t.ms), func(i int) bool { return time.Duration(t.ms[i])*time.Millisecond >= off })
	return cycle*int64(len(t.ms)) + int64(i)
}

// Kinds of SyntheticTrace.
const (
	TraceConstant = "constant"  // a fixed rate
	TraceLTE      = "lte"       // a mean-reverting random walk of log-capacity, changing every 100 ms
	TraceWiFiWalk = "wifi-walk" // a user walking around an access point, with dropouts to zero
)

// SyntheticTrace generates a trace of duration dur (rounded to whole
// milliseconds, at least 1 ms) whose mean rate is meanBps bits/s (within one
// packet per period), from seed. Kinds:
//
//   - TraceConstant: evenly spaced opportunities.
//   - TraceLTE: capacity exp(x) where x is an AR(1) random walk,
//     x ← 0.95x + 0.3·N(0,1), redrawn every 100 ms (a coefficient of variation
//     near 1, like the Saturator LTE traces).
//   - TraceWiFiWalk: capacity following a 30 s walk away from and back to an
//     access point (between 20% and 100% of peak), with dropouts to zero that
//     start with probability 5% per second and last 0.5–3 s.
//
// It panics on an unknown kind or a non-positive meanBps.
func SyntheticTrace(seed int64, meanBps float64, dur time.Duration, kind string) *Trace {
	if !(meanBps > 0) {
		panic(fmt.Sprintf("emu: SyntheticTrace: meanBps = %v, must be > 0", meanBps))
	}
	nms := max(int(dur/time.Millisecond), 1)
	rng := rand.New(rand.NewPCG(uint64(seed), 0x7472616365)) // "trace"
	c := make([]float64, nms)                                // relative capacity per ms
	switch kind {
	case TraceConstant:
		for i := range c {
			c[i] = 1
		}
	case TraceLTE:
		x := 0.0
		for i := range c {
			if i%100 == 0 {
				x = 0.95*x + 0.3*rng.NormFloat64()
			}
			c[i] = math.Exp(x)
		}
	case TraceWiFiWalk:
		drop := 0
		for i := range c {
			if i%1000 == 0 && drop == 0 && rng.Float64() < 0.05 {
				drop = 500 + rng.IntN(2500)
			}
			if drop > 0 {
				drop--
				continue
			}
			phase := 2 * math.Pi * float64(i) / 30000
			c[i] = (0.2 + 0.8*(0.5+0.5*math.Cos(phase))) * (0.9 + 0.2*rng.Float64())
		}
	default:
		panic(fmt.Sprintf("emu: SyntheticTrace: unknown kind %q (want %q, %q or %q)", kind, TraceConstant, TraceLTE, TraceWiFiWalk))
	}
	sum := 0.0
	for _, v := range c {
		sum += v
	}
	if sum == 0 {
		c[nms-1], sum = 1, 1
	}
	// Packets per ms at rate meanBps, scaled so that the mean is exact.
	scale := meanBps / (TraceMTU * 8 * 1000) * float64(nms) / sum
	t := &Trace{}
	credit := 0.5
	for i, v := range c {
		credit += v * scale
		for ; credit >= 1; credit-- {
			t.ms = append(t.ms, uint32(i+1))
		}
	}
	if len(t.ms) == 0 || t.ms[len(t.ms)-1] != uint32(nms) {
		t.ms = append(t.ms, uint32(nms)) // the last timestamp sets the period
	}
	t.period = time.Duration(nms) * time.Millisecond
	return t
}
