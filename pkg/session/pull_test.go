package session

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/emu"
	"github.com/mpqsched/mpqsched/pkg/wire"
	"github.com/mpqsched/mpqsched/sched"
)

// SendStream.WriteWithLimit (quic-go v0.65): the limiter "can run multiple
// times on another goroutine while QUIC send flow-control accounting is
// locked. It must be concurrency-safe and must not block or call QUIC
// methods."
//
// The limiter runs here while the test holds every lock of the session
// (Session.mu and the scheduler's lock) and the send pass's wake channel is
// full: it must still answer every call, let through exactly what is left
// of the write's segments, never more, and mark a pull when asked for more.
// The path has no QUIC connection or stream, and the writer's shared state
// holds no quic-go value, so it cannot call quic-go either.
func TestLimiterNeverBlocks(t *testing.T) {
	for i := range reflect.TypeFor[pullWriter]().NumField() {
		f := reflect.TypeFor[pullWriter]().Field(i)
		if strings.Contains(f.Type.PkgPath(), "quic-go") || strings.Contains(f.Type.String(), "quic.") {
			t.Errorf("pullWriter.%s is a %v: the limiter must not reach quic-go", f.Name, f.Type)
		}
	}
	sp := newScriptedPeer(t, nil)
	s := sp.s
	p := &path{notify: make(chan struct{}, 1)} // no conn, no stream
	p.pw.init()
	poke(s.wake) // the wake channel is full: a blocking send would hang
	s.snd.schedMu.Lock()
	s.mu.Lock()
	defer func() {
		s.mu.Unlock()
		s.snd.schedMu.Unlock()
		sp.close()
	}()

	type step struct {
		seg       int // bytes of segments the writer hands over before this call (0: none)
		max, want int
		pull      bool
	}
	steps := []step{
		{seg: 3000, max: 1200, want: 1200},
		{max: 1200, want: 1200},
		{max: 1200, want: 600, pull: true}, // 600 left: a short answer is a pull
		{max: 1, want: 0, pull: true},      // only the pad left
		{seg: 100, max: 1200, want: 100, pull: true},
		{seg: 1200, max: 1200, want: 1200},
		{max: -5, want: 0}, // quic-go never asks for less than nothing, but a negative ask is refused
		{max: 0, want: 0},
	}
	done := make(chan error, 1)
	go func() {
		var committed uint64
		for i, st := range steps {
			if st.seg > 0 {
				p.pw.pulled.Store(false)
				p.pw.end.Store(p.pw.committed.Load() + uint64(st.seg))
			}
			got := p.pw.limiter(st.max)
			committed += uint64(max(got, 0))
			switch {
			case got != st.want:
				done <- fmt.Errorf("step %d: limiter(%d) = %d, want %d", i, st.max, got, st.want)
				return
			case p.pw.committed.Load() != committed || committed > p.pw.end.Load():
				done <- fmt.Errorf("step %d: committed %d (counted %d), end %d", i, p.pw.committed.Load(), committed, p.pw.end.Load())
				return
			case p.pw.pulled.Load() != st.pull:
				done <- fmt.Errorf("step %d: pulled %v, want %v", i, p.pw.pulled.Load(), st.pull)
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second): // a liveness bound, not a timing: each call takes nanoseconds
		t.Fatal("the limiter blocked while the session's locks were held and its wake channel was full")
	}
	if got := p.pw.pulls.Load(); got != 3 {
		t.Errorf("%d pulls counted, want 3", got)
	}
}

// pullSend is one batch of segments a session handed to quic-go.
type pullSend struct {
	at   time.Time
	s    *Session
	path sched.PathID
	seqs []uint64
	n    int
}

// tapPullSends records every segment batch (parsed) until the test ends.
func tapPullSends(t *testing.T) (get func() []pullSend) {
	var mu sync.Mutex
	var out []pullSend
	sendTap = func(s *Session, p *path, kind sendKind, b []byte) {
		if kind != sentSegments {
			return
		}
		x := pullSend{at: time.Now(), s: s, path: p.id, n: len(b)}
		for used := 0; used < len(b); {
			seg, n, err := wire.ParseSegment(b[used:])
			if err != nil || n == 0 {
				t.Errorf("path %d: a batch of %d bytes holds a partial or malformed frame at %d: %v", p.id, len(b), used, err)
				break
			}
			x.seqs = append(x.seqs, seg.Seq)
			used += n
		}
		mu.Lock()
		out = append(out, x)
		mu.Unlock()
	}
	t.Cleanup(func() { sendTap = nil })
	return func() []pullSend {
		mu.Lock()
		defer mu.Unlock()
		return append([]pullSend(nil), out...)
	}
}

// checkPullSends checks what s handed to quic-go against what quic-go took
// through the limiters: every byte of every batch, and nothing more (the
// pad never went); and no path carried a segment twice (a path's copies and
// retransmissions are quic-go's, the session sends a segment again only on
// another path). It returns the batches per path ID.
func checkPullSends(t *testing.T, name string, s *Session, sends []pullSend) map[sched.PathID]int {
	t.Helper()
	bytesOn := map[sched.PathID]uint64{}
	batches := map[sched.PathID]int{}
	seen := map[sched.PathID]map[uint64]bool{}
	for _, x := range sends {
		if x.s != s {
			continue
		}
		bytesOn[x.path] += uint64(x.n)
		batches[x.path]++
		if seen[x.path] == nil {
			seen[x.path] = map[uint64]bool{}
		}
		for _, q := range x.seqs {
			if seen[x.path][q] {
				t.Errorf("%s: path %d carried segment %d twice", name, x.path, q)
			}
			seen[x.path][q] = true
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.allPaths {
		if got := p.pw.committed.Load(); got != bytesOn[p.id] {
			t.Errorf("%s: path %d: quic-go took %d bytes through the limiter, the session handed it %d", name, p.id, got, bytesOn[p.id])
		}
	}
	return batches
}

// idlePullState checks that every path of s is idle as pull mode leaves it:
// nothing handed and not taken, and the path counted as pulled (it has room
// and asks for nothing).
func idlePullState(t *testing.T, name string, s *Session) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.slots {
		if p == nil {
			continue
		}
		if q := p.queued(); q != 0 || len(p.queue) != 0 {
			t.Errorf("%s: path %d holds %d bytes (%d segments) not taken by quic-go", name, p.id, q, len(p.queue))
		}
		if !p.pw.pulled.Load() {
			t.Errorf("%s: idle path %d is not marked pulled: nothing would give it data", name, p.id)
		}
	}
}

// firstOnly is a test scheduler that sends only on the first path of the
// snapshot until a time, then as minRTT would on any path with room; it
// never asks to be called again (RetryAt is zero). Decide does not allocate.
type firstOnly struct {
	until   time.Time
	asked   int // Decide calls while path 1 had room and was declined
	allowed bool
}

func (f *firstOnly) Name() string { return "first-only" }

func (f *firstOnly) Decide(c *sched.ConnInfo, paths []sched.PathInfo) sched.Decision {
	if c.Now.Before(f.until) {
		if len(paths) > 1 && paths[1].SendingAllowed() {
			f.asked++
		}
		if paths[0].SendingAllowed() {
			return sched.Decision{Action: sched.SendNext, Paths: sched.Of(0)}
		}
		return sched.Decision{Action: sched.Wait}
	}
	f.allowed = true
	for i := range paths {
		if paths[i].SendingAllowed() {
			return sched.Decision{Action: sched.SendNext, Paths: sched.Of(i)}
		}
	}
	return sched.Decision{Action: sched.Wait}
}

// "A declined pull leaves the path idle until the next decision point"
// (issue 24, item 1): a scheduler that waits rather than use a path (BLEST
// and ECF waiting for a faster one) must not make that path ask again and
// again. The server's scheduler declines its second path for the first 2 s
// of a download over two paths: the second path carries nothing then, its
// limiter is never asked (it has nothing in quic-go), and the send pass
// wakes no more often than with the path left out. After 2 s the next
// decision (the first path's pull, or an Ack) gives it data, with no timer.
func TestDeclinedPullLeavesPathIdle(t *testing.T) {
	const size = 6 << 20
	run := func(t *testing.T, paths int) (batches map[sched.PathID]int, wakes wakeCount, sch *firstOnly) {
		// wakes counts the server's send-loop wake-ups while the second
		// path is declined: from the request to the end of the first 2 s.
		synctest.Test(t, func(t *testing.T) {
			c := startCapture(t)
			get := tapPullSends(t)
			sch = &firstOnly{until: time.Now().Add(2 * time.Second)}
			link := emu.LinkConfig{RateBps: 10e6, Delay: 10 * time.Millisecond}
			specs := []emu.PathSpec{{Up: link, Down: link}, {Up: link, Down: link}}[:paths]
			srvCfg := &Config{NewScheduler: func() sched.Scheduler { return sch }}
			tb := newTestbedCfgs(t, 1, srvCfg, nil, paths > 1, specs...)
			defer tb.close()
			st, err := tb.cli.OpenStream()
			if err != nil {
				t.Fatal(err)
			}
			st.Write([]byte{1})
			peer := accept(t, tb.srv, 10*time.Second)
			io.ReadFull(peer, make([]byte, 1))
			m0 := c.mark()
			declined := make(chan wakeCount, 1)
			go func() {
				time.Sleep(time.Until(sch.until))
				declined <- c.wakeups(m0, tb.srv)
			}()
			go func() {
				peer.Write(bytes.Repeat([]byte{7}, size))
				peer.Close()
			}()
			if got := readAll(t, st, time.Minute); len(got) != size {
				t.Fatalf("read %d bytes, want %d", len(got), size)
			}
			sends := get()
			batches = checkPullSends(t, "server", tb.srv, sends)
			wakes = <-declined
			if tb.srv.Stats().Traced {
				t.Errorf("the server keeps tracers for a scheduler that needs no per-ACK signals")
			}
			if paths == 1 {
				return
			}
			tb.srv.mu.Lock()
			p1 := tb.srv.slots[1]
			tb.srv.mu.Unlock()
			for _, x := range sends {
				if x.s == tb.srv && x.path == p1.id && x.at.Before(sch.until) {
					t.Errorf("the declined path carried %d bytes at %v, before it was allowed", x.n, x.at.Sub(sch.until))
				}
			}
			if pulls := p1.pw.pulls.Load(); pulls > uint64(batches[p1.id]) {
				t.Errorf("the second path pulled %d times in %d batches: more than once per write", pulls, batches[p1.id])
			}
		})
		return
	}
	var base wakeCount
	t.Run("one-path", func(t *testing.T) { _, base, _ = run(t, 1) })
	t.Run("two-paths", func(t *testing.T) {
		batches, wakes, sch := run(t, 2)
		t.Logf("batches per path %v; first 2 s: %v (one path: %v); declined %d times", batches, wakes, base, sch.asked)
		if sch.asked == 0 {
			t.Fatalf("the scheduler never saw the second path with room: the test declined nothing")
		}
		if !sch.allowed {
			t.Fatalf("the transfer ended before the second path was allowed")
		}
		if len(batches) < 2 {
			t.Errorf("the second path carried nothing after it was allowed: batches %v", batches)
		}
		// While declined, the second path adds no wake-ups of its own: the
		// send pass wakes as often as with the path left out (give or take
		// 5% and the second path's join), and its timer no more.
		total := func(w wakeCount) int { return w[loopSend][wokePoked] + w[loopSend][wokeTimer] }
		if got, want := total(wakes), total(base); float64(got) > 1.05*float64(want)+10 {
			t.Errorf("in the first 2 s the send pass woke %d times, with one path %d: the declined path keeps asking", got, want)
		}
		if got, want := wakes[loopSend][wokeTimer], base[loopSend][wokeTimer]; got > want+2 {
			t.Errorf("in the first 2 s the send pass's timer fired %d times, with one path %d", got, want)
		}
	})
}

// The pull writer under concurrency: seeded random sessions over three
// emulated paths of random rates, delays and losses, with a random
// scheduler among those that keep no tracer, and several streams each way
// written and read at once in random pieces. Every stream's bytes arrive
// intact; at both ends, quic-go took through the limiters exactly the bytes
// the session handed it (the pad never went), no path carried a segment
// twice, and once the transfers are over every path is idle as pull mode
// leaves it.
//
// MPQ_PULL_SEEDS=1,2,3 picks the seeds; a failure names its seed.
func TestPullModel(t *testing.T) {
	seeds := []uint64{1, 2, 3, 4}
	if testing.Short() {
		seeds = seeds[:2]
	}
	seeds = seedsFromEnv(t, "MPQ_PULL_SEEDS", seeds)
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("reproduce with: MPQ_PULL_SEEDS=%d go test -run TestPullModel ./pkg/session/", seed)
				}
			})
			synctest.Test(t, func(t *testing.T) { runPullModel(t, seed) })
		})
	}
}

// pullModelScheds are the schedulers the model draws from: every one that
// leaves the tracer off (sched.PerAckSignals), waiting ones included.
var pullModelScheds = []string{"minrtt", "blest", "ecf", "roundrobin", "redundant", "peekaboo", "prs", "fprs", "xlink", "streamaware"}

func runPullModel(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0x9011))
	rates := []float64{5e6, 10e6, 20e6, 40e6}
	losses := []float64{0, 0.005, 0.02}
	specs := make([]emu.PathSpec, 3)
	for i := range specs {
		l := emu.LinkConfig{RateBps: rates[rng.IntN(len(rates))], Delay: time.Duration(1+rng.IntN(20)) * time.Millisecond, Loss: losses[rng.IntN(len(losses))]}
		specs[i] = emu.PathSpec{Up: l, Down: l}
	}
	name := pullModelScheds[rng.IntN(len(pullModelScheds))]
	cfg := &Config{Scheduler: name}
	get := tapPullSends(t)
	tb := newTestbedOn(t, int64(seed), cfg, true, specs...)
	defer tb.close()
	nstreams := 4 + rng.IntN(9)
	type plan struct{ up, down, chunk int }
	plans := make([]plan, nstreams)
	for i := range plans {
		plans[i] = plan{up: rng.IntN(200 << 10), down: 1 + rng.IntN(1500<<10), chunk: 1 + rng.IntN(64<<10)}
	}
	var desc []string
	for _, sp := range specs {
		desc = append(desc, fmt.Sprintf("%.0f Mbit/s %v %.1f%%", sp.Up.RateBps/1e6, 2*sp.Up.Delay, 100*sp.Up.Loss))
	}
	t.Logf("seed %d: %s over %s; %d streams", seed, name, strings.Join(desc, ", "), nstreams)

	var wg sync.WaitGroup
	write := func(st *Stream, b []byte, chunk int) {
		for len(b) > 0 {
			n := min(chunk, len(b))
			if _, err := st.Write(b[:n]); err != nil {
				t.Errorf("stream %d: write: %v", st.ID(), err)
				return
			}
			b = b[n:]
		}
		st.Close()
	}
	check := func(st *Stream, want []byte, what string) {
		got := readAll(t, st, 5*time.Minute)
		if sha256.Sum256(got) != sha256.Sum256(want) {
			t.Errorf("stream %d %s: %d bytes arrived, want %d (SHA-256 differs)", st.ID(), what, len(got), len(want))
		}
	}
	// The server answers each stream from its own goroutine.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range nstreams {
			st := accept(t, tb.srv, time.Minute)
			i := int(st.ID() / 4)
			wg.Add(1)
			go func() {
				defer wg.Done()
				check(st, payload(seed, 2*st.ID(), plans[i].up), "up")
				write(st, payload(seed, 2*st.ID()+1, plans[i].down), plans[i].chunk)
			}()
		}
	}()
	for range nstreams {
		st, err := tb.cli.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		i := int(st.ID() / 4)
		wg.Add(2)
		go func() { defer wg.Done(); write(st, payload(seed, 2*st.ID(), plans[i].up), plans[i].chunk) }()
		go func() { defer wg.Done(); check(st, payload(seed, 2*st.ID()+1, plans[i].down), "down") }()
	}
	wg.Wait()
	time.Sleep(5 * time.Second) // the last acknowledgements
	sends := get()
	for _, end := range []struct {
		name string
		s    *Session
	}{{"client", tb.cli}, {"server", tb.srv}} {
		if err := end.s.Err(); err != nil {
			t.Errorf("%s: session ended: %v", end.name, err)
		}
		if end.s.Stats().Traced {
			t.Errorf("%s: %s keeps tracers", end.name, name)
		}
		b := checkPullSends(t, end.name, end.s, sends)
		idlePullState(t, end.name, end.s)
		t.Logf("%s: batches per path %v", end.name, b)
	}
}

// Idle costs nothing in pull mode (brief: "no timer fires without work"):
// after a download over two paths with no tracer, ten virtual minutes of
// idle wake neither end's loops, ask no path for data (their limiters are
// not called: quic-go has nothing to send for them) and send nothing.
func TestIdlePullPathsStayIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := startCapture(t)
		tb := newTestbedOn(t, 1, nil, true, emu.PathSpec{Up: idleLink, Down: idleLink}, emu.PathSpec{Up: idleLink, Down: idleLink})
		defer tb.close()
		requestResponse(t, tb, 100, 400<<10) // within the stream's window: no reader runs beside the Write
		time.Sleep(5 * time.Second)
		type limiterState struct{ committed, pulls uint64 }
		state := func(s *Session) (out []limiterState) {
			s.mu.Lock()
			defer s.mu.Unlock()
			for _, p := range s.slots {
				if p != nil {
					out = append(out, limiterState{p.pw.committed.Load(), p.pw.pulls.Load()})
				}
			}
			return out
		}
		before := [2][]limiterState{state(tb.cli), state(tb.srv)}
		for _, st := range before[1] {
			if st.committed == 0 {
				t.Fatalf("a path of the server carried none of the response (%v): the test idles an unused path", before[1])
			}
		}
		m := c.mark()
		time.Sleep(10 * time.Minute)
		for i, s := range []*Session{tb.cli, tb.srv} {
			name := []string{"client", "server"}[i]
			if s.Stats().Traced {
				t.Errorf("%s keeps tracers", name)
			}
			if got := state(s); fmt.Sprint(got) != fmt.Sprint(before[i]) {
				t.Errorf("%s: limiters (committed, pulls) went from %v to %v while idle", name, before[i], got)
			}
			idlePullState(t, name, s)
			w := c.wakeups(m, s)
			if w[loopSend][wokePoked] > 0 || w[loopAck][wokePoked]+w[loopAck][wokeTimer] > 0 {
				t.Errorf("%s: %v while idle, want no pokes", name, w)
			}
			if got, max := w[loopSend][wokeTimer], int(10*time.Minute/DefaultIdleTimeout)+1; got > max {
				t.Errorf("%s: send pass's timer fired %d times while idle, want ≤ %d (IdleTimeout)", name, got, max)
			}
			if n := len(c.since(m, s)); n > 0 {
				t.Errorf("%s: sent %d times while idle", name, n)
			}
		}
	})
}

// The tracer is on only where something needs it (issue 24, item 2): qlog
// output, a coupled congestion control, or a scheduler that declares it
// needs per-ACK signals (LLHD, EdAR); off for every other scheduler.
func TestTracerOnlyWhereNeeded(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want bool
	}{
		{Config{}, false},
		{Config{Scheduler: "blest"}, false},
		{Config{Scheduler: "redundant"}, false},
		{Config{Scheduler: "llhd"}, true},
		{Config{Scheduler: "edar"}, true},
		{Config{Coupling: "lia"}, true},
		{Config{Coupling: "none"}, false},
		{Config{RenoFriendly: true}, true},
		{Config{QlogDir: t.TempDir()}, true},
	} {
		sch, err := c.cfg.newScheduler()
		if err != nil {
			t.Fatal(err)
		}
		if got, why := tracerNeeded(&c.cfg, sch); got != c.want {
			t.Errorf("%+v: tracer %v (%s), want %v", c.cfg, got, why, c.want)
		}
	}
	// End to end: the sessions' paths carry tracers exactly then.
	synctest.Test(t, func(t *testing.T) {
		for _, c := range []struct {
			cfg  *Config
			want bool
		}{{nil, false}, {&Config{Scheduler: "llhd"}, true}} {
			tb := newTestbedOn(t, 1, c.cfg, true, emu.PathSpec{Up: idleLink, Down: idleLink}, emu.PathSpec{Up: idleLink, Down: idleLink})
			for _, s := range []*Session{tb.cli, tb.srv} {
				s.mu.Lock()
				for _, p := range s.slots {
					if p != nil && (p.tr != nil) != c.want {
						t.Errorf("%v: path %d has tracer %v, want %v", c.cfg, p.id, p.tr != nil, c.want)
					}
				}
				s.mu.Unlock()
			}
			tb.close()
		}
	})
}

// The commit log dates the limiter's count: between two readings it
// interpolates, after the newest it holds the newest, before the oldest it
// knows nothing; readings closer than the gap are dropped, and the ring
// keeps the newest commitLogLen.
func TestCommitLogAt(t *testing.T) {
	var l commitLog
	t0 := time.Unix(1000, 0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	if _, ok := l.at(at(0)); ok {
		t.Fatal("an empty log knows a count")
	}
	l.add(at(0), 1000, time.Millisecond)
	l.add(at(10*time.Millisecond), 3000, time.Millisecond)
	l.add(at(10500*time.Microsecond), 9999, time.Millisecond) // within the gap: dropped
	for _, c := range []struct {
		t    time.Duration
		want uint64
		ok   bool
	}{
		{-time.Millisecond, 0, false},
		{0, 1000, true},
		{5 * time.Millisecond, 2000, true},
		{10 * time.Millisecond, 3000, true},
		{time.Second, 3000, true},
	} {
		got, ok := l.at(at(c.t))
		if got != c.want || ok != c.ok {
			t.Errorf("at(t0%+v) = %d, %v; want %d, %v", c.t, got, ok, c.want, c.ok)
		}
	}
	for i := range 2 * commitLogLen {
		l.add(at(time.Second+time.Duration(i)*time.Millisecond), uint64(10000+i), time.Millisecond)
	}
	oldest := at(time.Second + commitLogLen*time.Millisecond)
	if _, ok := l.at(oldest.Add(-time.Microsecond)); ok {
		t.Errorf("the log still knows a count before its %d newest readings", commitLogLen)
	}
	if got, ok := l.at(oldest); !ok || got != 10000+commitLogLen {
		t.Errorf("at the oldest kept reading: %d, %v", got, ok)
	}
}
