package edar

import (
	"math"
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/sched"
)

func near(a, b float32) bool { return math.Abs(float64(a-b)) < 1e-6 }

// §IV.B.1: "E_t^i = (d_t^i, o_t^i, x_t^i, w_t^i, l_t^i, f_t^i; …;
// d_{t−k}^i, …, f_{t−k}^i) where d, o, x, w, l, f are the average RTT,
// retransmission timeout (RTO), throughput, congestion window, packet loss
// rate and inflight packets (at subflow level) of subflow i at time t", and
// "M_t = (a_{t−1}, b_t, I_t)".
func TestStateOnHandBuiltSnapshots(t *testing.T) {
	var o observer
	p := sched.PathInfo{
		ID: 7, SmoothedRTT: 50 * time.Millisecond, MinRTT: 40 * time.Millisecond, RTTVar: 10 * time.Millisecond,
		CongestionWindow: 60 * 1200, BytesInFlight: 30 * 1200, MSS: 1200,
		PacketsSent: 1000, PacketsLost: 10, BytesAcked: 1_000_000, DeliveryRate: 2.5e6, LossRate: 0.01,
	}
	conn := sched.ConnInfo{Now: t0, PeerWindow: 512 << 10, UnackedSegments: 40, SegmentSize: 1200}
	var s State
	o.observe(&s, &conn, []sched.PathInfo{p}, Redundant)

	// First TI: rates fall back to the transport's DeliveryRate/LossRate.
	want := [SubflowFeatures]float32{
		FeatRTT:        0.5,  // 50 ms / 100 ms
		FeatRTO:        0.9,  // (50 + 4·10) ms / 100 ms
		FeatThroughput: 0.2,  // 2.5 MB/s / 12.5 MB/s
		FeatCwnd:       0.6,  // 60 segments / 100
		FeatLoss:       0.01, // LossRate
		FeatInFlight:   0.3,  // 30 segments / 100
	}
	if s.N != 1 || s.Sub[0][HistoryLen-1] != want {
		t.Fatalf("first row %v (N=%d), want %v", s.Sub[0][HistoryLen-1], s.N, want)
	}
	for j := 0; j < HistoryLen-1; j++ {
		if s.Sub[0][j] != ([SubflowFeatures]float32{}) {
			t.Fatalf("history step %d before the path existed = %v, want zeros", j, s.Sub[0][j])
		}
	}
	if wantConn := [ConnFeatures]float32{1, 0.5, 0.4}; s.Conn != wantConn {
		t.Fatalf("M_t = %v, want %v", s.Conn, wantConn)
	}

	// Second TI, 100 ms later: 250 kB acked → 2.5 MB/s; 5 lost of 100 sent;
	// one PTO doubles the RTO.
	p.BytesAcked += 250_000
	p.PacketsSent += 100
	p.PacketsLost += 5
	p.PTOCount = 1
	conn.Now = t0.Add(100 * time.Millisecond)
	o.observe(&s, &conn, []sched.PathInfo{p}, Normal)
	row := s.Sub[0][HistoryLen-1]
	if !near(row[FeatThroughput], 0.2) || !near(row[FeatLoss], 0.05) || !near(row[FeatRTO], 1.8) {
		t.Fatalf("second row %v", row)
	}
	if s.Sub[0][HistoryLen-2] != want || s.Conn[ConnPrevAction] != 0 {
		t.Fatalf("history did not shift: %v", s.Sub[0])
	}

	// After k+1 more TIs the first row has left the window.
	for i := 0; i < HistoryLen; i++ {
		conn.Now = conn.Now.Add(100 * time.Millisecond)
		o.observe(&s, &conn, []sched.PathInfo{p}, Normal)
	}
	for j := range s.Sub[0] {
		if s.Sub[0][j][FeatThroughput] != 0 { // nothing acked since
			t.Fatalf("step %d throughput %v, want 0", j, s.Sub[0][j][FeatThroughput])
		}
	}
}

func TestStateFollowsPathsByID(t *testing.T) {
	var o observer
	var s State
	a := sched.PathInfo{ID: 1, SmoothedRTT: 10 * time.Millisecond, MSS: 1200}
	b := sched.PathInfo{ID: 2, SmoothedRTT: 20 * time.Millisecond, MSS: 1200}
	conn := sched.ConnInfo{Now: t0}
	o.observe(&s, &conn, []sched.PathInfo{a, b}, Normal)
	// The transport reorders the paths and path 1 leaves; path 3 joins.
	c := sched.PathInfo{ID: 3, SmoothedRTT: 30 * time.Millisecond, MSS: 1200}
	conn.Now = t0.Add(time.Second)
	o.observe(&s, &conn, []sched.PathInfo{c, b}, Normal)
	if s.N != 2 || s.Sub[0][HistoryLen-2][FeatRTT] != 0 || !near(s.Sub[0][HistoryLen-1][FeatRTT], 0.3) {
		t.Fatalf("new path 3 history %v", s.Sub[0])
	}
	if !near(s.Sub[1][HistoryLen-2][FeatRTT], 0.2) || !near(s.Sub[1][HistoryLen-1][FeatRTT], 0.2) {
		t.Fatalf("path 2 history %v", s.Sub[1])
	}
}

func TestStateClipsAndCapsSubflows(t *testing.T) {
	var o observer
	var s State
	paths := make([]sched.PathInfo, MaxSubflows+2)
	for i := range paths {
		paths[i] = sched.PathInfo{ID: sched.PathID(i), SmoothedRTT: time.Hour, MSS: 1200}
	}
	conn := sched.ConnInfo{Now: t0, PeerWindow: 1 << 40}
	o.observe(&s, &conn, paths, Normal)
	if s.N != MaxSubflows || s.Sub[0][HistoryLen-1][FeatRTT] != FeatureClip || s.Conn[ConnRecvWindow] != FeatureClip {
		t.Fatalf("N=%d rtt=%v rwnd=%v", s.N, s.Sub[0][HistoryLen-1][FeatRTT], s.Conn[ConnRecvWindow])
	}
}

// Reward, paper §IV.B.3: "r_t = V_g − α·V_w − β·V_o, where V_g = G_t,
// V_w = (Σ_{i=1}^n Y_t^i − G_t) / Σ_{i=1}^n Y_t^i, V_o = O_t/B_t + F_t/TI_t";
// §VI: "α = 1.0, and β = 0.5". G_t counts the distinct bytes that arrived,
// V_w the bytes received twice ("the waste of bandwidth by sending
// redundant packets"), F_t the HoL time only
// while the buffer is "fully occupied by out-of-order packets" (Reward's
// mapping, issue 33).
func TestRewardOnHandBuiltReports(t *testing.T) {
	cfg := DefaultReward
	cases := []struct {
		name string
		rep  sched.ReceiverReport
		want RewardTerms
	}{
		{
			name: "normal mode, no waste, no reordering",
			// 50 kB in 40 ms = 1.25 MB/s = 10 Mbit/s → V_g = 1
			rep:  sched.ReceiverReport{Interval: 40 * time.Millisecond, GoodputBytes: 50_000, PathBytes: [8]uint64{30_000, 20_000}},
			want: RewardTerms{Vg: 1, Vw: 0, Vo: 0, R: 1},
		},
		{
			name: "redundant, every byte twice",
			// Σ Y = 100 kB, G = 50 kB: V_w = 0.5 → r = 1 − 1·0.5
			rep:  sched.ReceiverReport{Interval: 40 * time.Millisecond, GoodputBytes: 50_000, PathBytes: [8]uint64{50_000, 50_000}, DuplicateBytes: 50_000},
			want: RewardTerms{Vg: 1, Vw: 0.5, Vo: 0, R: 0.5},
		},
		{
			name: "reordering, no copies: bytes behind a gap are not waste",
			// Σ Y = 100 kB distinct (2.5 MB/s → V_g = 2) of which 60 kB in
			// order, no duplicate: V_w = 0 (the paper's (Σ Y − G)/Σ Y would
			// say 0.4); buffer a quarter full and HoL blocked all TI: not
			// full, so V_o = 0.25 → r = 2 − 0.5·0.25
			rep: sched.ReceiverReport{Interval: 40 * time.Millisecond, GoodputBytes: 60_000, PathBytes: [8]uint64{70_000, 30_000},
				ReorderBytes: 128 << 10, HoLBlocked: 40 * time.Millisecond},
			want: RewardTerms{Vg: 2, Vw: 0, Vo: 0.25, R: 1.875},
		},
		{
			name: "buffer full of out-of-order data, HoL blocked half the TI",
			// O/B = 1 ≥ FullBuffer: V_o = 1 + 20/40 = 1.5 → r = 0.5 − 0.75
			rep: sched.ReceiverReport{Interval: 40 * time.Millisecond, GoodputBytes: 25_000, PathBytes: [8]uint64{25_000},
				ReorderBytes: 512 << 10, HoLBlocked: 20 * time.Millisecond},
			want: RewardTerms{Vg: 0.5, Vw: 0, Vo: 1.5, R: -0.25},
		},
		{
			name: "nothing received, nothing held",
			rep:  sched.ReceiverReport{Interval: 40 * time.Millisecond, HoLBlocked: 40 * time.Millisecond},
			want: RewardTerms{},
		},
		{
			name: "gap filled: in-order delivery above the bytes received is not goodput of this TI",
			rep:  sched.ReceiverReport{Interval: 40 * time.Millisecond, GoodputBytes: 100_000, PathBytes: [8]uint64{50_000}},
			want: RewardTerms{Vg: 1, R: 1},
		},
	}
	for _, c := range cases {
		got := Reward(&c.rep, &cfg)
		if math.Abs(got.Vg-c.want.Vg) > 1e-9 || math.Abs(got.Vw-c.want.Vw) > 1e-9 ||
			math.Abs(got.Vo-c.want.Vo) > 1e-9 || math.Abs(got.R-c.want.R) > 1e-9 {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestMergeReport(t *testing.T) {
	var w reportWindow
	w.add(t0, &sched.ReceiverReport{Interval: 10 * time.Millisecond, GoodputBytes: 10, PathBytes: [8]uint64{5, 5}, ReorderBytes: 100, HoLBlocked: time.Millisecond})
	w.add(t0, &sched.ReceiverReport{Interval: 10 * time.Millisecond, GoodputBytes: 20, PathBytes: [8]uint64{20}, ReorderBytes: 7, HoLBlocked: time.Millisecond})
	want := sched.ReceiverReport{Interval: 20 * time.Millisecond, GoodputBytes: 30, PathBytes: [8]uint64{25, 5}, ReorderBytes: 7, HoLBlocked: 2 * time.Millisecond}
	if w.agg != want || w.count != 2 {
		t.Fatalf("merged %+v, want %+v", w.agg, want)
	}
}
