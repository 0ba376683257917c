package gym

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/mpqsched/mpqsched/pkg/bench"
	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/session"
	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/edar"
	"github.com/mpqsched/mpqsched/sched/learned"
	"github.com/mpqsched/mpqsched/sched/minrtt"
)

// episode runs one reset's transfer in the current time domain (the
// caller's synctest bubble). It answers the reset with the first 'O' (from
// the scheduler's first decision), every step with the next, and the last
// step with a terminal 'O' and the Result. It returns the command that ended
// the episode early, if any (nil: the episode ran to its end), and an error
// only if the pipe failed.
func episode(c *conn, q *Request) (pending []byte, err error) {
	rs, err := resolve(q)
	if err != nil {
		return nil, c.writeError(ErrScenario, err)
	}
	run, err := bench.FromScenario(rs.sc, learned.Name, q.Seed)
	if err != nil {
		return nil, c.writeError(ErrScenario, err)
	}
	o := &q.Options
	layout := NewLayout(rs.slots, o.Edar)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rem := &remote{c: c, layout: &layout, start: time.Now(), cancel: cancel, actionAt: -1,
		maxSteps: uint64(o.MaxSteps), complete: make(chan struct{})}
	if o.MaxSeconds > 0 {
		rem.maxAge = time.Duration(o.MaxSeconds * float64(time.Second))
	}
	if run.Timed > 0 && (rem.maxAge == 0 || run.Timed < rem.maxAge) {
		rem.maxAge = run.Timed
	}
	reward := edar.RewardConfig{Alpha: o.Alpha, Beta: o.Beta, GoodputScale: o.GoodputScale, ReceiveBuffer: o.ReceiveBuffer}
	def := edar.RewardWithBuffer(uint64(run.RecvWindow))
	if run.RecvWindow == 0 {
		def = edar.RewardWithBuffer(session.DefaultRecvWindow)
	}
	if reward.Alpha == 0 && reward.Beta == 0 && reward.GoodputScale == 0 {
		reward.Alpha, reward.Beta = def.Alpha, def.Beta
	}
	if reward.GoodputScale == 0 {
		reward.GoodputScale = def.GoodputScale
	}
	if reward.ReceiveBuffer == 0 {
		reward.ReceiveBuffer = def.ReceiveBuffer
	}
	// Every server scheduler the factory makes may be the episode's: the
	// session's Listen makes one only to ask for its signals
	// (session.Config.NewScheduler), and a second session of the server
	// (none is expected) makes another. The first one to ask its policy for
	// an action owns the agent; any other runs minRTT.
	var (
		mu  sync.Mutex
		agt *learned.Scheduler
	)
	run.NewScheduler = func() sched.Scheduler { return minrtt.New() } // the client sends only the request
	run.NewServerScheduler = func() sched.Scheduler {
		c := &claim{rem: rem}
		s := learned.New(learned.Config{Policy: c, EdarState: o.Edar, Reward: reward,
			Log: func(s string) { fmt.Fprintln(os.Stderr, "mpq-gym:", s) }})
		c.own = func() bool {
			mu.Lock()
			defer mu.Unlock()
			if agt != nil {
				return false
			}
			agt = s
			return true
		}
		return s
	}
	cfg := session.Config{}
	if run.SessionConfig != nil {
		cfg = *run.SessionConfig
	}
	cfg.ReportInterval = o.reportInterval()
	cfg.ReportPerMinRTT = o.ReportPerMinRTT
	cfg.OpportunisticReinjection = o.Opportunistic
	run.SessionConfig = &cfg
	if run.Timed == 0 {
		want := run.Bytes
		var once sync.Once
		run.Hooks.Progress = func(got int64) {
			if got >= want {
				once.Do(func() { close(rem.complete) })
			}
		}
	}
	res, _, terr := bench.Transfer(ctx, run)
	now := time.Now()
	if rem.err != nil {
		return nil, rem.err
	}
	if rem.pending != nil {
		return rem.pending, nil
	}
	if !rem.sent {
		msg := "the transfer ended before the first decision"
		if terr != nil {
			msg += ": " + terr.Error()
		}
		return nil, c.writeJSON(RepError, ErrorReply{Kind: ErrEpisode, Message: msg})
	}
	final, flags := rem.final, byte(FlagTruncated)
	if final == nil {
		mu.Lock()
		final = agt.Final(now)
		mu.Unlock()
	}
	if terr == nil && run.Timed == 0 && rem.final == nil {
		flags = FlagTerminated
	}
	c.begin(RepObs)
	c.out = layout.encode(c.out, &rem.sc, final, flags, rem.actionAt)
	if err := c.finish(); err != nil {
		return nil, err
	}
	return nil, c.writeJSON(RepJSON, resultOf(res, rem.final != nil))
}

// resultOf is the Result the agent gets at the end, without the series
// (they can be long); Error says why a transfer failed (a cut episode's
// transfer is cancelled: its error is expected).
func resultOf(r metrics.Result, cut bool) metrics.Result {
	r.GoodputSeries, r.SeriesTimes, r.CapacityTimes, r.CapacitySeries = nil, nil, nil, nil
	if cut && r.Error != "" {
		r.Error = "episode truncated: " + r.Error
	}
	return r
}
