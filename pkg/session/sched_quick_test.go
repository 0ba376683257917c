package session

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/emu"
	"github.com/mpqsched/mpqsched/sched"
)

// lockProbeSched is minRTT that reports itself sched.Quick as told, and
// records in each Decide whether the session's s.mu was free.
type lockProbeSched struct {
	sched.Scheduler
	quick          bool
	s              atomic.Pointer[Session]
	free, held, nd atomic.Int64
}

func (l *lockProbeSched) Quick() bool { return l.quick }

func (l *lockProbeSched) Decide(c *sched.ConnInfo, p []sched.PathInfo) sched.Decision {
	if s := l.s.Load(); s != nil {
		l.nd.Add(1)
		if s.mu.TryLock() {
			s.mu.Unlock()
			l.free.Add(1)
		} else {
			l.held.Add(1)
		}
	}
	return l.Scheduler.Decide(c, p)
}

// sched.Quick: "When Quick returns true, a transport may make these calls
// while it holds its own locks [...] A scheduler that runs a model [...]
// must return false or not implement Quick: the transport then calls it
// with its locks released". A Quick scheduler decides with s.mu held; one
// whose Quick returns false (a wrapper that embeds a Quick scheduler and
// opts out) decides with it released.
func TestQuickSchedulerDecidesUnderLock(t *testing.T) {
	for _, quick := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			ls := &lockProbeSched{quick: quick}
			cliCfg := &Config{NewScheduler: func() sched.Scheduler {
				ls.Scheduler, _ = sched.New("minrtt")
				return ls
			}}
			link := emu.LinkConfig{RateBps: 20e6, Delay: 5 * time.Millisecond}
			tb := newTestbedCfgs(t, 1, nil, cliCfg, false, emu.PathSpec{Up: link, Down: link})
			defer tb.close()
			if tb.cli.quick != quick {
				t.Fatalf("session quick = %v, want %v", tb.cli.quick, quick)
			}
			ls.s.Store(tb.cli)
			st, _ := tb.cli.OpenStream()
			const size = 1 << 20
			go func() { st.Write(make([]byte, size)); st.Close() }()
			peer := accept(t, tb.srv, 10*time.Second)
			if got := len(readAll(t, peer, 30*time.Second)); got != size {
				t.Fatalf("read %d bytes, want %d", got, size)
			}
			n, free, held := ls.nd.Load(), ls.free.Load(), ls.held.Load()
			t.Logf("quick=%v: %d decisions, s.mu free in %d, held in %d", quick, n, free, held)
			if n < 100 {
				t.Fatalf("only %d decisions", n)
			}
			if quick && free != 0 {
				t.Errorf("a Quick scheduler decided %d times with s.mu free, want always held", free)
			}
			// Not Quick: s.mu is released around Decide, so TryLock fails
			// only when another goroutine (a path reader, the ack pass)
			// holds it at that moment.
			if !quick && 2*free < n {
				t.Errorf("a scheduler that is not Quick found s.mu held in %d of %d decisions", held, n)
			}
		})
	}
}
