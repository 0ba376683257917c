package peekaboo

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/internal/alloctest"
	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/schedtest"
)

const mss = 1460 // the notes' segment size, bytes

const ms = time.Millisecond

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// fixedDraw is a Rand whose every draw is u.
type fixedDraw int

func (u fixedDraw) IntN(int) int { return int(u) }

var e1 = vec{1, 0, 0, 0, 0, 0}

// diag returns the 6×6 diagonal matrix with d on the diagonal.
func diag(d ...float64) mat {
	var m mat
	for i, v := range d {
		m[i][i] = v
	}
	return m
}

// setArm installs A and b for one action, as an imported model would.
func setArm(t *testing.T, s *Scheduler, act int, a mat, b vec) {
	t.Helper()
	if !s.arms[act].set(&a, &b) {
		t.Fatalf("arm %d: A does not invert", act)
	}
}

// notesModel is the notes' example model: "A_wait = 2I, b_wait = 0.4·e₁.
// A_send = I, b_send = 0."
func notesModel(t *testing.T, s *Scheduler) {
	setArm(t, s, actWait, diag(2, 2, 2, 2, 2, 2), vec{0.4})
	setArm(t, s, actSend, diag(1, 1, 1, 1, 1, 1), vec{})
}

func near(got, want float64) bool { return math.Abs(got-want) <= 1e-9*max(1, math.Abs(want)) }

// Notes, Peekaboo unit test: "x = e₁ = (1, 0, 0, 0, 0, 0). A_wait = 2I,
// b_wait = 0.4·e₁. A_send = I, b_send = 0. LinUCB: wait has mean 0.2 and UCB
// 0.2 + 0.75·√0.5 = 0.7303. Send has mean 0 and UCB 0.75. Since 0.75 < 0.7303
// is false: SEND."
// Notes, lowband: "p_a = θ_aᵀx + α·√(xᵀA_a⁻¹x), with α = 0.75. WAIT iff
// p_send < p_wait; a tie means SEND."
func TestLinUCBNotesExample(t *testing.T) {
	s := New(Options{})
	notesModel(t, s)
	x := e1
	tests := []struct {
		name      string
		got, want float64
	}{
		{"mean wait", s.arms[actWait].mean(&x), 0.2},
		{"UCB wait", s.arms[actWait].ucb(&x, Alpha), 0.2 + 0.75*math.Sqrt(0.5)},
		{"mean send", s.arms[actSend].mean(&x), 0},
		{"UCB send", s.arms[actSend].ucb(&x, Alpha), 0.75},
	}
	for _, tt := range tests {
		if !near(tt.got, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	if got, want := s.choose(&x), uint8(actSend); got != want {
		t.Errorf("choose: got %d, want %d (SEND)", got, want)
	}
	// A tie sends: with the initial model both UCBs are α·‖x‖.
	fresh := New(Options{})
	if got, want := fresh.choose(&x), uint8(actSend); got != want {
		t.Errorf("tie: got %d, want %d (SEND)", got, want)
	}
}

// Notes, peek mode: "If θ_sendᵀx < θ_waitᵀx: WAIT with probability 0.7,
// else SEND. Otherwise: SEND with probability 0.9, else WAIT. It draws
// rand.Intn(100) < 70 or < 90." and the unit test: "peek mode: 0 < 0.2, so
// WAIT is preferred. u = 42 → WAIT; u = 85 → SEND."
func TestPeekNotesExample(t *testing.T) {
	tests := []struct {
		name       string
		preferWait bool
		u          int
		want       uint8
	}{
		{"θ prefers WAIT, u = 42", true, 42, actWait},
		{"θ prefers WAIT, u = 69", true, 69, actWait},
		{"θ prefers WAIT, u = 70", true, 70, actSend},
		{"θ prefers WAIT, u = 85", true, 85, actSend},
		{"θ prefers SEND, u = 85", false, 85, actSend},
		{"θ prefers SEND, u = 89", false, 89, actSend},
		{"θ prefers SEND, u = 90", false, 90, actWait},
	}
	for _, tt := range tests {
		s := New(Options{Mode: Peek, Rand: fixedDraw(tt.u)})
		notesModel(t, s)
		if !tt.preferWait {
			setArm(t, s, actWait, diag(1, 1, 1, 1, 1, 1), vec{})
			setArm(t, s, actSend, diag(2, 2, 2, 2, 2, 2), vec{0.4})
		}
		x := e1
		if got := s.choose(&x); got != tt.want {
			t.Errorf("%s: got action %d, want %d", tt.name, got, tt.want)
		}
	}
}

// Notes, peek mode: "In this mode A and b are not updated." The seeded
// default Rand makes runs reproducible.
func TestPeekDoesNotLearn(t *testing.T) {
	run := func() (acts [20]sched.Action) {
		s := New(Options{Mode: Peek, Seed: 7})
		for i := range acts {
			paths := blocked()
			c := conn(t0.Add(time.Duration(i)*ms), 100)
			acts[i] = s.Decide(&c, paths).Action
			s.waiting = false // look at every draw, not one per episode
			s.SegmentAcked(c.Now.Add(10*ms), 1, 1000, mss, c.Now)
			s.SegmentAcked(c.Now.Add(10*ms), 2, 1000, mss, c.Now)
			if got := s.Pending(); got != 0 {
				t.Fatalf("peek mode logged %d decisions", got)
			}
		}
		if s.arms[actWait].a != diag(1, 1, 1, 1, 1, 1) || s.arms[actSend].a != diag(1, 1, 1, 1, 1, 1) {
			t.Errorf("peek mode changed A")
		}
		return acts
	}
	if a, b := run(), run(); a != b {
		t.Errorf("same seed, different decisions: %v vs %v", a, b)
	}
}

// Notes: "Update after a SEND acked 50 ms later: r = 1460/0.05 = 29200 B/s.
// A_send = diag(2, 1, 1, 1, 1, 1), b_send = 29200·e₁, new mean = 14600."
// In this package's unit, MB/s: r = 0.0292, b_send = 0.0292·e₁, mean 0.0146.
// Notes, reward: "r = MSS/(now − t₀); A_a += xxᵀ; b_a += r·x. One rank-1
// update per acknowledged decision."
func TestUpdateNotesExample(t *testing.T) {
	s := New(Options{})
	x := e1
	sp := sched.PathInfo{ID: 2, MSS: mss}
	c := sched.ConnInfo{Now: t0, NextSeq: 7}
	s.push(&x, actSend, &sp, &c)

	// Not the decision's acknowledgement: another path, an earlier segment.
	s.SegmentAcked(t0.Add(10*ms), 1, 9, mss, t0)
	s.SegmentAcked(t0.Add(20*ms), 2, 6, mss, t0)
	if got := s.Pending(); got != 1 {
		t.Fatalf("pending after unrelated acks: got %d, want 1", got)
	}
	s.SegmentAcked(t0.Add(50*ms), 2, 7, mss, t0)
	// A second acknowledgement does not update again.
	s.SegmentAcked(t0.Add(60*ms), 2, 8, mss, t0)

	m := &s.arms[actSend]
	if got, want := m.a, diag(2, 1, 1, 1, 1, 1); got != want {
		t.Errorf("A_send: got %v, want %v", got, want)
	}
	if got, want := m.b, (vec{29200 / rateUnit}); !near(got[0], want[0]) || got[1] != 0 {
		t.Errorf("b_send: got %v, want %v", got, want)
	}
	if got, want := m.mean(&x), 14600/rateUnit; !near(got, want) {
		t.Errorf("new mean θ_sendᵀx: got %v, want %v", got, want)
	}
	if got, want := s.arms[actWait].a, diag(1, 1, 1, 1, 1, 1); got != want {
		t.Errorf("A_wait changed: got %v, want %v", got, want)
	}
	if got := s.Pending(); got != 0 {
		t.Errorf("pending: got %d, want 0", got)
	}
}

// blocked returns f (20 ms, full) and s (80 ms, room) with 1460-byte MSS.
func blocked() []sched.PathInfo {
	p := func(id sched.PathID, rtt time.Duration, cwnd, inflight uint64) sched.PathInfo {
		return sched.PathInfo{ID: id, SmoothedRTT: rtt, MinRTT: rtt, LatestRTT: rtt,
			CongestionWindow: cwnd * mss, BytesInFlight: inflight * mss, MSS: mss}
	}
	return []sched.PathInfo{p(1, 20*ms, 10, 10), p(2, 80*ms, 20, 10)}
}

func conn(now time.Time, next uint64) sched.ConnInfo {
	return sched.ConnInfo{Now: now, SendBufferBytes: 100 * mss, PeerWindow: 65536, NextSeq: next, SegmentSize: mss}
}

// Notes, context: "6 features: bytes divided by the *latest* RTT sample ...
// x = [cwnd_f/r_f, inflight_s/r_s, SW/r_f, SW/r_s, inflight_f/r_f,
// cwnd_s/r_s]", here with RTTs in seconds and rates in MB/s.
func TestContext(t *testing.T) {
	paths := blocked()
	paths[1].BytesQueued = 2 * mss
	c := conn(t0, 0)
	var x vec
	context(&x, &c, &paths[0], &paths[1])
	want := vec{0.73, 0.219, 3.2768, 0.8192, 0.73, 0.365}
	for i := range x {
		if !near(x[i], want[i]) {
			t.Errorf("x[%d]: got %v, want %v", i, x[i], want[i])
		}
	}
}

// Notes, latching: "after a WAIT, waiting = 1 and every later call returns
// WAIT until f can send again, which resets waiting = 0. So Peekaboo makes one
// decision per blocking episode." and "A pending retransmission goes to s."
func TestLatching(t *testing.T) {
	s := New(Options{})
	preferWait := func() {
		setArm(t, s, actWait, diag(1, 1, 1, 1, 1, 1), vec{10, 10, 10, 10, 10, 10})
		setArm(t, s, actSend, diag(1, 1, 1, 1, 1, 1), vec{})
	}
	preferSend := func() {
		setArm(t, s, actWait, diag(1, 1, 1, 1, 1, 1), vec{})
		setArm(t, s, actSend, diag(1, 1, 1, 1, 1, 1), vec{10, 10, 10, 10, 10, 10})
	}
	fRoom := blocked()
	fRoom[0].BytesInFlight = 5 * mss
	wait := sched.Decision{Action: sched.Wait}
	onF := sched.Decision{Action: sched.SendNext, Paths: sched.Of(0)}
	onS := sched.Decision{Action: sched.SendNext, Paths: sched.Of(1)}

	preferWait()
	steps := []struct {
		name        string
		paths       []sched.PathInfo
		resend      uint64
		flip        bool // switch the model to prefer SEND before the call
		want        sched.Decision
		waitingWant bool
		pendingWant int
	}{
		{"f blocked: bandit says WAIT", blocked(), 0, false, wait, true, 1},
		{"latched, even if SEND is now better", blocked(), 0, true, wait, true, 1},
		{"latched: a retransmission goes to s", blocked(), 3, false, onS, true, 1},
		{"f can send: latch cleared", fRoom, 0, false, onF, false, 1},
		{"f blocked again: new decision", blocked(), 0, false, onS, false, 2},
	}
	for i, st := range steps {
		if st.flip {
			preferSend()
		}
		c := conn(t0.Add(time.Duration(i)*ms), 100+uint64(i))
		c.RetransmitQueued = st.resend
		if got := s.Decide(&c, st.paths); got != st.want {
			t.Errorf("%s: got %+v, want %+v", st.name, got, st.want)
		}
		if got := s.Waiting(); got != st.waitingWant {
			t.Errorf("%s: waiting got %v, want %v", st.name, got, st.waitingWant)
		}
		if got := s.Pending(); got != st.pendingWant {
			t.Errorf("%s: pending got %d, want %d", st.name, got, st.pendingWant)
		}
	}
}

// Notes, reward: "At decision time, store (x, a, t₀, pn*), where pn* is the
// last packet number sent on the chosen path + 1. ... When the chosen path's
// largest in-order acked packet number ≥ pn*: r = MSS/(now − t₀); A_a += xxᵀ;
// b_a += r·x." For a WAIT the chosen path is f and pn* is the next segment
// (ConnInfo.NextSeq at decision time), so the reward counts the wait.
func TestWaitReward(t *testing.T) {
	s := New(Options{})
	setArm(t, s, actWait, diag(1, 1, 1, 1, 1, 1), vec{10, 10, 10, 10, 10, 10})
	paths := blocked()
	c := conn(t0, 100)
	if got := s.Decide(&c, paths); got.Action != sched.Wait {
		t.Fatalf("got %+v, want WAIT", got)
	}
	var x vec
	context(&x, &c, &paths[0], &paths[1])
	before := s.arms[actWait]

	s.SegmentAcked(t0.Add(30*ms), 2, 100, mss, t0) // on s: not the decision's path
	if s.arms[actWait] != before || s.Pending() != 1 {
		t.Fatalf("an ack on s rewarded a WAIT for f")
	}
	s.SegmentAcked(t0.Add(40*ms), 1, 100, mss, t0.Add(20*ms))
	r := mss / 0.04 / rateUnit
	m := &s.arms[actWait]
	for i := range dim {
		for j := range dim {
			want := before.a[i][j] + x[i]*x[j]
			if !near(m.a[i][j], want) {
				t.Errorf("A_wait[%d][%d]: got %v, want %v", i, j, m.a[i][j], want)
			}
		}
		if want := before.b[i] + r*x[i]; !near(m.b[i], want) {
			t.Errorf("b_wait[%d]: got %v, want %v", i, m.b[i], want)
		}
	}
	if got := s.Pending(); got != 0 {
		t.Errorf("pending: got %d, want 0", got)
	}
}

// Brief: "Bound the pending-decision log with a fixed-size ring." When it is
// full, the oldest pending decision is dropped; acknowledgements reward
// records anywhere in the ring.
func TestRing(t *testing.T) {
	s := New(Options{})
	x := e1
	for i := range LogSize + 10 {
		p := sched.PathInfo{ID: sched.PathID(1 + i%2), MSS: mss}
		c := sched.ConnInfo{Now: t0, NextSeq: uint64(i)}
		s.push(&x, actSend, &p, &c)
	}
	if got, want := s.Pending(), LogSize; got != want {
		t.Errorf("pending: got %d, want %d", got, want)
	}
	if got, want := s.Dropped(), uint64(10); got != want {
		t.Errorf("dropped: got %d, want %d", got, want)
	}
	// Path 2 carried the odd segments 11, 13, ...; acking segment 51 on it
	// rewards its records 11..51 only, all behind the oldest (path 1, seq 10).
	s.SegmentAcked(t0.Add(10*ms), 2, 51, mss, t0)
	if got, want := s.Pending(), LogSize-21; got != want {
		t.Errorf("pending after a path-2 ack: got %d, want %d", got, want)
	}
	if got, want := s.arms[actSend].a[0][0], 1+21.0; got != want {
		t.Errorf("A_send[0][0]: got %v, want %v (21 rank-1 updates)", got, want)
	}
	s.SegmentAcked(t0.Add(20*ms), 1, 1<<20, mss, t0)
	s.SegmentAcked(t0.Add(20*ms), 2, 1<<20, mss, t0)
	if got := s.Pending(); got != 0 || s.n != 0 {
		t.Errorf("after acking everything: pending %d, ring %d, want 0", got, s.n)
	}
}

// Brief: "A should be inverted with a fixed-size 6×6 routine (no
// allocations on the decision path; Gauss-Jordan or Sherman–Morrison on
// arrays)": A·A⁻¹ = I for a positive definite matrix like the learner's, and
// a singular matrix is refused.
func TestInvert(t *testing.T) {
	a := diag(1, 1, 1, 1, 1, 1)
	xs := []vec{
		{7e5, 2e5, 3e6, 8e5, 7e5, 3e5},
		{1e5, 9e5, 1e6, 2e6, 1e5, 5e5},
		{3e5, 1e5, 2e6, 4e5, 2e5, 6e5},
	}
	for _, x := range xs {
		for i := range dim {
			for j := range dim {
				a[i][j] += x[i] * x[j] / 1e12 // in MB/s
			}
		}
	}
	var inv mat
	if !invert(&a, &inv) {
		t.Fatal("invert failed")
	}
	for i := range dim {
		for j := range dim {
			var got float64
			for k := range dim {
				got += a[i][k] * inv[k][j]
			}
			want := 0.0
			if i == j {
				want = 1
			}
			if math.Abs(got-want) > 1e-9 {
				t.Errorf("(A·A⁻¹)[%d][%d]: got %v, want %v", i, j, got, want)
			}
		}
	}
	var singular mat
	if invert(&singular, &inv) {
		t.Errorf("invert of the zero matrix succeeded")
	}
}

// quad, the symmetric shortcut of the UCB's xᵀA⁻¹x, agrees with the full
// double sum on the A⁻¹ that updates produce (symmetric up to rounding).
func TestQuadSymmetric(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var m arm
	m.reset()
	for k := range 200 {
		var x vec
		for i := range x {
			x[i] = rng.Float64() * 40 // MB/s
		}
		if !m.update(&x, rng.Float64()*10) {
			t.Fatalf("update %d rejected", k)
		}
		var full float64
		for i := range dim {
			for j := range dim {
				full += x[i] * m.inv[i][j] * x[j]
			}
		}
		if got := quad(&m.inv, &x); math.Abs(got-full) > 1e-9*math.Abs(full)+1e-15 {
			t.Fatalf("update %d: quad %v, full sum %v", k, got, full)
		}
	}
}

// Notes, "Don't copy: ... nanosecond units (tiny features/rewards; use
// seconds)". Package doc: in MB/s the learner stays well conditioned. 10⁴ updates with
// realistic contexts (RTT 20 and 80 ms, windows up to 4 MB) must all be
// accepted and keep A·A⁻¹ = I to 10⁻⁶ (in bytes per second almost all of
// them fail).
func TestConditioning(t *testing.T) {
	s := New(Options{})
	rng := rand.New(rand.NewPCG(1, 2))
	paths := blocked()
	var x vec
	for n := range 10000 {
		paths[0].LatestRTT = time.Duration(20e6 * (1 + 0.2*rng.Float64()))
		paths[1].LatestRTT = time.Duration(80e6 * (1 + 0.2*rng.Float64()))
		paths[1].BytesInFlight = uint64(rng.IntN(200e3))
		c := conn(t0, 0)
		c.PeerWindow = uint64(rng.IntN(4e6))
		context(&x, &c, &paths[0], &paths[1])
		if !s.arms[n%2].update(&x, 0.03*rng.Float64()) {
			t.Fatalf("update %d rejected", n)
		}
	}
	for k := range s.arms {
		m := &s.arms[k]
		for i := range dim {
			for j := range dim {
				var got float64
				for l := range dim {
					got += m.a[i][l] * m.inv[l][j]
				}
				want := 0.0
				if i == j {
					want = 1
				}
				if math.Abs(got-want) > 1e-6 {
					t.Errorf("arm %d: (A·A⁻¹)[%d][%d] = %v, want %v", k, i, j, got, want)
				}
			}
		}
	}
}

// Brief: "Persisting A,b across connections: provide methods to
// export/import the model (e.g. MarshalBinary/UnmarshalBinary) with
// validation of bad input."
func TestModelRoundTrip(t *testing.T) {
	s := New(Options{})
	paths := blocked()
	for i := range 5 {
		c := conn(t0.Add(time.Duration(i)*100*ms), uint64(i))
		s.waiting = false
		s.Decide(&c, paths)
		s.SegmentAcked(c.Now.Add(time.Duration(30+10*i)*ms), 2, uint64(i), mss, c.Now)
		s.SegmentAcked(c.Now.Add(time.Duration(30+10*i)*ms), 1, uint64(i), mss, c.Now)
	}
	if s.arms[actSend].a == diag(1, 1, 1, 1, 1, 1) {
		t.Fatal("the model did not learn anything to export")
	}
	data, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(data), modelSize; got != want {
		t.Errorf("size: got %d, want %d", got, want)
	}
	u := New(Options{Mode: Peek})
	if err := u.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	if u.arms != s.arms {
		t.Errorf("imported model differs:\n got %v\nwant %v", u.arms, s.arms)
	}
}

func TestModelBadInput(t *testing.T) {
	good, _ := New(Options{}).MarshalBinary()
	// put returns a copy of d with v at A_k[i][j] (j = dim: at b_k[i]).
	put := func(d []byte, k, i, j int, v float64) []byte {
		d = append([]byte(nil), d...)
		off := len(modelMagic) + (k*armFloats+i*dim+j)*8
		if j == dim {
			off = len(modelMagic) + (k*armFloats+dim*dim+i)*8
		}
		binary.LittleEndian.PutUint64(d[off:], math.Float64bits(v))
		return d
	}
	asym := put(good, 1, 0, 1, 0.5)
	indefinite := put(put(good, 0, 0, 1, 2), 0, 1, 0, 2) // [[1 2] [2 1]] block: eigenvalue −1
	tests := []struct {
		name string
		data []byte
		want error
	}{
		{"empty", nil, ErrModelSize},
		{"short", good[:len(good)-1], ErrModelSize},
		{"long", append(append([]byte(nil), good...), 0), ErrModelSize},
		{"magic", append([]byte("XKB1"), good[4:]...), ErrModelMagic},
		{"NaN in A", put(good, 0, 2, 3, math.NaN()), ErrModelValues},
		{"+Inf in b", put(good, 1, 4, dim, math.Inf(1)), ErrModelValues},
		{"diagonal below 1", put(good, 1, 5, 5, 0.5), ErrModelMatrix},
		{"asymmetric", asym, ErrModelMatrix},
		{"indefinite", indefinite, ErrModelMatrix},
	}
	for _, tt := range tests {
		s := New(Options{})
		setArm(t, s, actSend, diag(3, 1, 1, 1, 1, 1), vec{5})
		before := s.arms
		if got := s.UnmarshalBinary(tt.data); got != tt.want {
			t.Errorf("%s: got error %v, want %v", tt.name, got, tt.want)
		}
		if s.arms != before {
			t.Errorf("%s: a rejected model changed the scheduler", tt.name)
		}
	}
}

// registry.go: "Register makes a scheduler available by name, like the
// kernel's net.mptcp.scheduler sysctl"; sched.New(name) "returns a new
// instance of the named scheduler".
func TestRegistered(t *testing.T) {
	s, err := sched.New(Name)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Name(), Name; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := s.(*Scheduler).Mode(), Learning; got != want {
		t.Errorf("default mode: got %v, want %v", got, want)
	}
}

// sched.Scheduler: "Decide is on the hot path: it must not allocate."
// Checked in both modes; the acknowledgement path does not allocate either.
func TestDecideDoesNotAllocate(t *testing.T) {
	for _, mode := range []Mode{Learning, Peek} {
		for _, n := range []int{2, 4, 8} {
			if got := schedtest.AllocsPerDecide(New(Options{Mode: mode}), n); got != 0 {
				t.Errorf("%v, %d paths: got %v allocs per Decide, want 0", mode, n, got)
			}
		}
	}
	s := New(Options{})
	x := e1
	p := sched.PathInfo{ID: 2, MSS: mss}
	var seq uint64
	got := alloctest.Mallocs(100, func() {
		c := sched.ConnInfo{Now: t0, NextSeq: seq}
		s.push(&x, actSend, &p, &c)
		s.SegmentAcked(t0.Add(10*ms), 2, seq, mss, t0)
		seq++
	})
	if got != 0 {
		t.Errorf("SegmentAcked: %d allocations in 100 calls, want 0", got)
	}
}

func BenchmarkDecide(b *testing.B) {
	b.Run(Name, func(b *testing.B) {
		schedtest.BenchmarkDecide(b, func() sched.Scheduler { return New(Options{}) })
	})
}
