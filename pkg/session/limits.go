package session

import (
	"fmt"
	"time"
)

// rateCounter counts events per one-second window.
type rateCounter struct {
	start time.Time
	n     int
}

// add counts an event at now and returns the count of its window.
func (r *rateCounter) add(now time.Time) int {
	if now.Sub(r.start) >= time.Second {
		r.start, r.n = now, 0
	}
	r.n++
	return r.n
}

// limitLogInterval is the least time between two log lines about one kind
// of limit.
const limitLogInterval = 10 * time.Second

// limitLog logs limits reached at most once per limitLogInterval and kind,
// with how many more were reached in between.
type limitLog struct {
	logf func(string, ...any)
	last map[string]time.Time
	more map[string]int
}

func (g *limitLog) event(now time.Time, kind, why string) {
	if g.logf == nil {
		return
	}
	if g.last == nil {
		g.last, g.more = map[string]time.Time{}, map[string]int{}
	}
	if t, ok := g.last[kind]; ok && now.Sub(t) < limitLogInterval {
		g.more[kind]++
		return
	}
	extra := ""
	if n := g.more[kind]; n > 0 {
		extra = fmt.Sprintf(" (and %d more since the last report)", n)
	}
	g.last[kind], g.more[kind] = now, 0
	g.logf("session: refused a connection: limit of %s reached%s", why, extra)
}
