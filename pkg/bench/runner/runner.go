// Package runner runs the jobs of a bench matrix (bench.Job): in virtual
// time, in child processes of the running binary (Virtual), or in this
// process on the wall clock (Local), each with its scheduler set up
// (RunJob, through modelrun). A binary that runs jobs in virtual time must
// call ChildMain when IsChild reports that it is such a child, before
// anything else (cli.BenchMain does).
package runner

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/mpqsched/mpqsched/pkg/bench"
	"github.com/mpqsched/mpqsched/pkg/bench/modelrun"
	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/session"
)

// Virtual time needs testing/synctest, whose bubbles exist only inside a
// test. mpquic-bench therefore re-executes itself as a child process with
// ChildEnv set; the child runs its share of the jobs as one test through
// testing.Main, each job in its own synctest bubble, and prints one
// "RESULT <json>" line per finished job. The user never sees a test binary.
const (
	ChildEnv     = "MPQ_BENCH_CHILD" // path of the child's job file
	resultPrefix = "RESULT "
)

// ORSuffix marks, in results, the runs made with opportunistic
// reinjection (Job.Opportunistic).
const ORSuffix = "+or"

// DatagramSuffix marks, in results, the runs made with the sessions'
// segments in QUIC datagrams (bench.Job.Datagram).
const DatagramSuffix = "+dg"

// IsChild reports whether this process is a virtual-time child (ChildEnv
// is set): then it must run ChildMain.
func IsChild() bool { return os.Getenv(ChildEnv) != "" }

// Virtual runs jobs in virtual time, split over parallel child processes
// of this binary, and calls collect with each job and its result as it
// finishes (from several goroutines at once). A job whose child ended
// before reporting it is collected as a failed run.
func Virtual(jobs []bench.Job, parallel int, collect func(bench.Job, metrics.Result)) error {
	self, err := selfExe()
	if err != nil {
		return err
	}
	parallel = max(1, min(parallel, len(jobs)))
	shares := make([][]bench.Job, parallel)
	for i, j := range jobs {
		shares[i%parallel] = append(shares[i%parallel], j)
	}
	byIndex := make(map[int]bench.Job, len(jobs))
	for _, j := range jobs {
		byIndex[j.Index] = j
	}
	dir, err := os.MkdirTemp("", "mpquic-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var wg sync.WaitGroup
	errs := make([]error, parallel)
	for i, share := range shares {
		file := fmt.Sprintf("%s/jobs-%d.json", dir, i)
		b, err := json.Marshal(share)
		if err != nil {
			return err
		}
		if err := os.WriteFile(file, b, 0o644); err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = runChild(self, file, share, byIndex, collect)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// selfExe is the executable the children run: on Linux /proc/self/exe,
// which names this process's own image even after the file on disk was
// rebuilt (a `make build` during a long `make reproduce` once made the
// later runs of a matrix use another binary); elsewhere os.Executable.
func selfExe() (string, error) {
	const proc = "/proc/self/exe"
	if _, err := os.Stat(proc); err == nil {
		return proc, nil
	}
	return os.Executable()
}

// childEnviron is a child's environment: the parent's, the job file, and
// GOMAXPROCS=1 unless the user set GOMAXPROCS. One synctest bubble hardly
// uses a second processor, and with one child per core the children's
// threads only contend: on hetero-2path (make bench's matrix, 2 cores)
// GOMAXPROCS=1 took 0.65 of the wall and CPU time (farm-bench, 3 pairs),
// and its goodputs differ from the default's by less than two default
// runs differ from each other (at most 0.9% against 1.1%).
func childEnviron(environ []string, file string) []string {
	env := append(environ[:len(environ):len(environ)], ChildEnv+"="+file)
	for _, kv := range environ {
		if strings.HasPrefix(kv, "GOMAXPROCS=") {
			return env
		}
	}
	return append(env, "GOMAXPROCS=1")
}

// runChild runs one child and collects its results; jobs the child did not
// report (it crashed) are recorded as failed runs.
func runChild(self, file string, share []bench.Job, byIndex map[int]bench.Job, collect func(bench.Job, metrics.Result)) error {
	cmd := exec.Command(self)
	cmd.Env = childEnviron(os.Environ(), file)
	stderr := &forwarder{}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	seen := map[int]bool{}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, resultPrefix) {
			continue // testing.Main's own output
		}
		var msg struct {
			Index  int            `json:"index"`
			Result metrics.Result `json:"result"`
		}
		if err := json.Unmarshal([]byte(line[len(resultPrefix):]), &msg); err != nil {
			return fmt.Errorf("child result: %w", err)
		}
		seen[msg.Index] = true
		collect(byIndex[msg.Index], msg.Result)
	}
	werr := cmd.Wait()
	for _, j := range share {
		if !seen[j.Index] {
			r := metrics.Result{Scheduler: j.Scheduler, Scenario: j.Scenario.Name, Seed: j.Seed,
				Error: fmt.Sprintf("virtual-time child ended before this run finished: %v: %s", werr, childLastLines(stderr.String(), 5))}
			collect(j, r)
		}
	}
	return nil
}

// childLastLines is the last n lines of s, joined by " | ".
func childLastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], " | ")
}

// ChildMain runs the jobs in the file named by ChildEnv, each in a
// synctest bubble, inside testing.Main, and prints their results for the
// parent; it returns only on an unreadable job file (exit status 2).
func ChildMain() int {
	b, err := os.ReadFile(os.Getenv(ChildEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var jobs []bench.Job
	if err := json.Unmarshal(b, &jobs); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	os.Args = os.Args[:1] // testing.Main parses only its own flags
	var mu sync.Mutex
	emit := func(idx int, r metrics.Result) {
		b, _ := json.Marshal(struct {
			Index  int            `json:"index"`
			Result metrics.Result `json:"result"`
		}{idx, r})
		mu.Lock()
		fmt.Printf("%s%s\n", resultPrefix, b)
		mu.Unlock()
	}
	test := func(t *testing.T) {
		for _, j := range jobs {
			var r metrics.Result
			synctest.Test(t, func(t *testing.T) { r = RunJob(j) })
			emit(j.Index, r)
		}
	}
	testing.Main(func(pat, str string) (bool, error) { return regexp.MatchString(pat, str) },
		[]testing.InternalTest{{Name: "TestVirtualTimeRuns", F: test}}, nil, nil)
	return 0 // not reached: testing.Main exits
}

// RunJob runs one job in the current time domain (real or virtual): its
// scenario with its scheduler (set up by modelrun.Configure), seed,
// opportunistic reinjection and coupling. The result's scheduler name gets
// ORSuffix and "+<coupling>" as the job asks; a failure is recorded in the
// result's Error.
func RunJob(j bench.Job) metrics.Result {
	r, err := bench.FromScenario(j.Scenario, j.Scheduler, j.Seed)
	if err != nil {
		return metrics.Result{Scheduler: j.Scheduler, Scenario: j.Scenario.Name, Seed: j.Seed, Error: err.Error()}
	}
	suffix := ""
	if j.Opportunistic {
		suffix += ORSuffix
	}
	if j.Coupling != "" {
		suffix += "+" + j.Coupling
	}
	if j.Datagram {
		suffix += DatagramSuffix
	}
	if err := modelrun.Configure(&r, modelrun.SpecOf(j)); err != nil {
		return metrics.Result{Scheduler: j.Scheduler + suffix, Scenario: j.Scenario.Name, Seed: j.Seed, Error: err.Error()}
	}
	name := r.Scheduler + suffix // a fallback's own name, if modelrun.Configure chose one
	if j.Opportunistic || j.Coupling != "" || j.Datagram {
		var cfg session.Config
		if r.SessionConfig != nil {
			cfg = *r.SessionConfig
		}
		cfg.OpportunisticReinjection = cfg.OpportunisticReinjection || j.Opportunistic
		if j.Coupling != "" {
			cfg.Coupling = j.Coupling
		}
		cfg.DatagramData = cfg.DatagramData || j.Datagram
		r.SessionConfig = &cfg
	}
	res, _, _ := bench.Transfer(context.Background(), r)
	res.Scheduler = name
	return res
}

// forwarder keeps a child's stderr for error messages and passes its own
// diagnostics (lines starting with "mpquic-bench:", such as a scheduler's
// fallback notices) on to the parent's stderr, each distinct line once.
type forwarder struct {
	mu      sync.Mutex
	all     strings.Builder
	partial []byte
	seen    map[string]bool
}

var forwardMu sync.Mutex // serialises forwarded lines of concurrent children

// Write keeps p and forwards its complete diagnostic lines.
func (f *forwarder) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.all.Write(p)
	f.partial = append(f.partial, p...)
	for {
		i := bytes.IndexByte(f.partial, '\n')
		if i < 0 {
			break
		}
		line := string(f.partial[:i])
		f.partial = f.partial[i+1:]
		if strings.HasPrefix(line, "mpquic-bench:") && !f.seen[line] {
			if f.seen == nil {
				f.seen = map[string]bool{}
			}
			f.seen[line] = true
			forwardMu.Lock()
			fmt.Fprintln(os.Stderr, line)
			forwardMu.Unlock()
		}
	}
	return len(p), nil
}

// String is everything the child wrote to stderr.
func (f *forwarder) String() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.all.String()
}

// Local runs jobs in this process on the wall clock, parallel at once, and
// calls collect with each job and its result as it finishes (from several
// goroutines at once).
func Local(jobs []bench.Job, parallel int, collect func(bench.Job, metrics.Result)) {
	ch := make(chan bench.Job)
	var wg sync.WaitGroup
	for range max(parallel, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				collect(j, RunJob(j))
			}
		}()
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
}
