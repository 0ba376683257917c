package session

import (
	"context"
	"io"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/xlink"
)

// xlinkChunk sends one 1 MB chunk from the client over prioPaths with the
// XLINK scheduler, its deadline hint the given time ahead (0: none), and
// returns the client's sent and redundant bytes.
func xlinkChunk(t *testing.T, ahead time.Duration) (sent, redundant uint64) {
	const size = 1 << 20
	synctest.Test(t, func(t *testing.T) {
		cfg := &Config{NewScheduler: func() sched.Scheduler { return xlink.New(xlink.Options{}) }}
		tb := newTestbedCfgs(t, 1, nil, cfg, true, prioPaths()...)
		defer tb.close()
		got := make(chan int64, 1)
		go func() {
			st, err := tb.srv.AcceptStream(context.Background())
			if err != nil {
				got <- -1
				return
			}
			n, _ := io.Copy(io.Discard, st)
			got <- n
		}()
		st, _ := tb.cli.OpenStream()
		if ahead != 0 {
			st.SetDeadlineHint(time.Now().Add(ahead))
		}
		if _, err := st.Write(make([]byte, size)); err != nil {
			t.Fatal(err)
		}
		st.Close()
		if n := <-got; n != size {
			t.Fatalf("server read %d bytes, want %d", n, size)
		}
		s := tb.cli.Stats()
		sent, redundant = s.SentBytes, s.RedundantBytes
	})
	return sent, redundant
}

// XLINK re-injects only when nothing new can be sent: xquic, the authors'
// stack, will "try to reinject unacked packets if paths still have cwnd"
// after every new packet was scheduled (sched/xlink). This session asks its
// scheduler only while it has new data or retransmissions to send, so on
// the heterogeneous pair (20 Mbit/s, 10 ms RTT and 10 Mbit/s, 30 ms RTT) a
// 1 MB chunk needed in 200 ms (below T_low) goes out without a single copy,
// as one needed in 10 s, or one without a deadline, does: Decide itself
// never copies.
func TestXLINKCopiesNothingWhileNewDataWaits(t *testing.T) {
	sentFar, redFar := xlinkChunk(t, 10*time.Second)
	sentNone, redNone := xlinkChunk(t, 0)
	sentNear, redNear := xlinkChunk(t, 200*time.Millisecond)
	t.Logf("deadline 10 s: %d sent, %d redundant; none: %d sent, %d redundant; 200 ms: %d sent, %d redundant",
		sentFar, redFar, sentNone, redNone, sentNear, redNear)
	if redFar != 0 || redNone != 0 || redNear != 0 {
		t.Errorf("redundant bytes %d (10 s), %d (none), %d (200 ms): want none, Decide never copies", redFar, redNone, redNear)
	}
	if sentNear < 1<<20 {
		t.Errorf("200 ms: %d bytes sent, want the whole chunk", sentNear)
	}
}
