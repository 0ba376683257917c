package edar

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/mpqsched/mpqsched/sched"
)

// Locked serialises an EdAR scheduler so that EndOfFlow can be called from a
// goroutine other than the session's (a transfer's reader that saw the last
// byte, say) without racing Decide. After EndOfFlow it passes on no more
// receiver reports. Decide stays allocation-free.
type Locked struct {
	mu    sync.Mutex
	s     *Scheduler
	ended atomic.Bool
}

// NewLocked wraps s.
func NewLocked(s *Scheduler) *Locked { return &Locked{s: s} }

// Unwrap returns the wrapped scheduler; call its methods only when no
// transfer uses it any more (for Stats, say).
func (l *Locked) Unwrap() *Scheduler { return l.s }

// Name implements sched.Scheduler.
func (l *Locked) Name() string { return l.s.Name() }

// NeedsPerAckSignals implements sched.PerAckSignals as the wrapped
// scheduler does.
func (l *Locked) NeedsPerAckSignals() bool { return l.s.NeedsPerAckSignals() }

// Decide implements sched.Scheduler.
func (l *Locked) Decide(c *sched.ConnInfo, p []sched.PathInfo) sched.Decision {
	l.mu.Lock()
	d := l.s.Decide(c, p)
	l.mu.Unlock()
	return d
}

// QuickAt implements sched.QuickUntil as the wrapped scheduler does. The
// transport serializes it with Decide and the reports; it waits only for
// an EndOfFlow under way on another goroutine.
func (l *Locked) QuickAt(now time.Time) bool {
	l.mu.Lock()
	q := l.s.QuickAt(now)
	l.mu.Unlock()
	return q
}

// ReceiverReport implements sched.ReceiverObserver until EndOfFlow.
func (l *Locked) ReceiverReport(now time.Time, rep sched.ReceiverReport) {
	l.mu.Lock()
	if !l.ended.Load() {
		l.s.ReceiverReport(now, rep)
	}
	l.mu.Unlock()
}

// EndOfFlow ends the flow once (Algorithm 1: the last transition gets
// done = 1); later calls do nothing.
func (l *Locked) EndOfFlow() {
	l.mu.Lock()
	if !l.ended.Load() {
		l.s.EndOfFlow()
		l.ended.Store(true)
	}
	l.mu.Unlock()
}

// Ended reports whether EndOfFlow was called. A transition sink may call it
// to drop what a flow's scheduler records after its end.
func (l *Locked) Ended() bool { return l.ended.Load() }

var (
	_ sched.Scheduler        = (*Locked)(nil)
	_ sched.ReceiverObserver = (*Locked)(nil)
	_ sched.PerAckSignals    = (*Locked)(nil)
)
