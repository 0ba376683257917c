package session

import (
	"runtime/pprof"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/emu"
)

// goroutinesCreatedBy counts the process's goroutines whose creator is the
// function fn (as the goroutine profile names it, "created by fn").
func goroutinesCreatedBy(fn string) int {
	var b strings.Builder
	pprof.Lookup("goroutine").WriteTo(&b, 2)
	n := 0
	for _, l := range strings.Split(b.String(), "\n") {
		if rest, ok := strings.CutPrefix(l, "created by "); ok && strings.HasPrefix(rest, fn+" ") {
			n++
		}
	}
	return n
}

// Issue 30, what to build, item 3: "One loop goroutine per session owns the
// paths, the sender, the receiver, the scheduler's state and flow
// control." Its session-wide part: each session runs one loop goroutine
// (loop.go) for its sender's and its Acks' timers, where it ran a send loop
// and an ack loop until 28 Nov. Path goroutines (a writer, a data reader,
// a datagram reader per path) are counted apart.
func TestOneLoopPerSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		link := emu.LinkConfig{RateBps: 50e6, Delay: 5 * time.Millisecond}
		tb := newTestbedOn(t, 1, nil, true, emu.PathSpec{Up: link, Down: link}, emu.PathSpec{Up: link, Down: link})
		defer tb.close()
		for len(tb.srv.Paths()) < 2 || len(tb.cli.Paths()) < 2 {
			time.Sleep(time.Millisecond)
		}
		synctest.Wait()
		const pkg = "github.com/mpqsched/mpqsched/pkg/session"
		if got := goroutinesCreatedBy(pkg + ".(*Session).run"); got != 2 {
			t.Errorf("%d goroutines created by Session.run for a client and a server session, want 2 (one loop each)", got)
		}
		if got := goroutinesCreatedBy(pkg + ".(*Session).attach"); got != 2*2*3 {
			t.Errorf("%d path goroutines for 2 paths on each side, want 12 (a writer and two readers per path)", got)
		}
	})
}

// timerDue picks the passes a timer wake-up is for.
func TestTimerDue(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	for _, c := range []struct {
		name           string
		now            time.Time
		sendAt, ackAt  time.Time
		wantSend, want bool
	}{
		{"send due", ms(10), ms(10), ms(20), true, false},
		{"ack due", ms(10), ms(30), ms(5), false, true},
		{"both due", ms(10), ms(9), ms(10), true, true},
		{"send due, no ack deadline", ms(10), ms(1), time.Time{}, true, false},
		{"ack due, no send deadline", ms(10), time.Time{}, ms(1), false, true},
		// A clock that reads earlier than the timer (an injected one): the
		// pass with the sooner deadline runs, as its own loop would have.
		{"early, send sooner", ms(0), ms(10), ms(20), true, false},
		{"early, ack sooner", ms(0), ms(30), ms(20), false, true},
		{"early, the same deadline", ms(0), ms(20), ms(20), true, false},
		{"early, send only", ms(0), ms(20), time.Time{}, true, false},
		{"early, ack only", ms(0), time.Time{}, ms(20), false, true},
		{"no deadline", ms(0), time.Time{}, time.Time{}, false, false},
	} {
		send, ack := timerDue(c.now, c.sendAt, c.ackAt)
		if send != c.wantSend || ack != c.want {
			t.Errorf("%s: send %v ack %v, want %v %v", c.name, send, ack, c.wantSend, c.want)
		}
	}
}
