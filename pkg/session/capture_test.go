package session

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/pkg/wire"
	"github.com/mpqsched/mpqsched/sched"
)

// sent is one thing a session handed to quic-go (see sendTap).
type sent struct {
	at   time.Time
	s    *Session
	path sched.PathID
	kind sendKind
	typ  byte // datagram: its wire type (wire.TypeAck, ...); segments: wire.TypeSegment
	segs int  // segments: frames in the batch
	n    int  // bytes
}

func (x sent) String() string {
	switch x.kind {
	case sentDatagram:
		return fmt.Sprintf("%s path %d: datagram %s (%d bytes)", x.at.Format("15:04:05.000000"), x.path, typeName(x.typ), x.n)
	}
	return fmt.Sprintf("%s path %d: %d segments (%d bytes)", x.at.Format("15:04:05.000000"), x.path, x.segs, x.n)
}

// typeName names a datagram type.
func typeName(t byte) string {
	switch t {
	case wire.TypeAck:
		return "Ack"
	case wire.TypeAckReq:
		return "AckReq"
	case wire.TypePing:
		return "Ping"
	case wire.TypeReport:
		return "Report"
	case wire.TypeSilent:
		return "Silent"
	case wire.TypeSegment:
		return "Segment"
	}
	return fmt.Sprintf("type %#x", t)
}

// capture records what every session sends and when its loops wake, from
// startCapture until the test ends (it installs sendTap and loopWoke; tests
// that use it must not run in parallel). Inside a synctest bubble the
// timestamps are virtual.
type capture struct {
	mu    sync.Mutex
	sends []sent
	wakes map[*Session]*wakeCount
}

// wakeCount counts a session's loop wake-ups: [loop][reason].
type wakeCount [3][2]int

func (w wakeCount) String() string {
	return fmt.Sprintf("send pass %d poked + %d timer, ack pass %d poked + %d timer, decider %d poked + %d timer",
		w[loopSend][wokePoked], w[loopSend][wokeTimer], w[loopAck][wokePoked], w[loopAck][wokeTimer],
		w[loopDecide][wokePoked], w[loopDecide][wokeTimer])
}

// startCapture installs the hooks until the test ends.
func startCapture(t testing.TB) *capture {
	c := &capture{wakes: make(map[*Session]*wakeCount)}
	sendTap = func(s *Session, p *path, kind sendKind, b []byte) {
		x := sent{at: time.Now(), s: s, path: p.id, kind: kind, n: len(b)}
		if kind == sentDatagram {
			if len(b) > 0 {
				x.typ = b[0]
			}
		} else {
			x.typ = wire.TypeSegment
			for used := 0; used < len(b); {
				_, n, err := wire.ParseSegment(b[used:])
				if err != nil || n == 0 {
					break
				}
				used += n
				x.segs++
			}
		}
		c.mu.Lock()
		c.sends = append(c.sends, x)
		c.mu.Unlock()
	}
	loopWoke = func(s *Session, loop loopID, why wakeReason) {
		c.mu.Lock()
		w := c.wakes[s]
		if w == nil {
			w = new(wakeCount)
			c.wakes[s] = w
		}
		w[loop][why]++
		c.mu.Unlock()
	}
	t.Cleanup(func() { sendTap, loopWoke = nil, nil })
	return c
}

// mark is a point in the capture: what was sent before it is left out by
// the queries that take it.
type mark struct {
	sends int
	wakes map[*Session]wakeCount
}

// mark returns the capture's current point.
func (c *capture) mark() mark {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := mark{sends: len(c.sends), wakes: make(map[*Session]wakeCount)}
	for s, w := range c.wakes {
		m.wakes[s] = *w
	}
	return m
}

// since returns what s sent after m (every session's if s is nil).
func (c *capture) since(m mark, s *Session) []sent {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []sent
	for _, x := range c.sends[m.sends:] {
		if s == nil || x.s == s {
			out = append(out, x)
		}
	}
	return out
}

// counts returns, per record type (datagram types and wire.TypeSegment for
// segments), how many s sent after m: datagrams, and segments (not batches).
func (c *capture) counts(m mark, s *Session) map[byte]int {
	n := make(map[byte]int)
	for _, x := range c.since(m, s) {
		if x.kind == sentDatagram {
			n[x.typ]++
		} else {
			n[wire.TypeSegment] += x.segs
		}
	}
	return n
}

// datagrams is how many datagrams s sent after m.
func (c *capture) datagrams(m mark, s *Session) int {
	k := 0
	for _, x := range c.since(m, s) {
		if x.kind == sentDatagram {
			k++
		}
	}
	return k
}

// wakeups returns s's loop wake-ups after m.
func (c *capture) wakeups(m mark, s *Session) wakeCount {
	c.mu.Lock()
	defer c.mu.Unlock()
	var w wakeCount
	if cur := c.wakes[s]; cur != nil {
		w = *cur
	}
	before := m.wakes[s]
	for i := range w {
		for j := range w[i] {
			w[i][j] -= before[i][j]
		}
	}
	return w
}

// wantIdle fails the test if s (every session, if nil) sent anything after m.
func (c *capture) wantIdle(t testing.TB, m mark, s *Session, what string) {
	t.Helper()
	if got := c.since(m, s); len(got) > 0 {
		t.Errorf("%s: %d sends, want none (%s); first ones:\n%s", what, len(got), formatCounts(c.counts(m, s)), formatSends(got, 10))
	}
}

// formatCounts prints per-type counts in a fixed order.
func formatCounts(n map[byte]int) string {
	var keys []int
	for k := range n {
		keys = append(keys, int(k))
	}
	sort.Ints(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", typeName(byte(k)), n[byte(k)]))
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

// formatSends prints at most max sends, one a line.
func formatSends(xs []sent, max int) string {
	var b strings.Builder
	for i, x := range xs {
		if i == max {
			fmt.Fprintf(&b, "  ... %d more\n", len(xs)-max)
			break
		}
		fmt.Fprintf(&b, "  %v\n", x)
	}
	return b.String()
}

// pastDeadlineCounts snapshots pastDeadlines.
func pastDeadlineCounts() (n [numTimers]uint64) {
	for i := range n {
		n[i] = pastDeadlines[i].Load()
	}
	return n
}

// wantNoPastDeadlines fails the test if a loop refused a deadline at or
// before its now since before was taken: the timer function that returned
// it has a bug (deadline.go).
func wantNoPastDeadlines(t testing.TB, before [numTimers]uint64) {
	t.Helper()
	after := pastDeadlineCounts()
	for i := range after {
		if d := after[i] - before[i]; d > 0 {
			t.Errorf("timer function %d returned %d deadlines at or before its now", i, d)
		}
	}
}
