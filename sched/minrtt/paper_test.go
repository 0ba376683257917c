package minrtt

import (
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/schedtest"
)

// TestPaperFig6 replays the minRTT example of the PRS-MPTCP paper
// (prs-mptcp.txt §3, Fig. 6) with path snapshots that evolve as in the figure:
// every segment a path carries stays in flight for one RTT, then its whole
// window is acknowledged at once.
//
// "The RTT of the fast path (RTTf) and RTT of the slow path (RTTs) are 5 ms
// and 10 ms, respectively. The congestion window size of both paths is the
// same as each other (i.e., CWND=10). [...] When there are 25 packets to
// transfer, according to the MinRTT scheduler, packets 1–10 and 21–25 can be
// conducted on a faster subflow, and packets 11–20 can be sent on a slower
// subflow."
func TestPaperFig6(t *testing.T) {
	const packets = 25
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	paths := []sched.PathInfo{
		schedtest.Path(1, 5*time.Millisecond, 10, 0),  // fast subflow
		schedtest.Path(2, 10*time.Millisecond, 10, 0), // slow subflow
	}
	conn := schedtest.Conn(start, packets)
	conn.NextSeq = 1

	got := map[uint64]sched.PathID{} // packet number → path that carried it
	sentAt := [2]time.Duration{-1, -1}
	s := New()
	// One decision round every millisecond; a path whose window went out at
	// sentAt is acknowledged in full one RTT later.
	for now := time.Duration(0); now <= 40*time.Millisecond && len(got) < packets; now += time.Millisecond {
		for i := range paths {
			if sentAt[i] >= 0 && now-sentAt[i] >= paths[i].SmoothedRTT {
				paths[i].BytesInFlight, paths[i].SegmentsInFlight = 0, 0
				sentAt[i] = -1
			}
		}
		conn.Now = start.Add(now)
		for conn.SendBufferBytes > 0 {
			d := s.Decide(&conn, paths)
			if d.Action == sched.Wait {
				break
			}
			if d.Action != sched.SendNext || d.Paths.Len() != 1 {
				t.Fatalf("t=%v: got %+v, want SendNext on one path", now, d)
			}
			i := d.Paths.First()
			got[conn.NextSeq] = paths[i].ID
			paths[i].BytesInFlight += schedtest.MSS
			paths[i].SegmentsInFlight++
			if sentAt[i] < 0 {
				sentAt[i] = now
			}
			conn.NextSeq++
			conn.SendBufferBytes -= schedtest.MSS
		}
	}

	for seq := uint64(1); seq <= packets; seq++ {
		want := sched.PathID(1) // fast subflow
		if seq >= 11 && seq <= 20 {
			want = 2 // slow subflow
		}
		if got[seq] != want {
			t.Errorf("packet %d: got path %d, want path %d", seq, got[seq], want)
		}
	}
}
