package gym

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/learned"
)

// remote is the learned.Policy of an episode: it sends each Observation to
// the agent and waits for the action. It runs on the sender scheduler's
// goroutine, inside the episode's bubble; its fields are that goroutine's
// until the episode's transfer has returned, then the server loop's.
type remote struct {
	c      *conn
	layout *Layout
	sc     scratch
	start  time.Time // the episode's start (the emulator's t = 0)
	cancel context.CancelFunc

	maxAge   time.Duration // truncate at the first boundary this long after start (0: none)
	maxSteps uint64        // truncate after this many steps (0: none)

	last     learned.Action
	actionAt float64 // virtual time (s since the first decision) the last action was read; −1 before
	sent     bool    // the first 'O' went out

	// ended is set when the agent is asked no more: the transfer completed
	// (complete, set by the client's reader), a limit was reached (final
	// holds the last observation), the agent sent another command
	// (pending), or the pipe failed (err).
	ended    bool
	complete chan struct{} // closed by the client's reader when the download is whole
	final    *learned.Observation
	pending  []byte // a command that ended the episode early ('R', 'D', 'Q'), with its type byte
	err      error
}

// Act implements learned.Policy.
func (r *remote) Act(o *learned.Observation, a *learned.Action) error {
	if !r.ended {
		select {
		case <-r.complete:
			r.ended = true
		default:
		}
	}
	if r.ended {
		*a = r.last
		return nil
	}
	if (r.maxAge > 0 && o.Conn.Now.Sub(r.start) >= r.maxAge) || (r.maxSteps > 0 && o.Step >= r.maxSteps) {
		f := *o
		r.final, r.ended = &f, true
		r.cancel()
		*a = r.last
		return nil
	}
	r.c.begin(RepObs)
	r.c.out = r.layout.encode(r.c.out, &r.sc, o, 0, r.actionAt)
	if err := r.c.finish(); err != nil {
		return r.fail(err, a)
	}
	r.sent = true
	for {
		t, p, err := r.c.read()
		if err != nil {
			return r.fail(err, a)
		}
		if t != CmdStep {
			r.pending = append([]byte{t}, p...)
			r.ended = true
			r.cancel()
			*a = learned.Action{Paths: sched.PathSet(1)<<uint(o.N) - 1}
			return nil
		}
		mask, cp, err := decodeStep(p)
		if err == nil {
			err = checkAction(mask, cp, r.layout.slots)
		}
		if err != nil {
			if werr := r.c.writeError(ErrBadAction, err); werr != nil {
				return r.fail(werr, a)
			}
			continue // the agent may answer again
		}
		mask &= 1<<uint(o.N) - 1 // marks of empty slots are ignored
		*a = learned.Action{Paths: sched.PathSet(mask), Copy: cp == 1}
		r.last = *a
		r.actionAt = o.Conn.Now.Sub(o.Start).Seconds() + time.Since(o.Conn.Now).Seconds()
		return nil
	}
}

// fail ends the episode after a pipe error: the agent is gone.
func (r *remote) fail(err error, a *learned.Action) error {
	r.err, r.ended = err, true
	r.cancel()
	*a = r.last
	return nil
}

// checkAction refuses an action outside the action space: a mask naming a
// slot beyond the observation's, or a copy flag other than 0 or 1. (Marks
// of slots that hold no path now are allowed and ignored.)
func checkAction(mask uint64, cp byte, slots int) error {
	if cp > 1 {
		return fmt.Errorf("copy flag %d, want 0 or 1", cp)
	}
	if mask>>uint(slots) != 0 {
		return fmt.Errorf("path mask %#x names a slot ≥ %d (the observation has %d slots)", mask, slots, slots)
	}
	return nil
}

// claim is the Policy of one server scheduler of an episode: the first
// scheduler to ask for an action takes the agent (own reports whether it
// did); any later one acts as minRTT (new data on every path) and says so
// once. It runs on its scheduler's goroutine.
type claim struct {
	rem     *remote
	own     func() bool
	decided bool // own was asked
	mine    bool
}

// Act implements learned.Policy.
func (c *claim) Act(o *learned.Observation, a *learned.Action) error {
	if !c.decided {
		c.decided, c.mine = true, c.own()
		if !c.mine {
			fmt.Fprintln(os.Stderr, "mpq-gym: a second server session runs minRTT")
		}
	}
	if c.mine {
		return c.rem.Act(o, a)
	}
	*a = learned.Action{Paths: sched.PathSet(1)<<uint(o.N) - 1}
	return nil
}
