package cli

import (
	"fmt"
	"sync"
	"time"
)

// defaultLogInterval is rateLog's interval when its Interval is zero, and
// -limit-log-interval's default.
const defaultLogInterval = 10 * time.Second

// rateLog logs events of a server limit (a timeout hit, a session refused)
// at most once per Interval for each kind, so that a flood of hostile
// requests cannot flood the log. The first event of a kind is logged at
// once; later events within Interval of the last line are counted, and the
// next line logged for the kind says how many were left out. Suppressed
// events after the last line are only reported with the next event of the
// kind. A nil *rateLog or one with a nil Logf drops everything. Safe for
// concurrent use.
type rateLog struct {
	Interval time.Duration                    // shortest time between two lines of one kind; 0: defaultLogInterval
	Logf     func(format string, args ...any) // where the lines go

	mu    sync.Mutex
	kinds map[string]*rateKind
}

// rateKind is the state of one kind of event.
type rateKind struct {
	last       time.Time // when the kind was last logged
	suppressed int       // events since then that were not logged
}

// Event records one event of kind at now and logs "kind: msg" unless a
// line of this kind was logged less than Interval before now. It reports
// whether a line was logged.
func (l *rateLog) Event(now time.Time, kind, msg string) bool {
	if l == nil || l.Logf == nil {
		return false
	}
	iv := l.Interval
	if iv <= 0 {
		iv = defaultLogInterval
	}
	l.mu.Lock()
	if l.kinds == nil {
		l.kinds = map[string]*rateKind{}
	}
	k := l.kinds[kind]
	if k == nil {
		k = &rateKind{}
		l.kinds[kind] = k
	}
	if !k.last.IsZero() && now.Sub(k.last) < iv {
		k.suppressed++
		l.mu.Unlock()
		return false
	}
	n := k.suppressed
	k.last, k.suppressed = now, 0
	l.mu.Unlock()
	if n > 0 {
		msg = fmt.Sprintf("%s (and %d more since the last report)", msg, n)
	}
	l.Logf("%s: %s", kind, msg)
	return true
}
