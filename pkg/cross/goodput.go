package cross

import (
	"sync"
	"time"
)

// Goodput is a flow's delivered data over time: Bytes[i] bytes reached the
// client in the interval that ends at T[i] seconds after the Network start
// and began one Step earlier.
type Goodput struct {
	StepSec float64   // sample interval, s
	T       []float64 // end of each interval, s since the Network start
	Bytes   []int64   // bytes delivered to the client in each interval
}

// Total returns the bytes delivered over the whole series.
func (g Goodput) Total() int64 {
	var n int64
	for _, b := range g.Bytes {
		n += b
	}
	return n
}

// MeanBps returns the goodput over [from, to), bits/s, counting the
// intervals that lie wholly inside it; 0 if none does.
func (g Goodput) MeanBps(from, to time.Duration) float64 {
	var bytes int64
	var secs float64
	for i, end := range g.T {
		start := end - g.StepSec
		if start >= from.Seconds()-1e-9 && end <= to.Seconds()+1e-9 {
			bytes += g.Bytes[i]
			secs += g.StepSec
		}
	}
	if secs == 0 {
		return 0
	}
	return float64(bytes) * 8 / secs
}

// recorder counts delivered bytes per interval of step.
type recorder struct {
	step time.Duration
	now  func() time.Duration // time since the Network start

	mu   sync.Mutex
	bins []int64
}

// add records n bytes delivered now.
func (r *recorder) add(n int) {
	if n <= 0 {
		return
	}
	i := int(r.now() / r.step)
	r.mu.Lock()
	for len(r.bins) <= i {
		r.bins = append(r.bins, 0)
	}
	r.bins[i] += int64(n)
	r.mu.Unlock()
}

// goodput returns the series up to the interval holding upTo (at least the
// intervals recorded so far).
func (r *recorder) goodput(upTo time.Duration) Goodput {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := max(len(r.bins), int(upTo/r.step))
	g := Goodput{StepSec: r.step.Seconds(), T: make([]float64, n), Bytes: make([]int64, n)}
	for i := range n {
		g.T[i] = (time.Duration(i+1) * r.step).Seconds()
		if i < len(r.bins) {
			g.Bytes[i] = r.bins[i]
		}
	}
	return g
}
