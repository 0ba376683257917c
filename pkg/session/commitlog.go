package session

import "time"

// commitLog dates the bytes a path's writer's limiter passed: readings of
// the cumulative count taken at the session's views of the path
// (signals.go), at most commitLogLen of them, at least a sixteenth of the
// path's smoothed RTT apart, so that they span two RTTs or more. Guarded by
// Session.mu; 2 KiB per path.
type commitLog struct {
	t    [commitLogLen]time.Time
	c    [commitLogLen]uint64
	n    int // readings held
	head int // index of the newest
}

const commitLogLen = 64

// add records that c bytes had passed by now, unless the newest reading is
// less than gap old.
func (l *commitLog) add(now time.Time, c uint64, gap time.Duration) {
	if l.n > 0 && now.Sub(l.t[l.head]) < gap {
		return
	}
	l.head = (l.head + 1) % commitLogLen
	l.t[l.head], l.c[l.head] = now, c
	l.n = min(l.n+1, commitLogLen)
}

// at returns the count at t, interpolated linearly between the two readings
// around t (the newest reading's if t is later), and false if every reading
// is later than t.
func (l *commitLog) at(t time.Time) (uint64, bool) {
	later := -1 // the reading after t, if any
	for k := range l.n {
		i := (l.head - k + commitLogLen) % commitLogLen
		if l.t[i].After(t) {
			later = i
			continue
		}
		if later < 0 {
			return l.c[i], true
		}
		f := float64(t.Sub(l.t[i])) / float64(l.t[later].Sub(l.t[i]))
		return l.c[i] + uint64(f*float64(l.c[later]-l.c[i])), true
	}
	return 0, false
}
