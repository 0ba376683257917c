package session

import (
	"bytes"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/sched"
)

// Phases of reserveSched.
const (
	reserveSkip = iota // send the third new segment, leaving two cut and unsent
	reserveHold        // send nothing
	reserveNew         // send segment seq, once
	reserveFree        // minRTT
)

// reserveSched leaves segments cut and unsent, as FPRS's sequence
// reservations do: a test sets its phase.
type reserveSched struct {
	sched.Scheduler // minRTT, for reserveFree
	phase           atomic.Int32
	seq             atomic.Uint64 // for reserveNew
}

func (r *reserveSched) Decide(c *sched.ConnInfo, p []sched.PathInfo) sched.Decision {
	switch r.phase.Load() {
	case reserveSkip:
		if c.SendBufferBytes == 0 {
			break
		}
		r.phase.Store(reserveHold)
		return sched.Decision{Action: sched.SendSeq, Paths: sched.Of(0), Seq: c.NextSeq + 2}
	case reserveNew:
		r.phase.Store(reserveHold)
		return sched.Decision{Action: sched.SendSeq, Paths: sched.Of(0), Seq: r.seq.Load()}
	case reserveFree:
		return r.Scheduler.Decide(c, p)
	}
	return sched.Decision{Action: sched.Wait, RetryAt: c.Now.Add(10 * time.Millisecond)}
}

// RFC 9000 §3.3: "A sender MUST NOT send a STREAM or STREAM_DATA_BLOCKED
// frame for a stream in the "Reset Sent" state or any terminal state --
// that is, after sending a RESET_STREAM frame." Two segments of stream a
// are cut and left unsent (a sequence reservation); a is reset, and the
// RESET_STREAM goes out in a later segment with stream b's data; when the
// two segments go after it, they carry no data of a (its frames are
// PADDING). Until 29 Nov they went with a's data: only segments sent again
// were padded.
func TestHarnessResetBeforeFirstSend(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rs := &reserveSched{}
		rs.phase.Store(reserveHold)
		cfg := &Config{NewScheduler: func() sched.Scheduler {
			rs.Scheduler, _ = sched.New("minrtt")
			return rs
		}}
		tc := newTestSession(t, cfg, harnessLink(5*time.Millisecond))
		a, err := tc.s.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		b, err := tc.s.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		rs.phase.Store(reserveSkip)
		a.Write(bytes.Repeat([]byte("a"), 4000))
		first := bySegment(tc.collect(50 * time.Millisecond)[0])
		var third uint64
		for seq, fs := range first {
			if data, _ := streamData(fs, a.ID()); len(data) > 0 {
				third = seq
			}
		}
		if len(first) != 1 || third < 2 {
			t.Fatalf("sent segments %v, want one, the third of stream %d's", first, a.ID())
		}
		b.Write(bytes.Repeat([]byte("b"), 2000))
		synctest.Wait()
		rs.seq.Store(third + 1) // ConnInfo.NextSeq is the lowest unsent, third - 2
		rs.phase.Store(reserveNew)
		a.CancelWrite(5)
		second := tc.collect(50 * time.Millisecond)[0]
		var reset bool
		for _, f := range without(second) {
			switch f := f.(type) {
			case resetFrame:
				reset = reset || f.ID == a.ID()
			case dataFrame:
				if f.ID == a.ID() {
					t.Fatalf("data of stream %d sent with its reset pending: %v", a.ID(), f)
				}
			}
		}
		if !reset {
			t.Fatalf("no RESET_STREAM for stream %d", a.ID())
		}
		rs.phase.Store(reserveFree)
		after := bySegment(tc.collect(200 * time.Millisecond)[0])
		for _, seq := range []uint64{third - 2, third - 1} {
			fs, ok := after[seq]
			if !ok {
				t.Fatalf("segment %d, held back, never went: the test proves nothing", seq)
			}
			if data, _ := streamData(fs, a.ID()); len(data) > 0 {
				t.Errorf("segment %d, after stream %d's RESET_STREAM, carries its data: %v", seq, a.ID(), data)
			}
		}
	})
}

// bySegment groups frames by the segment that carried them (Acks left
// out), by sequence number.
func bySegment(fs []frame) map[uint64][]frame {
	m := map[uint64][]frame{}
	var seq uint64
	in := false
	for _, f := range fs {
		switch f := f.(type) {
		case segmentFrame:
			seq, in = f.Seq, true
			m[seq] = m[seq][:0:0]
		case ackFrame:
		default:
			if in {
				m[seq] = append(m[seq], f)
			}
		}
	}
	return m
}
