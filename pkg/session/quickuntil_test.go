package session

import (
	"bytes"
	"io"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/emu"
	"github.com/mpqsched/mpqsched/sched"
)

// intervalSched is minRTT that runs a "policy" once per 50 ms interval, as
// EdAR does once per TI, and says so (sched.QuickUntil): Quick inside an
// interval, not at its end. Its counters are guarded by the session's
// schedMu, as its calls are; the test reads them once the session is idle.
type intervalSched struct {
	sched.Scheduler
	started bool
	next    time.Time

	s             atomic.Pointer[Session] // the session that calls it, once known
	armed         atomic.Bool             // block the next slow call until release
	entered       chan struct{}
	blockedInline atomic.Bool // the blocking call was made with Session.mu held
	release       chan struct{}

	quickInline, quickBeside, slowInline, slowBeside int
}

func (q *intervalSched) QuickAt(now time.Time) bool { return q.started && now.Before(q.next) }

func (q *intervalSched) Decide(c *sched.ConnInfo, p []sched.PathInfo) sched.Decision {
	quick := q.QuickAt(c.Now)
	inline := false
	if s := q.s.Load(); s != nil {
		inline = s.snd.inline // written under both locks; the caller holds schedMu
	}
	switch {
	case quick && inline:
		q.quickInline++
	case quick:
		q.quickBeside++
	case inline:
		q.slowInline++
	default:
		q.slowBeside++
	}
	if !quick {
		q.started, q.next = true, c.Now.Add(50*time.Millisecond)
		if c.InFlightBytes > 0 && q.armed.CompareAndSwap(true, false) {
			q.blockedInline.Store(inline)
			close(q.entered)
			<-q.release // the policy takes long
		}
	}
	return q.Scheduler.Decide(c, p)
}

// sched.QuickUntil: "A transport may then make them with its locks held, as
// for a Quick scheduler; otherwise it makes them as for one that is not."
// A scheduler that is slow once per interval decides inside intervals where
// a Quick one does (the send pass, or the writer of a path that pulled),
// and at the end of each interval beside the loop, which meanwhile goes on
// sending Acks and taking them (issue 19: a slow decision holds up no Ack).
func TestQuickUntilDecidesInlineWhenQuick(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := &intervalSched{entered: make(chan struct{}), release: make(chan struct{})}
		cliCfg := &Config{NewScheduler: func() sched.Scheduler {
			q.Scheduler, _ = sched.New("minrtt")
			return q
		}}
		link := emu.LinkConfig{RateBps: 10e6, Delay: 20 * time.Millisecond}
		tb := newTestbedCfgs(t, 1, nil, cliCfg, false, emu.PathSpec{Up: link, Down: link})
		defer tb.close()
		released := false
		defer func() {
			if !released {
				close(q.release)
			}
		}()
		q.s.Store(tb.cli)

		st, _ := tb.cli.OpenStream()
		up := bytes.Repeat([]byte{'u'}, 2<<20) // 1.7 s at 10 Mbit/s
		werr := make(chan error, 1)
		go func() {
			_, err := st.Write(up)
			if err == nil {
				err = st.Close()
			}
			werr <- err
		}()
		peer := accept(t, tb.srv, 10*time.Second)
		got := make(chan []byte, 1)
		go func() { b, _ := io.ReadAll(peer); got <- b }()

		time.Sleep(300 * time.Millisecond) // a few intervals of data in flight
		peerAckedBefore := tb.srv.Stats().Paths[0].BytesAcked
		ackedBefore := tb.cli.Stats().Paths[0].BytesAcked
		q.armed.Store(true)
		<-q.entered // the next interval's end: the "policy" blocks
		if q.blockedInline.Load() {
			t.Fatal("the slow Decide was called with Session.mu held")
		}
		if _, err := peer.Write([]byte("reply")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
		var acked, peerAcked uint64
		statsDone := make(chan struct{})
		go func() {
			acked, peerAcked = tb.cli.Stats().Paths[0].BytesAcked, tb.srv.Stats().Paths[0].BytesAcked
			close(statsDone)
		}()
		if !spinUntil(statsDone) {
			t.Fatal("Session.Stats waits for the slow Decide: it was called with Session.mu held")
		}
		if acked <= ackedBefore {
			t.Errorf("no Ack processed while the slow Decide blocked: %d bytes acked before, %d after", ackedBefore, acked)
		}
		if peerAcked <= peerAckedBefore {
			t.Errorf("no Ack sent while the slow Decide blocked: the peer had %d bytes acknowledged before, %d after", peerAckedBefore, peerAcked)
		}
		close(q.release)
		released = true

		if err := <-werr; err != nil {
			t.Fatal(err)
		}
		if b := <-got; !bytes.Equal(b, up) {
			t.Fatalf("peer read %d bytes, want %d", len(b), len(up))
		}
		synctest.Wait()
		tb.cli.snd.schedMu.Lock()
		defer tb.cli.snd.schedMu.Unlock()
		t.Logf("quick calls: %d inline, %d beside the loop; slow calls: %d inline, %d beside", q.quickInline, q.quickBeside, q.slowInline, q.slowBeside)
		if q.slowInline != 0 {
			t.Errorf("%d slow calls made with Session.mu held, want 0", q.slowInline)
		}
		if q.slowBeside < 5 {
			t.Errorf("%d slow calls, want one per 50 ms interval of the transfer (≥ 5)", q.slowBeside)
		}
		// The decider makes the quick calls that follow a slow one in
		// its round; the rest are made inline (before QuickUntil: none).
		if q.quickInline <= q.quickBeside {
			t.Errorf("quick calls: %d inline, %d beside the loop: want most inline", q.quickInline, q.quickBeside)
		}
	})
}
