package edar

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Replay is the online-learning replay store (§V.C): a bounded ring of the
// most recent transitions, fed by the schedulers' sinks (use Add as
// Config.Sink) and spooled to transition files for the asynchronous trainer.
// When full, the oldest transitions are overwritten ("old transitions will be
// deleted if the replay buffer is full"). It is safe for concurrent use.
type Replay struct {
	mu    sync.Mutex
	buf   []Transition
	next  int    // slot the next Add writes
	full  bool   // buf has wrapped
	added uint64 // transitions ever added
	slots int    // largest subflow count seen, for spooling
}

// NewReplay returns a store holding at most capacity transitions
// (about 2.3 KiB each).
func NewReplay(capacity int) *Replay {
	if capacity < 1 {
		capacity = 1
	}
	return &Replay{buf: make([]Transition, capacity)}
}

// Add stores t, evicting the oldest transition when full.
func (r *Replay) Add(t Transition) {
	r.mu.Lock()
	r.buf[r.next] = t
	r.next++
	if r.next == len(r.buf) {
		r.next, r.full = 0, true
	}
	r.added++
	r.slots = max(r.slots, t.S.N, t.S2.N)
	r.mu.Unlock()
}

// Len is the number of transitions held.
func (r *Replay) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.full {
		return len(r.buf)
	}
	return r.next
}

// Added is the number of transitions ever added.
func (r *Replay) Added() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.added
}

// Sample fills dst with transitions drawn uniformly with replacement
// and returns len(dst), or 0 if the store is empty.
func (r *Replay) Sample(rng *rand.Rand, dst []Transition) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	size := r.next
	if r.full {
		size = len(r.buf)
	}
	if size == 0 {
		return 0
	}
	for i := range dst {
		dst[i] = r.buf[rng.IntN(size)]
	}
	return len(dst)
}

// WriteFile writes the held transitions, oldest first, to path in the
// transition-file format, atomically (a temporary file renamed into place),
// so a trainer polling the directory never reads half a file.
func (r *Replay) WriteFile(path string) (int, error) {
	r.mu.Lock()
	var ts []Transition
	if r.full {
		ts = append(ts, r.buf[r.next:]...)
	}
	ts = append(ts, r.buf[:r.next]...)
	slots := max(r.slots, 1)
	r.mu.Unlock()

	tmp, err := os.CreateTemp(filepath.Dir(path), ".replay-*")
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name())
	w, err := NewWriter(tmp, slots)
	if err == nil {
		for i := range ts {
			if err = w.Write(&ts[i]); err != nil {
				break
			}
		}
	}
	if err == nil {
		err = w.Flush()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return 0, fmt.Errorf("edar: spool replay to %s: %w", path, err)
	}
	return len(ts), nil
}

// Watcher reloads a model file when it changes and hands the new Policy to
// Apply (for example a loop over the live schedulers' SetPolicy, or a shared
// policy holder). The asynchronous trainer writes the file by renaming a
// complete file into place. A file that fails to load is logged and the
// previous policy stays in force.
type Watcher struct {
	Path  string                            // model file to watch
	Load  func(path string) (Policy, error) // e.g. gonet.Load
	Apply func(Policy)                      // installs the new policy
	Log   func(string)                      // nil: no log
	// Close, if set, closes the previous policy after a swap when it is an
	// io.Closer (pkg/model/ort sessions hold C memory). A scheduler that
	// still evaluates it at that instant gets an error and falls back to
	// minRTT for one TI, logged.
	Close bool

	cur  Policy    // policy applied last
	mod  time.Time // modification time of the last file seen
	size int64
}

// Check loads and applies the file if its modification time or size changed
// since the last Check. It reports whether a new policy was applied.
func (w *Watcher) Check() (bool, error) {
	fi, err := os.Stat(w.Path)
	if err != nil {
		return false, fmt.Errorf("edar: watch %s: %w", w.Path, err)
	}
	if fi.ModTime().Equal(w.mod) && fi.Size() == w.size {
		return false, nil
	}
	w.mod, w.size = fi.ModTime(), fi.Size()
	p, err := w.Load(w.Path)
	if err != nil {
		w.logf("edar: reload %s failed, keeping the previous policy: %v", w.Path, err)
		return false, err
	}
	w.Apply(p)
	if old, ok := w.cur.(io.Closer); ok && w.Close {
		if err := old.Close(); err != nil {
			w.logf("edar: closing the previous policy: %v", err)
		}
	}
	w.cur = p
	w.logf("edar: loaded policy from %s (%d bytes, modified %s)", w.Path, fi.Size(), fi.ModTime().UTC().Format(time.RFC3339Nano))
	return true, nil
}

// Run calls Check every interval until ctx is done.
func (w *Watcher) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		_, _ = w.Check() // errors are logged by Check where they matter
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (w *Watcher) logf(format string, args ...any) {
	if w.Log != nil {
		w.Log(fmt.Sprintf(format, args...))
	}
}
