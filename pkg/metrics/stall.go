package metrics

import (
	"io"
	"sync"
	"time"
)

// StallTimer measures a download's longest stall: the longest interval in
// which the receiver got no new in-order byte while it still waited for
// some, from Begin (the request) to End (the last byte), as Result's
// MaxStallSec. Times are passed in; the zero value is ready to use and safe
// for concurrent use.
type StallTimer struct {
	mu   sync.Mutex
	on   bool
	last time.Time     // the request or the latest delivery
	max  time.Duration // longest interval seen so far
}

// Begin starts timing at now (the request goes out). A second Begin
// restarts the current interval but keeps the longest one seen.
func (s *StallTimer) Begin(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.on, s.last = true, now
}

// Delivered records new in-order bytes at now. Before Begin, and for a
// now earlier than the last event, it closes no interval.
func (s *StallTimer) Delivered(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.on {
		return
	}
	if d := now.Sub(s.last); d > s.max {
		s.max = d
	}
	if now.After(s.last) {
		s.last = now
	}
}

// End closes the last interval at now (the last byte arrived or the
// download failed) and stops timing.
func (s *StallTimer) End(now time.Time) {
	s.Delivered(now)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.on = false
}

// Max returns the longest stall so far.
func (s *StallTimer) Max() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.max
}

// StallWriter passes writes on to W and tells T of each one that carries
// bytes, at the time Now gives (time.Now if nil): the writer a download
// copies its in-order bytes into.
type StallWriter struct {
	W   io.Writer
	T   *StallTimer
	Now func() time.Time
}

// Write writes p to W and records a delivery if p is not empty.
func (w StallWriter) Write(p []byte) (int, error) {
	if len(p) > 0 && w.T != nil {
		now := time.Now
		if w.Now != nil {
			now = w.Now
		}
		w.T.Delivered(now())
	}
	return w.W.Write(p)
}
