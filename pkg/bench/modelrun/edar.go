// Package modelrun sets up bench runs (bench.Run) of the schedulers that
// run a learned model: EdAR-p ("edar"), EdAR-o ("edar-o") and the learned
// scheduler ("learned"), with their model files, fallbacks and EdAR-o's
// online state. The other schedulers need nothing beyond their registry
// name. mpquic-bench run wires its flags (-edar-model, -policy,
// -edar-fallback, -out) to Spec.
package modelrun

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mpqsched/mpqsched/pkg/bench"
	"github.com/mpqsched/mpqsched/pkg/model/policy"
	"github.com/mpqsched/mpqsched/pkg/session"
	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/edar"
	"github.com/mpqsched/mpqsched/sched/learned"
	"github.com/mpqsched/mpqsched/sched/minrtt"
)

// EdAR in mpquic-bench.
//
//   - "edar" is EdAR-p: the greedy policy μ(s) = argmax_a Q(s, a) of the
//     offline model (-edar-model; by default testdata/edar.onnx of the
//     module, else beside the binary, else the copy built into the binary:
//     see FindModel).
//   - "edar-o" is EdAR-o (§V.C): ε-greedy over a live model file that an
//     asynchronous trainer (training/edar/online.sh) keeps replacing; every
//     transition goes to a replay store that is spooled to the online
//     directory for that trainer, and an edar.Watcher hot-swaps the policy
//     of the running schedulers between decision intervals.
//
// The model runs on onnxruntime, or on the pure-Go backend if the library is
// missing (logged). If the model is missing, corrupt or synthetic the run
// fails (CheckModel refuses the matrix before it starts), unless
// -edar-fallback asks for minRTT instead: then the error is logged on stderr
// and the run is recorded under the scheduler name "<name>-minrtt-fallback"
// in every output, so no table ever shows minRTT's numbers as EdAR's.
const (
	// EnvOnlineDir is the EdAR-o working directory: model.onnx (the live
	// model, copied from -edar-model on first use) and replay/replay-<pid>.edar
	// (each process's replay spool; point training/edar/online.sh at the
	// replay directory). Default: DIR/edar-online for -out DIR; a later run
	// with the same directory continues from the live model it left (logged).
	EnvOnlineDir = "MPQ_EDAR_ONLINE_DIR"
	// EnvEpsilon is EdAR-o's exploration probability ε in [0, 1]; 0 is the
	// greedy policy used once online learning ends. Default 0.1.
	EnvEpsilon = "MPQ_EDAR_EPSILON"
	// defaultEpsilon is ε when EnvEpsilon is unset.
	defaultEpsilon = 0.1
	// onlineReportInterval is the receiver-report period of EdAR-o runs,
	// bytes-free: shorter than every TI of the EdAR scenarios (≥ 40 ms), so
	// nearly every TI gets a reward (the session default of 100 ms would
	// drop most transitions); the same period cmd/edar-collect uses.
	onlineReportInterval = 20 * time.Millisecond
	// replayCapacity is the replay store size per process, transitions
	// (about 2.3 KiB each in memory, 608 bytes spooled).
	replayCapacity = 20000
	// spoolEvery is how many new transitions trigger a spool of the replay
	// store; checkEvery how many trigger a look at the live model file.
	spoolEvery = 1000
	checkEvery = 25
	// timedEndSlack: a timed EdAR-o run's flow is ended this long before
	// the run's end, measured from the first data received.
	timedEndSlack = 500 * time.Millisecond
)

// benchModels caches the loaded policies of this process (one per model file).
var benchModels = policy.Cache{Options: policy.Options{Log: benchLog}}

// benchLog writes one EdAR line to stderr (a virtual-time child's stderr is
// shown by the parent when the child fails).
func benchLog(s string) { fmt.Fprintln(os.Stderr, "mpquic-bench:", s) }

// Spec is what setting up one run needs, from the run's job.
type Spec struct {
	Scheduler string // registered scheduler name
	Seed      int64  // the run's seed: EdAR-o's exploration draws come from it
	Model     string // EdAR model file (-edar-model); "": FindModel's default
	Policy    string // the learned scheduler's ONNX policy file (-policy)
	// Fallback lets edar, edar-o and learned run minRTT, named
	// "<name>-minrtt-fallback", when their model cannot be used
	// (-edar-fallback); else such a run fails.
	Fallback bool
	// OnlineDir is EdAR-o's working directory when EnvOnlineDir is unset;
	// "": results/edar-online.
	OnlineDir string
}

// SpecOf is what setting up j's run needs of it.
func SpecOf(j bench.Job) Spec {
	return Spec{Scheduler: j.Scheduler, Seed: j.Seed, Model: j.Model, Policy: j.Policy, Fallback: j.Fallback, OnlineDir: j.OnlineDir}
}

// Configure sets up r for the schedulers that need more than their
// registry name (a model); for the others it does nothing. When the model
// cannot be used and j.Fallback is set, r becomes a minRTT run named
// "<scheduler>-minrtt-fallback" (r.Scheduler); else it returns the error.
func Configure(r *bench.Run, j Spec) error {
	if j.Scheduler == learned.Name {
		return configureLearned(r, j)
	}
	if j.Scheduler != edar.Name && j.Scheduler != edar.NameOnline {
		return nil
	}
	model, err := FindModel(j.Model)
	if err != nil {
		return edarFallback(r, j, j.Model, err, true)
	}
	reward := edar.RewardWithBuffer(uint64(r.RecvWindow))
	if r.RecvWindow == 0 {
		reward = edar.RewardWithBuffer(session.DefaultRecvWindow)
	}
	// The client only sends the request; the server is the data sender.
	r.NewScheduler = func() sched.Scheduler { return &minrtt.Scheduler{} }
	if j.Scheduler == edar.NameOnline {
		return configureEdarOnline(r, j, model, reward)
	}
	p, backend, first, err := benchModels.Get(model)
	if err != nil {
		return edarFallback(r, j, model, err, first)
	}
	if first {
		benchLog(fmt.Sprintf("edar: EdAR-p model %s on %s", model, backend))
	}
	r.NewServerScheduler = func() sched.Scheduler {
		return edar.New(edar.Config{Policy: p, Reward: reward, Log: benchLog})
	}
	return nil
}

// edarFallback, when j allows the fallback (-edar-fallback), makes r a
// minRTT run recorded as "<scheduler>-minrtt-fallback"; else it returns the
// error, and the run fails under the scheduler's own name.
func edarFallback(r *bench.Run, j Spec, model string, err error, first bool) error {
	if !j.Fallback {
		return fmt.Errorf("%s: cannot use model %s: %w (give -edar-fallback to run minRTT instead, named %s-minrtt-fallback)", j.Scheduler, model, err, j.Scheduler)
	}
	if first {
		benchLog(fmt.Sprintf("edar: ERROR: cannot use model %s: %v; %s runs use minRTT instead and are recorded as %s-minrtt-fallback",
			model, err, j.Scheduler, j.Scheduler))
	}
	r.Scheduler = j.Scheduler + "-minrtt-fallback"
	r.NewScheduler = func() sched.Scheduler { return &minrtt.Scheduler{} }
	r.NewServerScheduler = nil
	return nil
}

// edarOnline is this process's EdAR-o state: one replay store, one live policy
// shared by every EdAR-o connection, one watcher.
var edarOnline struct {
	once sync.Once
	err  error

	mu      sync.Mutex
	dir     string
	replay  *edar.Replay
	spool   string
	watcher *edar.Watcher
	live    policy.Swap
	added   int
}

// setupEdarOnline prepares the online directory and loads the live model.
func setupEdarOnline(model, defaultDir string) error {
	edarOnline.once.Do(func() {
		dir := os.Getenv(EnvOnlineDir)
		if dir == "" {
			dir = defaultDir
		}
		if dir == "" {
			dir = filepath.Join("results", "edar-online")
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			edarOnline.err = err
			return
		}
		live := filepath.Join(dir, "model.onnx")
		if _, err := os.Stat(live); err != nil {
			if edarOnline.err = copyFileAtomic(model, live); edarOnline.err != nil {
				return
			}
			benchLog(fmt.Sprintf("edar: EdAR-o starts from %s, copied to %s", model, live))
		}
		edarOnline.dir = dir
		edarOnline.replay = edar.NewReplay(replayCapacity)
		if edarOnline.err = os.MkdirAll(filepath.Join(dir, "replay"), 0o755); edarOnline.err != nil {
			return
		}
		edarOnline.spool = filepath.Join(dir, "replay", fmt.Sprintf("replay-%d.edar", os.Getpid()))
		edarOnline.watcher = &edar.Watcher{
			Path: live,
			Load: func(path string) (edar.Policy, error) {
				p, _, err := policy.Open(path, policy.Options{Log: benchLog})
				return p, err
			},
			Apply: edarOnline.live.Set,
			Log:   benchLog,
			Close: true,
		}
		if _, err := edarOnline.watcher.Check(); err != nil {
			edarOnline.err = err
		}
	})
	return edarOnline.err
}

// configureEdarOnline makes r an EdAR-o run.
func configureEdarOnline(r *bench.Run, j Spec, model string, reward edar.RewardConfig) error {
	if err := setupEdarOnline(model, j.OnlineDir); err != nil {
		return edarFallback(r, j, model, err, true)
	}
	eps := defaultEpsilon
	if v := os.Getenv(EnvEpsilon); v != "" {
		e, err := strconv.ParseFloat(v, 64)
		if err != nil || e < 0 || e > 1 {
			return fmt.Errorf("%s=%q: want a probability in [0, 1]", EnvEpsilon, v)
		}
		eps = e
	}
	cfg := session.Config{}
	if r.SessionConfig != nil {
		cfg = *r.SessionConfig
	}
	cfg.ReportInterval = onlineReportInterval
	r.SessionConfig = &cfg
	var srv atomic.Pointer[edar.Locked] // set on the server's goroutine, read on the client's reader
	r.NewServerScheduler = func() sched.Scheduler {
		l := edar.NewLocked(edar.New(edar.Config{
			Name:    edar.NameOnline,
			Policy:  &edarOnline.live,
			Epsilon: eps,
			Rand:    rand.New(rand.NewPCG(uint64(j.Seed), 0xeda20)),
			Sink:    edarOnlineSink,
			Reward:  reward,
			Log:     benchLog,
		}))
		srv.Store(l) // the server makes one per session; this run has one
		return l
	}
	// The flow ends when the client has every byte, or, for a timed run,
	// within timedEndSlack of its end (counted from the first data): then
	// EndOfFlow marks the last transition done and the replay is spooled.
	prev := r.Hooks.Progress
	want, timed := r.Bytes, r.Timed
	var first time.Time
	r.Hooks.Progress = func(got int64) {
		if prev != nil {
			prev(got)
		}
		l := srv.Load()
		if l == nil {
			return
		}
		now := time.Now()
		if first.IsZero() {
			first = now
		}
		if (timed == 0 && got >= want) || (timed > 0 && now.Sub(first) >= timed-timedEndSlack) {
			endEdarFlow(l)
		}
	}
	return nil
}

// edarOnlineSink stores a transition, spools the store every spoolEvery
// transitions for the trainer, and looks for a new model every checkEvery.
// It runs on a scheduler's goroutine once per TI; in virtual time the file
// work costs wall time only.
func edarOnlineSink(t edar.Transition) {
	edarOnline.replay.Add(t)
	edarOnline.mu.Lock()
	defer edarOnline.mu.Unlock()
	edarOnline.added++
	if edarOnline.added%spoolEvery == 0 {
		if _, err := edarOnline.replay.WriteFile(edarOnline.spool); err != nil {
			benchLog(err.Error())
		}
	}
	if edarOnline.added%checkEvery == 0 {
		_, _ = edarOnline.watcher.Check() // failures are logged and keep the current model
	}
}

// endEdarFlow ends the server's EdAR flow (edar.Locked makes that safe from the
// client's reader goroutine) and spools the replay store.
func endEdarFlow(l *edar.Locked) {
	l.EndOfFlow()
	// Spool at the end of every flow (Algorithm 2: the trajectory goes to
	// the replay buffer when the flow completes).
	edarOnline.mu.Lock()
	if _, err := edarOnline.replay.WriteFile(edarOnline.spool); err != nil {
		benchLog(err.Error())
	}
	edarOnline.mu.Unlock()
}

// copyFileAtomic copies src to dst through a temporary file beside dst.
func copyFileAtomic(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := dst + ".tmp"
	out, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}
