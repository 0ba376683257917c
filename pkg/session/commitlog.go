package session

import "time"

// commitLog remembers when a path's writer's limiter passed how many bytes:
// readings of the cumulative count taken at the session's views of the path
// (signals.go), at most commitLogLen of them, at least a sixteenth of the
// path's smoothed RTT apart, so that they span two RTTs or more. Guarded by
// Session.mu.
type commitLog struct {
	t    [commitLogLen]time.Time
	c    [commitLogLen]uint64
	n    int // readings held
	head int // index of the newest
}

const commitLogLen = 64

// add records that c bytes had been committed by now, unless the newest
// reading is less than gap old.
func (l *commitLog) add(now time.Time, c uint64, gap time.Duration) {
	if l.n > 0 && now.Sub(l.t[l.head]) < gap {
		return
	}
	l.head = (l.head + 1) % commitLogLen
	l.t[l.head], l.c[l.head] = now, c
	l.n = min(l.n+1, commitLogLen)
}

// before returns the count of the newest reading taken at or before t, and
// false if every reading is later.
func (l *commitLog) before(t time.Time) (uint64, bool) {
	for k := range l.n {
		i := (l.head - k + commitLogLen) % commitLogLen
		if !l.t[i].After(t) {
			return l.c[i], true
		}
	}
	return 0, false
}
