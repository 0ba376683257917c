package scenario

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(math.Abs(a), math.Abs(b)) }

// The default scenario: 20 Mbit/s with 5 ms each way (path 0) + 10 Mbit/s
// with 15 ms each way (path 1), 20 MB. Path 0 is up after 2 RTTs (20 ms) and
// the request reaches the server at 25 ms; path 1's join starts at 20 ms and
// its Join reaches the server after its handshake and an Up delay, at
// 20 + 30 + 15 = 65 ms. The last bit arrives at T with
// 20e6·(T − 5 ms − 25 ms) + 10e6·(T − 15 ms − 65 ms) = 20·2^20·8.
func TestBoundsDefault(t *testing.T) {
	s, _ := Get(Default)
	if got := s.CapacityBps(); !near(got, 30e6, 1e-9) {
		t.Errorf("CapacityBps = %v, want 30e6", got)
	}
	tsec := (20*MB*8 + 20e6*0.030 + 10e6*0.080) / 30e6
	want := time.Duration(tsec * 1e9)
	if got := s.FCTLowerBound(); absDur(got-want) > time.Microsecond {
		t.Errorf("FCTLowerBound = %v, want %v", got, want)
	}
}

// Joins follow path order, whatever the paths' RTTs: a slow first path
// delays the whole transfer and every later join. Path 0: 10 Mbit/s, 50 ms
// each way; path 1: 10 Mbit/s, 5 ms; path 2: 10 Mbit/s, 10 ms. Path 0 sends
// from 2·100 + 50 = 250 ms; path 1's join starts at 200 ms and sends from
// 200 + 10 + 5 = 215 ms; path 2's starts at 200 + 2·10 = 220 ms and sends
// from 220 + 20 + 10 = 250 ms. With 3 Mbit to move:
// 10e6·[(T−50−250) + (T−5−215) + (T−10−250)] ms = 3e6 bits.
func TestBoundsJoinsInPathOrder(t *testing.T) {
	s := Scenario{Name: "j", Duration: sec(10), Bytes: 3e6 / 8,
		Paths: []PathSpec{sym("slow", link(10, 50, 0)), sym("a", link(10, 5, 0)), sym("b", link(10, 10, 0))}}
	tsec := (3e6 + 10e6*(0.300+0.220+0.260)) / 30e6
	if got, want := s.FCTLowerBound(), time.Duration(tsec*1e9); absDur(got-want) > time.Microsecond {
		t.Errorf("FCTLowerBound = %v, want %v", got, want)
	}
	// Path order matters: the fast path first ends sooner.
	s.Paths[0], s.Paths[1] = s.Paths[1], s.Paths[0]
	if got := s.FCTLowerBound(); got >= time.Duration(tsec*1e9) {
		t.Errorf("fast path first: FCTLowerBound = %v, want below %v", got, time.Duration(tsec*1e9))
	}
}

// An outage: one 10 Mbit/s path with 5 ms each way, down from 1 s to 2 s.
// Sending starts at 2·10 + 5 = 25 ms, so 0.025..1 s carries 9.75 Mbit and
// 2..2.525 s the other 5.25 Mbit of 15; the last bit arrives 5 ms later.
func TestBoundsOutage(t *testing.T) {
	l := link(10, 5, 0)
	l.Outages = []Window{win(1, 2)}
	s := Scenario{Name: "o", Paths: []PathSpec{sym("p", l)}, Duration: sec(10)}
	s.Bytes = 15e6 / 8
	if got, want := s.FCTLowerBound(), 2530*time.Millisecond; absDur(got-want) > time.Microsecond {
		t.Errorf("FCTLowerBound = %v, want %v", got, want)
	}
	// CapacityBps averages from one RTT (10 ms): 9.9 Mbit by 1 s, the other
	// 5.1 by 2.51 s.
	if got, want := s.CapacityBps(), 15e6/2.5; !near(got, want, 1e-6) {
		t.Errorf("CapacityBps = %v, want %v", got, want)
	}
	s.Timed = true
	if got := s.CapacityBps(); !near(got, 9e6, 1e-6) {
		t.Errorf("timed CapacityBps = %v, want 9e6", got)
	}
	// Past Duration the link keeps its last rate: of 200 Mbit, 9.75 cross
	// before the outage and the other 190.25 take 19.025 s from 2 s.
	s.Timed, s.Bytes = false, 200e6/8
	if got, want := s.FCTLowerBound(), 21030*time.Millisecond; absDur(got-want) > time.Microsecond {
		t.Errorf("FCTLowerBound past Duration = %v, want %v", got, want)
	}
	// A link that never comes back: no bound.
	s.Paths[0].Down.Outages = []Window{win(1, 10)}
	s.Paths[0].Down.Schedule = []Step{{At: sec(9), RateBps: f64(0)}}
	if got := s.FCTLowerBound(); got != time.Duration(1<<63-1) {
		t.Errorf("dead link: FCTLowerBound = %v, want the largest Duration", got)
	}
}

// The capacity curve of a step, a ramp and an outage on two paths.
func TestCapacityCurve(t *testing.T) {
	a := link(10, 5, 0)
	a.Schedule = []Step{{At: sec(1), RateBps: f64(20e6)}, {At: sec(2), Ramp: sec(1), RateBps: f64(10e6)}}
	b := link(5, 5, 0)
	b.Outages = []Window{win(0.5, 1.5)}
	s := Scenario{Name: "c", Paths: []PathSpec{sym("a", a), sym("b", b)}, Duration: sec(4), Bytes: 1}
	tt, bps := s.CapacityCurve()
	want := [][2]float64{{0, 15e6}, {0.5, 15e6}, {0.5, 10e6}, {1, 10e6}, {1, 20e6}, {1.5, 20e6}, {1.5, 25e6}, {2, 25e6}, {3, 15e6}, {4, 15e6}}
	if len(tt) != len(want) {
		t.Fatalf("CapacityCurve = %v %v, want %v", tt, bps, want)
	}
	for k := range want {
		if math.Abs(tt[k]-want[k][0]) > 1e-6 || !near(bps[k], want[k][1], 1e-6) {
			t.Errorf("point %d = (%v, %v), want %v", k, tt[k], bps[k], want[k])
		}
	}
}

// A scenario read from a file has the library's bounds: they depend on the
// scenario's contents only (Ranges draw from the seed and the name, which the
// file keeps).
func TestBoundsFromFile(t *testing.T) {
	files, err := LibraryFiles()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	n := 0
	for _, s := range Library() {
		if s.Sweep != nil || s.Timed {
			continue
		}
		var name string
		for f := range files {
			if strings.TrimSuffix(filepath.Base(f), ".json") == s.Name {
				name = f
			}
		}
		if name == "" {
			t.Fatalf("%s: no file in LibraryFiles", s.Name)
		}
		path := filepath.Join(dir, filepath.Base(name))
		if err := os.WriteFile(path, files[name], 0o644); err != nil {
			t.Fatal(err)
		}
		fs, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		want, err := s.Resolve(2)
		if err != nil {
			t.Fatal(err)
		}
		got, err := fs.Resolve(2)
		if err != nil {
			t.Fatal(err)
		}
		if g, w := got.FCTLowerBound(), want.FCTLowerBound(); g != w || w <= 0 {
			t.Errorf("%s: file bound %v, library %v", s.Name, g, w)
		}
		n++
	}
	if n < 5 {
		t.Errorf("only %d scenarios checked", n)
	}
}

// A ramp from 10 to 20 Mbit/s over [1 s, 3 s] averages 15 Mbit/s there.
func TestBoundsRamp(t *testing.T) {
	l := link(10, 0, 0)
	l.Schedule = []Step{{At: sec(1), Ramp: sec(2), RateBps: f64(20e6)}}
	s := Scenario{Name: "r", Paths: []PathSpec{sym("p", l)}, Duration: sec(5), Timed: true, Bytes: 1}
	// 10 + 30 + 40 = 80 Mbit over 5 s.
	if got := s.CapacityBps(); !near(got, 16e6, 1e-9) {
		t.Errorf("CapacityBps = %v, want 16e6", got)
	}
}

// A handoff window [0 s, 2 s) with 1 s degradation: the rate falls linearly
// to 10% over the first second (mean 55%), then 0.
func TestBoundsHandoff(t *testing.T) {
	l := link(10, 0, 0)
	l.Handoffs = []Window{win(0, 2)}
	s := Scenario{Name: "h", Paths: []PathSpec{sym("p", l)}, Duration: sec(4), Timed: true, Bytes: 1}
	// 5.5 + 0 + 20 Mbit over 4 s.
	if got := s.CapacityBps(); !near(got, 25.5e6/4, 1e-9) {
		t.Errorf("CapacityBps = %v, want %v", got, 25.5e6/4)
	}
}

func TestShortKeepsBehaviour(t *testing.T) {
	for _, s := range Library() {
		sh := Short(s, 2*MB, sec(20))
		if err := sh.Validate(); err != nil {
			t.Errorf("%s: %v", sh.Name, err)
			continue
		}
		if sh.Bytes > 2*MB || sh.Duration > sec(20) {
			t.Errorf("%s: %d bytes, %v", sh.Name, sh.Bytes, sh.Duration)
		}
		vs, err := sh.Expand()
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vs {
			if _, err := v.Resolve(1); err != nil {
				t.Errorf("%s: %v", v.Name, err)
			}
		}
	}
	// The walk dropout keeps its outage at the same fraction of the run.
	s, _ := Get("wifi-walk-dropout")
	sh := Short(s, 8*MB, 0)
	w := sh.Paths[0].Down.Outages[0]
	if f := w.Start.Seconds() / sh.Duration.Seconds(); !near(f, 8.0/60, 1e-6) {
		t.Errorf("outage at fraction %v, want %v", f, 8.0/60)
	}
	if sh.Paths[0].Down.RateBps != s.Paths[0].Down.RateBps || sh.Paths[0].Down.Delay != s.Paths[0].Down.Delay {
		t.Error("Short changed the link")
	}
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
