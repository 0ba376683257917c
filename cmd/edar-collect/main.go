// Command edar-collect runs the data collection of EdAR's offline learning
// (Han et al., IEEE TWC 2023, Algorithm 1 lines 1-8) over the emulator in
// virtual time, and writes one transition file per flow (docs/edar-format.md).
//
// For each flow of each setting (edar-setting-i, -ii, -iii by default, the
// settings the paper collects from) it draws the flow's fixed policy μ(s) =
// normal or μ(s) = redundant at random, resolves the setting's Table II
// ranges with the flow's seed, and downloads the flow's bytes with
// bench.Transfer. Only the data sender (the server) runs the recording EdAR
// scheduler (bench.Run.NewServerScheduler); the receiver's reports reach it
// every -report-interval. EndOfFlow completes the last transition (done = 1)
// when the transfer ends. B_t in the reward is the setting's receive buffer.
//
// Files are written under DIR/<setting>/ as flow-<seed>-<mode>.edar through a
// temporary name, so an interrupted collection leaves only whole files and a
// rerun skips the flows already written. DIR/manifest.jsonl gets one line per
// flow (sizes, times, counts).
//
//	edar-collect -o DIR [-settings i,ii,iii] [-flows 100] [-min-bytes 10MB] [-max-bytes 100MB] [-seed 1] [-parallel 2]
//
// Virtual time needs testing/synctest, so the flows run inside testing.Main,
// one synctest bubble each; the user sees an ordinary command.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/bench"
	"github.com/mpqsched/mpqsched/pkg/scenario"
	"github.com/mpqsched/mpqsched/pkg/session"
	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/edar"
	_ "github.com/mpqsched/mpqsched/sched/minrtt"
)

// DefaultReportInterval is the receiver-report period used for EdAR flows:
// shorter than every TI of settings i-v (TI = min RTT ≥ 40 ms), so nearly
// every TI gets a report to attribute (the session default of 100 ms would
// leave most TIs without one).
const DefaultReportInterval = 20 * time.Millisecond

type flowSpec struct {
	Setting string
	Seed    int64
	Mode    edar.Mode
	File    string
}

// flowRecord is one manifest line.
type flowRecord struct {
	Setting        string  `json:"setting"`
	Seed           int64   `json:"seed"`
	Mode           string  `json:"mode"`
	Bytes          int64   `json:"bytes"`
	ReceivedBytes  uint64  `json:"received_bytes"`
	FCTSeconds     float64 `json:"fct_s"`
	GoodputBps     float64 `json:"goodput_bps"`
	Transitions    uint64  `json:"transitions"`
	NoReport       uint64  `json:"no_report"`
	Intervals      uint64  `json:"intervals"`
	FileBytes      int64   `json:"file_bytes"`
	WallSeconds    float64 `json:"wall_s"`
	Error          string  `json:"error,omitempty"`
	ReceiveBufferB int64   `json:"receive_buffer_bytes"`
	ExtraSessions  int     `json:"extra_sessions,omitempty"`
}

var (
	outDir    = flag.String("o", "", "output directory (created)")
	settings  = flag.String("settings", "i,ii,iii", "comma-separated EdAR settings (edar-setting-<id>)")
	flows     = flag.Int("flows", 100, "flows (trajectories) per setting")
	minBytes  = flag.Int64("min-bytes", 10<<20, "smallest transfer, bytes (uniform in [min, max])")
	maxBytes  = flag.Int64("max-bytes", 100<<20, "largest transfer, bytes")
	seed0     = flag.Int64("seed", 1, "seed of the first flow; flow k of a setting uses seed+k")
	parallel  = flag.Int("parallel", runtime.GOMAXPROCS(0), "flows at once")
	reportInt = flag.Duration("report-interval", DefaultReportInterval, "receiver report period")
)

func main() {
	flag.Parse()
	if *outDir == "" {
		log.Fatal("edar-collect: -o DIR is required")
	}
	if *minBytes < 1 || *maxBytes < *minBytes {
		log.Fatal("edar-collect: need 1 ≤ -min-bytes ≤ -max-bytes")
	}
	var specs []flowSpec
	for _, id := range strings.Split(*settings, ",") {
		id = strings.TrimSpace(id)
		if _, err := scenario.Get("edar-setting-" + id); err != nil {
			log.Fatalf("edar-collect: %v", err)
		}
		for k := 0; k < *flows; k++ {
			seed := *seed0 + int64(k)
			// Algorithm 1 line 3: randomly initialise μ(s) = normal or redundant.
			rng := rand.New(rand.NewPCG(uint64(seed), 0xedA2+uint64(len(id))))
			mode := edar.Mode(rng.IntN(2))
			file := filepath.Join(*outDir, id, fmt.Sprintf("flow-%04d-%s.edar", seed, mode))
			specs = append(specs, flowSpec{Setting: id, Seed: seed, Mode: mode, File: file})
		}
	}
	var todo []flowSpec
	for _, s := range specs {
		if _, err := os.Stat(s.File); err == nil {
			continue // written by an earlier run
		}
		todo = append(todo, s)
	}
	fmt.Fprintf(os.Stderr, "edar-collect: %d flows (%d already written), %d at once, %d-%d bytes each → %s\n",
		len(specs), len(specs)-len(todo), *parallel, *minBytes, *maxBytes, *outDir)
	if len(todo) == 0 {
		return
	}
	for _, id := range strings.Split(*settings, ",") {
		if err := os.MkdirAll(filepath.Join(*outDir, strings.TrimSpace(id)), 0o755); err != nil {
			log.Fatal(err)
		}
	}
	mf, err := os.OpenFile(filepath.Join(*outDir, "manifest.jsonl"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		log.Fatal(err)
	}
	defer mf.Close()
	var mu sync.Mutex
	done := 0
	start := time.Now()
	enc := json.NewEncoder(mf)
	record := func(rec flowRecord) {
		mu.Lock()
		defer mu.Unlock()
		done++
		enc.Encode(rec)
		status := fmt.Sprintf("%.2f Mbit/s, FCT %.1f s, %d transitions", rec.GoodputBps/1e6, rec.FCTSeconds, rec.Transitions)
		if rec.Error != "" {
			status += " ERROR " + rec.Error
		}
		fmt.Fprintf(os.Stderr, "[%d/%d] setting %s seed %d %s %.1f MB: %s (%.1f s wall, %.0f s total)\n",
			done, len(todo), rec.Setting, rec.Seed, rec.Mode, float64(rec.Bytes)/1e6, status, rec.WallSeconds, time.Since(start).Seconds())
	}

	// Work queue shared by -parallel workers, each a parallel test whose
	// flows run one synctest bubble at a time.
	queue := make(chan flowSpec, len(todo))
	for _, s := range todo {
		queue <- s
	}
	close(queue)
	var failed, finished atomic.Int64
	nw := int64(max(1, *parallel))
	worker := func(t *testing.T) {
		t.Parallel()
		for s := range queue {
			var rec flowRecord
			t0 := time.Now() // outside the bubble: the wall clock
			synctest.Test(t, func(t *testing.T) { rec = collect(s) })
			rec.WallSeconds = time.Since(t0).Seconds()
			if rec.Error != "" {
				failed.Add(1)
			}
			record(rec)
		}
		if finished.Add(1) == nw { // the last worker reports (testing.Main exits)
			fmt.Fprintf(os.Stderr, "edar-collect: %d flows in %.1f s wall; %d transfers ended with an error (their transitions are kept if any)\n",
				len(todo), time.Since(start).Seconds(), failed.Load())
		}
	}
	tests := make([]testing.InternalTest, nw)
	for i := range tests {
		tests[i] = testing.InternalTest{Name: fmt.Sprintf("TestCollect%d", i), F: worker}
	}
	os.Args = []string{os.Args[0], fmt.Sprintf("-test.parallel=%d", max(1, *parallel))}
	testing.Main(func(pat, str string) (bool, error) { return regexp.MatchString(pat, str) }, tests, nil, nil)
}

// collect runs one flow in the current time domain and writes its file.
func collect(s flowSpec) (rec flowRecord) {
	rec = flowRecord{Setting: s.Setting, Seed: s.Seed, Mode: s.Mode.String()}
	sc, err := scenario.Get("edar-setting-" + s.Setting)
	if err != nil {
		rec.Error = err.Error()
		return rec
	}
	sc = withBytes(sc, *minBytes, *maxBytes)
	r, err := bench.FromScenario(sc, "minrtt", s.Seed) // the client sends only the request
	if err != nil {
		rec.Error = err.Error()
		return rec
	}
	rec.Bytes, rec.ReceiveBufferB = r.Bytes, int64(r.RecvWindow)

	tmp := s.File + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		rec.Error = err.Error()
		return rec
	}
	defer os.Remove(tmp)
	w, err := edar.NewWriter(f, len(r.Paths))
	if err != nil {
		f.Close()
		rec.Error = err.Error()
		return rec
	}
	buf := uint64(r.RecvWindow)
	if buf == 0 {
		buf = session.DefaultRecvWindow
	}
	// Every call gets its own recorder (a server makes one per session); they
	// share the file.
	var made []*recorder
	shared := &fileSink{w: w}
	r.NewServerScheduler = func() sched.Scheduler {
		rs := &recorder{out: shared}
		rs.Locked = edar.NewLocked(edar.New(edar.Config{
			NoPolicyMode: s.Mode,
			Sink:         rs.sink,
			Reward:       edar.RewardWithBuffer(buf),
			Log:          func(string) {}, // "no policy set" is the point here
		}))
		made = append(made, rs)
		return rs
	}
	cfg := session.Config{ReportInterval: *reportInt}
	r.SessionConfig = &cfg
	res, _, terr := bench.Transfer(context.Background(), r)
	var st edar.Stats
	for _, rs := range made {
		rs.EndOfFlow()
		x := rs.Unwrap().Stats()
		if x.Intervals > 0 {
			rec.ExtraSessions++
		}
		st.NoReport += x.NoReport
		st.Intervals += x.Intervals
	}
	rec.ExtraSessions = max(0, rec.ExtraSessions-1)
	rec.ReceivedBytes, rec.FCTSeconds, rec.GoodputBps = res.Bytes, res.FCTSeconds, res.GoodputBps
	rec.Transitions, rec.NoReport, rec.Intervals = shared.written, st.NoReport, st.Intervals
	if terr != nil {
		rec.Error = terr.Error()
	}
	rs := shared
	if rs.err == nil {
		rs.err = w.Flush()
	}
	if cerr := f.Close(); rs.err == nil {
		rs.err = cerr
	}
	if rs.err != nil {
		rec.Error = strings.TrimSpace(rec.Error + " write: " + rs.err.Error())
		return rec
	}
	if rs.written == 0 {
		rec.Error = strings.TrimSpace(rec.Error + " no transitions")
		return rec
	}
	if err := os.Rename(tmp, s.File); err != nil {
		rec.Error = err.Error()
		return rec
	}
	if fi, err := os.Stat(s.File); err == nil {
		rec.FileBytes = fi.Size()
	}
	return rec
}

// withBytes returns sc with its transfer size drawn uniformly from [lo, hi]
// instead of the setting's 10-100 MB; the path ranges and the handoff
// timeline are unchanged.
func withBytes(sc scenario.Scenario, lo, hi int64) scenario.Scenario {
	rg := scenario.Ranges{}
	if sc.Ranges != nil {
		rg = *sc.Ranges
	}
	rg.Bytes = &scenario.IntRange{Min: lo, Max: hi}
	sc.Ranges = &rg
	sc.Bytes = lo
	return sc
}

// fileSink is the flow's transition file, shared by the recorders of a run.
type fileSink struct {
	mu      sync.Mutex
	w       *edar.Writer
	written uint64
	err     error
}

func (f *fileSink) write(t *edar.Transition) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return
	}
	if f.err = f.w.Write(t); f.err == nil {
		f.written++
	}
}

// recorder is the server's scheduler during collection: the EdAR scheduler
// behind a mutex, so that EndOfFlow, called after the transfer returns,
// cannot race with a late Decide or report from a session winding down.
type recorder struct {
	*edar.Locked
	out *fileSink
}

// sink runs inside Decide or EndOfFlow, with the scheduler's lock held; what
// a flow's scheduler records after the end of its flow is dropped.
func (r *recorder) sink(t edar.Transition) {
	if !r.Ended() {
		r.out.write(&t)
	}
}
