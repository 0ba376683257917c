package session

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// EdAR (§IV.B.3): "At each TI, the receiver observes the average goodput
// G_t of the entire MPTCP connection, average throughput of each subflow",
// with "TI_t = min_i r_{t−1}^i", the smallest RTT of the subflows. With
// Config.ReportPerMinRTT the receiver reports once per the smallest MinRTT
// of its paths (here 4 ms, on path 0), not once per ReportInterval (20 ms),
// even while the data comes on the slower path; without it, once per
// ReportInterval.
func TestHarnessReportPerMinRTT(t *testing.T) {
	for _, perRTT := range []bool{false, true} {
		t.Run(fmt.Sprintf("perMinRTT=%v", perRTT), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := &Config{ReportInterval: 20 * time.Millisecond, ReportPerMinRTT: perRTT}
				tc := newTestSession(t, cfg, harnessLink(2*time.Millisecond), harnessLink(15*time.Millisecond))
				// 300 ms of data on path 1, a frame every 2 ms.
				var off int
				for range 150 {
					d := strings.Repeat("d", 200)
					tc.writeFrames(1, dataFrame{ID: 0, Off: uint64(off), Data: d})
					off += len(d)
					tc.advance(2 * time.Millisecond)
				}
				tc.advance(50 * time.Millisecond)
				var ivs []time.Duration
				for p := range 2 {
					for _, f := range tc.drain(p) {
						if r, ok := f.(reportFrame); ok {
							ivs = append(ivs, time.Duration(r.IntervalMicros)*time.Microsecond)
						}
					}
				}
				// The first interval ends at 20 ms either way if no RTT
				// was measured yet; take the middle of the run.
				if len(ivs) < 6 {
					t.Fatalf("%d reports: %v", len(ivs), ivs)
				}
				mid := ivs[2 : len(ivs)-2]
				lo, hi := 19*time.Millisecond, 22*time.Millisecond
				if perRTT {
					lo, hi = 4*time.Millisecond, 6*time.Millisecond
				}
				for _, iv := range mid {
					if iv < lo || iv > hi {
						t.Errorf("report intervals %v: want each in [%v, %v] (min RTT 4 ms, ReportInterval 20 ms)", ivs, lo, hi)
						break
					}
				}
				if n, want := len(ivs), 300/int(hi/time.Millisecond); n < want {
					t.Errorf("%d reports over 300 ms, want at least %d", n, want)
				}
			})
		})
	}
}
