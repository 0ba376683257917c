// Package policy opens an EdAR model file as an edar.Policy, choosing the
// inference backend: onnxruntime (pkg/model/ort) when its shared library is
// present, else the pure-Go forward pass (pkg/model/gonet), saying so in the
// log. Callers that cannot get a policy at all (missing, corrupt or
// synthetic model) get an error and must fall back loudly themselves
// (mpquic-bench runs minRTT and labels the run).
package policy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/mpqsched/mpqsched/pkg/model/gonet"
	"github.com/mpqsched/mpqsched/pkg/model/ort"
	"github.com/mpqsched/mpqsched/sched/edar"
)

// Backend names the inference engine behind a Policy.
type Backend string

const (
	ONNXRuntime Backend = "onnxruntime" // pkg/model/ort (cgo, libonnxruntime)
	PureGo      Backend = "gonet"       // pkg/model/gonet (no cgo)
)

// BackendEnv, if set to "gonet" or "onnxruntime", forces that backend
// (onnxruntime then fails instead of falling back).
const BackendEnv = "MPQ_EDAR_BACKEND"

// ErrSynthetic is returned for a model trained on synthetic transitions
// (ONNX metadata edar.synthetic=true): it proves the pipeline only.
var ErrSynthetic = errors.New("model was trained on SYNTHETIC transitions and is not an EdAR model")

// Options adjust Open.
type Options struct {
	// AllowSynthetic accepts synthetic test models (tests of the plumbing).
	AllowSynthetic bool
	// Log receives one line when the backend falls back; nil: no log.
	Log func(string)
}

// Open loads the model at path. The file is first parsed by gonet, which
// checks every weight's shape and finiteness, so a missing or corrupt file
// is reported the same way whatever the backend. Then onnxruntime is tried;
// if its library is missing (ort.ErrNoLibrary) or it refuses the model, the
// gonet network is returned and the reason is logged.
func Open(path string, o Options) (edar.Policy, Backend, error) {
	gn, err := gonet.Load(path)
	if err != nil {
		return nil, "", err
	}
	if gn.Synthetic() && !o.AllowSynthetic {
		return nil, "", fmt.Errorf("%s: %w", path, ErrSynthetic)
	}
	if !gn.Synthetic() {
		if err := checkFormat(gn.Metadata()); err != nil {
			return nil, "", fmt.Errorf("%s: %w", path, err)
		}
	}
	force := os.Getenv(BackendEnv)
	if force == string(PureGo) {
		return gn, PureGo, nil
	}
	on, err := ort.Load(path)
	if err == nil {
		return on, ONNXRuntime, nil
	}
	if force == string(ONNXRuntime) {
		return nil, "", err
	}
	if errors.Is(err, ort.ErrNoLibrary) {
		logf(o.Log, "edar: onnxruntime unavailable, using the pure-Go backend (gonet) for %s: %v", path, err)
	} else {
		logf(o.Log, "edar: onnxruntime could not load %s, using the pure-Go backend (gonet): %v", path, err)
	}
	return gn, PureGo, nil
}

// ErrFormat is returned for a model trained on states of another
// transition format version (docs/edar-format.md): its inputs would mean
// something else to it than what sched/edar computes.
var ErrFormat = errors.New("model was trained on another EdAR state format")

// checkFormat compares the model's ONNX metadata "edar.format_version"
// with edar.FormatVersion.
func checkFormat(meta map[string]string) error {
	want := strconv.Itoa(edar.FormatVersion)
	if got := meta["edar.format_version"]; got != want {
		return fmt.Errorf("%w: its edar.format_version is %q, this build computes version %s (retrain it: make train)", ErrFormat, got, want)
	}
	return nil
}

func logf(l func(string), format string, args ...any) {
	if l != nil {
		l(fmt.Sprintf(format, args...))
	}
}

// DefaultModel is the EdAR model the repository ships (trained by `make
// train`), relative to the module root; Resolve finds it from any directory
// of the module.
const DefaultModel = "testdata/edar.onnx"

// Resolve returns path if it exists, else path joined to the nearest
// directory above the working directory that holds go.mod (so the default
// "testdata/edar.onnx" works from any directory of the module), else path
// unchanged (Open then reports it missing).
func Resolve(path string) string {
	if _, err := os.Stat(path); err == nil || filepath.IsAbs(path) {
		return path
	}
	dir, err := os.Getwd()
	if err != nil {
		return path
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			if p := filepath.Join(d, path); fileExists(p) {
				return p
			}
			return path
		}
		if filepath.Dir(d) == d {
			return path
		}
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// Cache opens each model file once per process and shares the Policy (both
// backends are safe for concurrent use). It also remembers failures, so a
// matrix of runs logs a broken model's error once per process, not per run.
type Cache struct {
	Options
	mu sync.Mutex
	m  map[string]cached
}

type cached struct {
	p   edar.Policy
	b   Backend
	err error
}

// Get returns the policy of path, opening it on first use; first reports
// that this call opened it (log the outcome then).
func (c *Cache) Get(path string) (p edar.Policy, b Backend, first bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[path]; ok {
		return e.p, e.b, false, e.err
	}
	p, b, err = Open(path, c.Options)
	if c.m == nil {
		c.m = map[string]cached{}
	}
	c.m[path] = cached{p, b, err}
	return p, b, true, err
}

// Swap is a Policy whose implementation can be replaced at any time (by an
// edar.Watcher's Apply); every scheduler holding it sees the new policy from
// its next decision interval. It is safe for concurrent use.
type Swap struct {
	mu sync.RWMutex
	p  edar.Policy
}

// Set installs p.
func (s *Swap) Set(p edar.Policy) {
	s.mu.Lock()
	s.p = p
	s.mu.Unlock()
}

// Q implements edar.Policy with the current policy; it fails if none is set.
func (s *Swap) Q(st *edar.State, q *[2]float32) error {
	s.mu.RLock()
	p := s.p
	s.mu.RUnlock()
	if p == nil {
		return errors.New("policy: no model loaded yet")
	}
	return p.Q(st, q)
}

var _ edar.Policy = (*Swap)(nil)
