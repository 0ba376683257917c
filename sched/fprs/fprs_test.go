package fprs

import (
	"fmt"
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/schedtest"
)

const (
	ms  = time.Millisecond
	mss = schedtest.MSS
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// sim replays the paper's slot model: a path's window goes
// out within one instant and is acknowledged in full one RTT later; the
// transport keeps NextSeq at the lowest unsent segment.
type sim struct {
	t      *testing.T
	s      *Scheduler
	conn   sched.ConnInfo
	paths  []sched.PathInfo
	total  uint64                   // segments the application wrote, numbered 1..total
	sent   map[uint64]bool          // segments sent
	onPath map[uint64]int           // segment → path index
	at     map[uint64]time.Duration // segment → send time
	ackAt  []time.Duration          // per path: when its in-flight window is acknowledged (-1: none)
}

func newSim(t *testing.T, total uint64, paths ...sched.PathInfo) *sim {
	c := schedtest.Conn(t0, total)
	c.NextSeq = 1
	m := &sim{t: t, s: New(), conn: c, paths: paths, total: total,
		sent: map[uint64]bool{}, onPath: map[uint64]int{}, at: map[uint64]time.Duration{},
		ackAt: make([]time.Duration, len(paths))}
	for i := range m.ackAt {
		m.ackAt[i] = -1
	}
	return m
}

// step acknowledges the windows due at now, then asks for decisions until the
// scheduler waits.
func (m *sim) step(now time.Duration) {
	for i := range m.paths {
		if m.ackAt[i] >= 0 && now >= m.ackAt[i] {
			m.paths[i].BytesInFlight, m.paths[i].SegmentsInFlight = 0, 0
			m.ackAt[i] = -1
		}
	}
	m.conn.Now = t0.Add(now)
	for n := 0; m.conn.SendBufferBytes > 0; n++ {
		if n > 1000 {
			m.t.Fatal("scheduler never waits")
		}
		d := m.s.Decide(&m.conn, m.paths)
		var seq uint64
		switch d.Action {
		case sched.Wait:
			return
		case sched.SendNext:
			seq = m.conn.NextSeq
		case sched.SendSeq:
			seq = d.Seq
			if seq < m.conn.NextSeq || m.sent[seq] || seq > m.total {
				m.t.Fatalf("t=%v: SendSeq %d: NextSeq %d, already sent %v, total %d", now, seq, m.conn.NextSeq, m.sent[seq], m.total)
			}
		default:
			m.t.Fatalf("t=%v: unexpected %+v", now, d)
		}
		if d.Paths.Len() != 1 || !m.paths[d.Paths.First()].SendingAllowed() {
			m.t.Fatalf("t=%v: %+v does not name one path with room", now, d)
		}
		i := d.Paths.First()
		m.sent[seq], m.onPath[seq], m.at[seq] = true, i, now
		m.paths[i].BytesInFlight += mss
		m.paths[i].SegmentsInFlight++
		if m.ackAt[i] < 0 {
			m.ackAt[i] = now + m.paths[i].SmoothedRTT
		}
		m.conn.SendBufferBytes -= mss
		m.conn.PeerWindow -= min(m.conn.PeerWindow, mss)
		for m.sent[m.conn.NextSeq] {
			m.conn.NextSeq++
		}
	}
}

// column returns what path i sent in [from, from+width): "a-b", or "NA".
func (m *sim) column(i int, from, width time.Duration) string {
	lo, hi := uint64(0), uint64(0)
	for seq, p := range m.onPath {
		if p != i || m.at[seq] < from || m.at[seq] >= from+width {
			continue
		}
		if lo == 0 || seq < lo {
			lo = seq
		}
		hi = max(hi, seq)
	}
	if lo == 0 {
		return "NA"
	}
	if hi-lo+1 != 5 {
		return fmt.Sprintf("%d-%d(gap)", lo, hi)
	}
	return fmt.Sprintf("%d-%d", lo, hi)
}

// fig5 is the allotment table of fprs.txt Fig. 5 ("Allotment of packets to
// respective paths"), one string per 5 ms time slot. Columns 1–12 are as
// printed. From column 13 the printed table restarts one window too low:
// it gives P1 106–110 (already P2's in column 11), then 111–115, 121–125,
// 131–135, 141–145, 146–150, gives P2 116–120, 136–140 and 151–155 (which it
// also gives P3 in column 16), and P3 126–130 and 151–155 (the slot header
// also reads "85-90" for 86–90). The allotment is periodic: every 6 slots
// (30 ms, the least common multiple of the RTTs) P1 sends 6 windows, P2 3 and
// P3 2, 55 packets in all, and columns 7–12 are columns 1–6 plus 55 as
// printed. Columns 13–18 below continue that period (TestFig5Periodic).
var fig5 = [3][18]string{
	{"1-5", "6-10", "16-20", "26-30", "36-40", "41-45", "56-60", "61-65", "71-75", "81-85", "91-95", "96-100",
		"111-115", "116-120", "126-130", "136-140", "146-150", "151-155"},
	{"11-15", "NA", "31-35", "NA", "51-55", "NA", "66-70", "NA", "86-90", "NA", "106-110", "NA",
		"121-125", "NA", "141-145", "NA", "161-165", "NA"},
	{"21-25", "NA", "NA", "46-50", "NA", "NA", "76-80", "NA", "NA", "101-105", "NA", "NA",
		"131-135", "NA", "NA", "156-160", "NA", "NA"},
}

// "Let rtt_1=5ms, rtt_2=10ms, and rtt_3=15ms be the corresponding round-trip
// times for the three routes, and let the congestion window for all routes be
// the same 5. For simplicity's sake, no in-flight packets or packet loss on
// any route." "FPRS chooses the lowest available path, P2, at that point, but
// before assigning packets to P2, it reserves packets 6 – 10 for path P1 and
// allocates packets 11-15 to path P2." "Because the RTT gap between Path1 and
// Path3 is three times, FPRS reserves packets 16-20 on P1."
func TestFig5Allotment(t *testing.T) {
	m := newSim(t, 1000,
		schedtest.Path(1, 5*ms, 5, 0),
		schedtest.Path(2, 10*ms, 5, 0),
		schedtest.Path(3, 15*ms, 5, 0),
	)
	for now := time.Duration(0); now < 90*ms; now += ms {
		m.step(now)
	}
	for i := range fig5 {
		for c, want := range fig5[i] {
			if got := m.column(i, time.Duration(c)*5*ms, 5*ms); got != want {
				t.Errorf("P%d, slot %d (%d–%d ms): got %s, want %s", i+1, c+1, 5*c, 5*c+5, got, want)
			}
		}
	}
}

// The table's columns 7–12 repeat columns 1–6 shifted by 55 packets; the
// corrected columns 13–18 do the same, where the printed ones do not.
func TestFig5Periodic(t *testing.T) {
	shift := func(s string) string {
		var lo, hi int
		if _, err := fmt.Sscanf(s, "%d-%d", &lo, &hi); err != nil {
			return s
		}
		return fmt.Sprintf("%d-%d", lo+55, hi+55)
	}
	for i := range fig5 {
		for c := 6; c < 18; c++ {
			if got, want := fig5[i][c], shift(fig5[i][c-6]); got != want {
				t.Errorf("P%d column %d: %s, want %s (column %d + 55)", i+1, c+1, got, want, c-5)
			}
		}
	}
}

// "The FPRS scheduler picks packets to every path in a such a way that they
// reach in the receiver buffer in the sequence in which they were sent": with
// a segment arriving one RTT after it was sent, no segment arrives after a
// higher-numbered one.
func TestFig5InOrderArrival(t *testing.T) {
	m := newSim(t, 400,
		schedtest.Path(1, 5*ms, 5, 0),
		schedtest.Path(2, 10*ms, 5, 0),
		schedtest.Path(3, 15*ms, 5, 0),
	)
	for now := time.Duration(0); now < 400*ms; now += ms {
		m.step(now)
	}
	if len(m.sent) != 400 {
		t.Fatalf("sent %d of 400 segments", len(m.sent))
	}
	var last time.Duration
	for seq := uint64(1); seq <= 400; seq++ {
		arr := m.at[seq] + m.paths[m.onPath[seq]].SmoothedRTT
		if arr < last {
			t.Fatalf("segment %d arrives at %v, before an earlier segment (%v)", seq, arr, last)
		}
		last = arr
	}
}

// "Only reserve within the data actually waiting": with 12 segments, P1 takes
// 1–5, P2 gets 11–12 after the reservation 6–10, and P3 waits (P1 delivers
// the rest no later than P3 could).
func TestReservationWithinData(t *testing.T) {
	m := newSim(t, 12,
		schedtest.Path(1, 5*ms, 5, 0),
		schedtest.Path(2, 10*ms, 5, 0),
		schedtest.Path(3, 15*ms, 5, 0),
	)
	m.step(0)
	for seq, want := range map[uint64]int{1: 0, 5: 0, 11: 1, 12: 1} {
		if got, ok := m.onPath[seq]; !ok || got != want {
			t.Errorf("segment %d: got path %d (sent %v), want %d", seq, got, ok, want)
		}
	}
	for _, seq := range []uint64{6, 10} {
		if m.sent[seq] {
			t.Errorf("segment %d sent at t=0, want it reserved for P1", seq)
		}
	}
	if len(m.sent) != 7 {
		t.Errorf("sent %d segments at t=0, want 7", len(m.sent))
	}
	if m.paths[2].BytesInFlight != 0 {
		t.Errorf("P3 sent %d bytes, want 0", m.paths[2].BytesInFlight)
	}
	m.step(5 * ms)
	if len(m.sent) != 12 {
		t.Errorf("after P1's second window: %d segments sent, want 12", len(m.sent))
	}
}

// The peer window bounds reservations and allotments the same way.
func TestReservationWithinPeerWindow(t *testing.T) {
	m := newSim(t, 1000,
		schedtest.Path(1, 5*ms, 5, 0),
		schedtest.Path(2, 10*ms, 5, 0),
	)
	m.conn.PeerWindow = 8 * mss
	m.step(0)
	// P1 sends 1–5; the peer window then admits 6–8 only: P2 would need them
	// after the reservation 6–10, so it waits.
	if got := len(m.sent); got != 5 {
		t.Errorf("sent %d segments, want 5", got)
	}
	if m.paths[1].BytesInFlight != 0 {
		t.Errorf("P2 sent %d bytes, want 0", m.paths[1].BytesInFlight)
	}
}

// Fig. 4 line 10 prints "Tj = (available space)j * SRttj", i.e. (Cwnd −
// Pending)·Srtt. Read literally the 30 ms path with one free segment
// (T = 1·30 ms) would "arrive" before the idle 10 ms path (T = 20·10 ms) and
// become P_1; the intended arrival time sends on the 10 ms path.
func TestArrivalTimeSlip(t *testing.T) {
	paths := []sched.PathInfo{
		schedtest.Path(1, 30*ms, 20, 19),
		schedtest.Path(2, 10*ms, 20, 0),
	}
	conn := schedtest.Conn(t0, 100)
	d := New().Decide(&conn, paths)
	if d.Action != sched.SendNext || d.Paths != sched.Of(1) {
		t.Errorf("got %+v, want SendNext on index 1", d)
	}
	tests := []struct {
		name string
		p    sched.PathInfo
		want float64
	}{
		{"room: one srtt", schedtest.Path(1, 10*ms, 20, 19), 0.010},
		{"full: drain then srtt", schedtest.Path(1, 10*ms, 20, 20), 0.020},
		{"over full", schedtest.Path(1, 10*ms, 20, 30), 0.025},
	}
	for _, tt := range tests {
		if got := ArrivalTime(&tt.p); got < tt.want-1e-12 || got > tt.want+1e-12 {
			t.Errorf("%s: got %v s, want %v s", tt.name, got, tt.want)
		}
	}
}

// A full fast path whose next window arrives later than a slower path's
// segment sent now is not P_1: the slower path sends the next segment itself.
func TestFullFastPathNotWaitedFor(t *testing.T) {
	paths := []sched.PathInfo{
		schedtest.Path(1, 5*ms, 5, 5), // T = 10 ms
		schedtest.Path(2, 9*ms, 5, 0), // T = 9 ms
	}
	conn := schedtest.Conn(t0, 100)
	d := New().Decide(&conn, paths)
	if d.Action != sched.SendNext || d.Paths != sched.Of(1) {
		t.Errorf("got %+v, want SendNext on index 1", d)
	}
}

// "If a packet is lost, on the other hand, the FPRS re-sends it as soon as the
// quickest path becomes available": retransmissions go with P_1's SendNext.
func TestRetransmissionOnFastPath(t *testing.T) {
	paths := []sched.PathInfo{
		schedtest.Path(2, 15*ms, 5, 0),
		schedtest.Path(1, 5*ms, 5, 0),
	}
	conn := schedtest.Conn(t0, 100)
	conn.RetransmitQueued = 1
	d := New().Decide(&conn, paths)
	if d.Action != sched.SendNext || d.Paths != sched.Of(1) {
		t.Errorf("got %+v, want SendNext on index 1", d)
	}
}

// Package doc: "If P_1 catches up and sends part of an allotment first [...],
// the slow path continues after it." Segments of an allotment that
// the fast path's SendNext took first are skipped by the slow path.
func TestFastPathCatchesUp(t *testing.T) {
	s := New()
	paths := []sched.PathInfo{
		schedtest.Path(1, 5*ms, 5, 5), // P1 sent 1–5
		schedtest.Path(2, 10*ms, 5, 0),
	}
	conn := schedtest.Conn(t0, 95)
	conn.NextSeq = 6
	want := func(d, w sched.Decision) {
		t.Helper()
		if d != w {
			t.Fatalf("got %+v, want %+v", d, w)
		}
	}
	// P2 gets 11–15 behind the reservation 6–10 and sends 11.
	want(s.Decide(&conn, paths), sched.Decision{Action: sched.SendSeq, Paths: sched.Of(1), Seq: 11})
	paths[1].BytesInFlight = 4 * mss // P2 is left with room for one segment
	// P1's window comes back; its SendNext sends 6–10, then 12, the lowest
	// unsent segment (transport side, simulated here).
	conn.NextSeq = 13
	paths[0].BytesInFlight = 5 * mss
	want(s.Decide(&conn, paths), sched.Decision{Action: sched.SendSeq, Paths: sched.Of(1), Seq: 13})
}

// A slow path that cannot get an allotment (all data is reserved or allotted)
// does not stop a slower one from finishing its own.
func TestSlowerPathFinishesAllotment(t *testing.T) {
	s := New()
	paths := []sched.PathInfo{
		schedtest.Path(1, 5*ms, 5, 5),  // P1 sent 1–5
		schedtest.Path(2, 10*ms, 5, 5), // full for now
		schedtest.Path(3, 15*ms, 5, 0),
	}
	conn := schedtest.Conn(t0, 15) // 6–20 wait
	conn.NextSeq = 6
	// P3: reservation 6–15 (two windows of P1), allotment 16–20.
	if got, want := s.Decide(&conn, paths), (sched.Decision{Action: sched.SendSeq, Paths: sched.Of(2), Seq: 16}); got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	conn.SendBufferBytes -= mss
	paths[2].BytesInFlight += mss
	paths[1].BytesInFlight = 0 // P2 has room, but every segment is taken
	if got, want := s.Decide(&conn, paths), (sched.Decision{Action: sched.SendSeq, Paths: sched.Of(2), Seq: 17}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

// The ring's running sums match the allotments it holds, also after it
// wrapped (a fast path that never gets acknowledged keeps NextSeq still while
// the slow path gets more than ringSize allotments).
func TestRingAccounting(t *testing.T) {
	m := newSim(t, 5000,
		schedtest.Path(1, 1*ms, 5, 0),
		schedtest.Path(2, 10*ms, 5, 0),
	)
	m.step(0)
	m.ackAt[0] = 1 << 62 // P1 never acknowledged
	for now := 10 * ms; now < 10*ms*(ringSize+20); now += 10 * ms {
		m.step(now)
		var size, sent uint64
		for j := 0; j < m.s.n; j++ {
			a := m.s.ring[(m.s.head+j)%ringSize]
			size += a.end - a.start
			sent += a.next - a.start
		}
		if size != m.s.size || sent != m.s.sent {
			t.Fatalf("t=%v: sums %d/%d, ring holds %d/%d", now, m.s.size, m.s.sent, size, sent)
		}
	}
	if m.s.n != ringSize {
		t.Errorf("ring holds %d allotments, want it full (%d)", m.s.n, ringSize)
	}
	// Nothing P2 sent is below NextSeq's reservation for P1 (9 windows of 5).
	for seq, p := range m.onPath {
		if p == 1 && seq < 6+45 {
			t.Errorf("P2 sent %d inside P1's reservation", seq)
		}
	}
}

func TestUsablePaths(t *testing.T) {
	failed := schedtest.Path(1, 5*ms, 5, 0)
	failed.PotentiallyFailed = true
	backup := schedtest.Path(3, 5*ms, 5, 0)
	backup.Backup = true
	fresh := schedtest.Path(4, 0, 5, 0)
	fresh.SmoothedRTT = 0
	tests := []struct {
		name  string
		paths []sched.PathInfo
		want  sched.Decision
	}{
		{"failed path skipped", []sched.PathInfo{failed, schedtest.Path(2, 20*ms, 5, 0)},
			sched.Decision{Action: sched.SendNext, Paths: sched.Of(1)}},
		{"backup idle while a regular path has room", []sched.PathInfo{backup, schedtest.Path(2, 20*ms, 5, 0)},
			sched.Decision{Action: sched.SendNext, Paths: sched.Of(1)}},
		// Linux MPTCP: "pick the best backup if no other subflow is active".
		{"no backup while a regular path is live, even full", []sched.PathInfo{backup, schedtest.Path(2, 20*ms, 5, 5)},
			sched.Decision{Action: sched.Wait}},
		{"unmeasured path probed", []sched.PathInfo{schedtest.Path(2, 20*ms, 5, 5), fresh},
			sched.Decision{Action: sched.SendNext, Paths: sched.Of(1)}},
		{"all full", []sched.PathInfo{schedtest.Path(1, 5*ms, 5, 5), schedtest.Path(2, 20*ms, 5, 5)},
			sched.Decision{Action: sched.Wait}},
	}
	for _, tt := range tests {
		conn := schedtest.Conn(t0, 100)
		if got := New().Decide(&conn, tt.paths); got != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func BenchmarkDecide(b *testing.B) {
	b.Run(Name, func(b *testing.B) {
		schedtest.BenchmarkDecide(b, func() sched.Scheduler { return New() })
	})
}

func TestConformance(t *testing.T) {
	schedtest.Conformance(t, Name, func() sched.Scheduler { return New() })
}
