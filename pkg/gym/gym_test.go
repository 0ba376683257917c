package gym

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"os"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/scenario"
	"github.com/mpqsched/mpqsched/sched/learned"
)

// The protocol's premise: a goroutine of a bubble that waits in a read of a
// pipe is not durably blocked, so the bubble's clock cannot advance while
// the agent thinks, and timers due later (here a 1 s sleep) stay asleep.
func TestClockStopsWhileAgentThinks(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go func() { // outside the bubble: the agent thinks for 300 ms of wall time
		time.Sleep(300 * time.Millisecond)
		w.Write([]byte{1})
		w.Close()
	}()
	wall := time.Now()
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		slept := make(chan time.Time, 1)
		go func() { time.Sleep(time.Second); slept <- time.Now() }()
		var b [1]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("virtual clock advanced %v while the read waited; want 0", d)
		}
		select {
		case at := <-slept:
			t.Errorf("a 1 s sleep ended at +%v while the read waited", at.Sub(start))
		default:
		}
		if at := <-slept; at.Sub(start) != time.Second {
			t.Errorf("the sleep ended at +%v, want +1s once the read returned", at.Sub(start))
		}
	})
	if d := time.Since(wall); d < 300*time.Millisecond {
		t.Fatalf("the bubble returned after %v of wall time, before the agent answered", d)
	}
}

// agent is the test's end of the protocol: Serve runs in a goroutine with
// every episode in a bubble of t.
type agent struct {
	t    *testing.T
	w    *os.File
	r    *bufio.Reader
	done chan error
}

func startAgent(t *testing.T) *agent {
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	a := &agent{t: t, w: inW, r: bufio.NewReader(outR), done: make(chan error, 1)}
	go func() {
		err := Serve(inR, outW, func(f func()) { synctest.Test(t, func(*testing.T) { f() }) })
		outW.Close()
		inR.Close()
		a.done <- err
	}()
	t.Cleanup(func() {
		inW.Close()
		if err := <-a.done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		outR.Close()
	})
	return a
}

func (a *agent) send(typ byte, payload []byte) {
	a.t.Helper()
	b := binary.LittleEndian.AppendUint32(nil, uint32(1+len(payload)))
	b = append(append(b, typ), payload...)
	if _, err := a.w.Write(b); err != nil {
		a.t.Fatal(err)
	}
}

func (a *agent) sendJSON(typ byte, v any) {
	a.t.Helper()
	b, _ := json.Marshal(v)
	a.send(typ, b)
}

func (a *agent) step(mask uint64, cp byte) {
	a.t.Helper()
	a.send(CmdStep, append(binary.LittleEndian.AppendUint64(nil, mask), cp))
}

func (a *agent) recv() (byte, []byte) {
	a.t.Helper()
	var h [4]byte
	if _, err := io.ReadFull(a.r, h[:]); err != nil {
		a.t.Fatalf("reading a frame: %v", err)
	}
	b := make([]byte, binary.LittleEndian.Uint32(h[:]))
	if _, err := io.ReadFull(a.r, b); err != nil {
		a.t.Fatal(err)
	}
	return b[0], b[1:]
}

func (a *agent) expect(want byte) []byte {
	a.t.Helper()
	typ, p := a.recv()
	if typ != want {
		a.t.Fatalf("got frame %q (%s), want %q", typ, p, want)
	}
	return p
}

// obs is the header and clock of an 'O' payload.
type obs struct {
	step     uint64
	flags    byte
	n        int
	actionAt float64
	time     float64
}

func parseObs(t *testing.T, l *Layout, p []byte) obs {
	t.Helper()
	if len(p) != l.Size {
		t.Fatalf("observation of %d bytes, layout %d", len(p), l.Size)
	}
	off := l.Arrays["conn"].Offset + 8*learned.ConnTime
	return obs{step: binary.LittleEndian.Uint64(p), flags: p[8], n: int(p[9]),
		actionAt: math.Float64frombits(binary.LittleEndian.Uint64(p[16:])),
		time:     math.Float64frombits(binary.LittleEndian.Uint64(p[off:]))}
}

// A whole episode over the protocol: describe, reset, a refused action, a
// step taken after the agent thought for a while (the action time equals
// the observation's: the clock stood still), minRTT to the end, the
// terminal observation and result, then a step too many, a truncated
// episode, a reset in the middle of one, and quit.
func TestEpisodeOverProtocol(t *testing.T) {
	a := startAgent(t)
	q := Request{Scenario: "hetero-2path", Seed: 1, Options: Options{MaxBytes: 2 << 20}}
	a.sendJSON(CmdDescribe, q)
	var d Description
	if err := json.Unmarshal(a.expect(RepJSON), &d); err != nil {
		t.Fatal(err)
	}
	if d.Slots != 2 || d.Paths != 2 || d.Layout.Size == 0 {
		t.Fatalf("description %+v", d)
	}
	l := NewLayout(d.Slots, false)
	a.sendJSON(CmdReset, q)
	o := parseObs(t, &l, a.expect(RepObs))
	if o.step != 0 || o.actionAt != -1 || o.time != 0 || o.n < 1 {
		t.Fatalf("first observation %+v", o)
	}
	a.step(0b11, 2)
	var e ErrorReply
	json.Unmarshal(a.expect(RepError), &e)
	if e.Kind != ErrBadAction {
		t.Fatalf("copy flag 2: error %+v, want %s", e, ErrBadAction)
	}
	a.step(1<<2, 0) // slot 2 of 2
	json.Unmarshal(a.expect(RepError), &e)
	if e.Kind != ErrBadAction {
		t.Fatalf("slot 2 of 2: error %+v, want %s", e, ErrBadAction)
	}
	prev := o
	time.Sleep(100 * time.Millisecond) // the agent thinks
	var last obs
	for k := 0; ; k++ {
		a.step(0b11, 0)
		o := parseObs(t, &l, a.expect(RepObs))
		if o.actionAt != prev.time {
			t.Fatalf("step %d: action read at %v s, observation at %v s: the clock moved while the agent thought", k, o.actionAt, prev.time)
		}
		if o.flags != 0 {
			last = o
			break
		}
		if o.step != prev.step+1 || o.time <= prev.time {
			t.Fatalf("step %d: %+v after %+v", k, o, prev)
		}
		prev = o
	}
	if last.flags != FlagTerminated {
		t.Fatalf("terminal flags %b, want terminated", last.flags)
	}
	var res metrics.Result
	if err := json.Unmarshal(a.expect(RepJSON), &res); err != nil {
		t.Fatal(err)
	}
	if res.Error != "" || res.Bytes != 2<<20 || res.GoodputBps < 5e6 || !res.SHA256OK {
		t.Fatalf("result: error %q, %d bytes, %.1f Mbit/s, sha %v", res.Error, res.Bytes, res.GoodputBps/1e6, res.SHA256OK)
	}
	a.step(0b11, 0)
	json.Unmarshal(a.expect(RepError), &e)
	if e.Kind != ErrBadRequest {
		t.Fatalf("step after the end: %+v", e)
	}

	q.Options.MaxSteps = 5
	a.sendJSON(CmdReset, q)
	a.expect(RepObs)
	for k := 1; k <= 5; k++ {
		a.step(0b01, 1)
		o := parseObs(t, &l, a.expect(RepObs))
		if want := byte(0); k == 5 {
			if o.flags != FlagTruncated || o.step != 5 {
				t.Fatalf("max_steps 5: step %d observation %+v, want truncated at step 5", k, o)
			}
		} else if o.flags != want {
			t.Fatalf("step %d: flags %b", k, o.flags)
		}
	}
	a.expect(RepJSON)

	q.Options.MaxSteps = 0
	a.sendJSON(CmdReset, q)
	a.expect(RepObs)
	a.step(0b11, 0)
	a.expect(RepObs)
	q.Seed = 2
	a.sendJSON(CmdReset, q) // mid-episode: the old one is abandoned
	if o := parseObs(t, &l, a.expect(RepObs)); o.step != 0 {
		t.Fatalf("reset mid-episode: first observation %+v", o)
	}
	a.send(CmdQuit, nil)
}

// Every library scenario (every variant's family included) is an
// environment: describe, reset, three steps, truncated (or done sooner: a
// 4 KB download ends within a step or two).
func TestEveryLibraryScenario(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	a := startAgent(t)
	for _, sc := range scenario.Library() {
		q := Request{Scenario: sc.Name, Seed: 1, Options: Options{MaxSteps: 3}}
		a.sendJSON(CmdDescribe, q)
		var d Description
		if typ, p := a.recv(); typ != RepJSON || json.Unmarshal(p, &d) != nil {
			t.Errorf("%s: describe answered %q %s", sc.Name, typ, p)
			continue
		}
		l := NewLayout(d.Slots, false)
		a.sendJSON(CmdReset, q)
		typ, p := a.recv()
		if typ != RepObs {
			t.Errorf("%s: reset answered %q %s", sc.Name, typ, p)
			continue
		}
		var o obs
		for k := 0; k < 3 && o.flags == 0; k++ {
			a.step(uint64(1)<<uint(d.Slots)-1, 0)
			o = parseObs(t, &l, a.expect(RepObs))
		}
		if o.flags != FlagTruncated && (o.flags != FlagTerminated || o.step > 3) {
			t.Errorf("%s: after 3 steps of max_steps 3, step %d flags %b", sc.Name, o.step, o.flags)
		}
		var res metrics.Result
		if err := json.Unmarshal(a.expect(RepJSON), &res); err != nil || o.flags == FlagTerminated && res.Error != "" {
			t.Errorf("%s: result %v %q", sc.Name, err, res.Error)
		}
	}
}

// A scenario the emulator cannot use is an error frame, not a crash.
func TestBadScenario(t *testing.T) {
	a := startAgent(t)
	for _, q := range []Request{{Scenario: "no-such-scenario"}, {File: "/nonexistent.json"}, {},
		{Scenario: "hetero-2path", Options: Options{Slots: 99}}} {
		a.sendJSON(CmdReset, q)
		var e ErrorReply
		if err := json.Unmarshal(a.expect(RepError), &e); err != nil || e.Kind != ErrScenario && e.Kind != ErrBadRequest {
			t.Errorf("%+v: error %+v", q, e)
		}
	}
	a.send(CmdReset, []byte("{not json"))
	var e ErrorReply
	json.Unmarshal(a.expect(RepError), &e)
	if e.Kind != ErrBadRequest {
		t.Errorf("bad JSON: %+v", e)
	}
}

// Options.ReportPerMinRTT: hetero-2path's decision interval is its 10 ms
// path's RTT, half the 20 ms report period, so with the fixed period about
// every other step ends without a report (no reward), and with a report
// per minimum RTT nearly every step has one. (EdAR §IV.B.3: "At each TI,
// the receiver observes ...".)
func TestReportPerMinRTT(t *testing.T) {
	withReport := func(perRTT bool) (steps, reported int) {
		a := startAgent(t)
		q := Request{Scenario: "hetero-2path", Seed: 1, Options: Options{MaxBytes: 4 << 20, ReportPerMinRTT: perRTT}}
		a.sendJSON(CmdReset, q)
		l := NewLayout(2, false)
		col := l.Arrays["report"].Offset // "reports", the report array's first column
		a.expect(RepObs)
		for {
			a.step(0b11, 0)
			p := a.expect(RepObs)
			o := parseObs(t, &l, p)
			if o.flags != 0 {
				a.expect(RepJSON)
				break
			}
			if o.step > 10 { // past slow start and the first RTT samples
				steps++
				if math.Float64frombits(binary.LittleEndian.Uint64(p[col:])) > 0 {
					reported++
				}
			}
		}
		a.send(CmdQuit, nil)
		return steps, reported
	}
	n, r := withReport(false)
	if n < 50 || float64(r) > 0.75*float64(n) {
		t.Errorf("fixed 20 ms reports: %d of %d steps with a report, want at most 75%%", r, n)
	}
	n, r = withReport(true)
	if n < 50 || float64(r) < 0.95*float64(n) {
		t.Errorf("a report per minimum RTT: %d of %d steps with a report, want at least 95%%", r, n)
	}
}
