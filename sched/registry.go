package sched

import (
	"fmt"
	"sort"
	"sync"
)

// Factory makes a fresh scheduler instance for one connection.
type Factory func() Scheduler

var (
	regMu    sync.RWMutex
	registry = map[string]Factory{}
)

// DefaultName is the scheduler a session uses when none is named.
const DefaultName = "minrtt"

// Register makes a scheduler available by name, like the kernel's
// net.mptcp.scheduler sysctl. It panics if name is empty or taken, which is a
// programming error at init time.
func Register(name string, f Factory) {
	regMu.Lock()
	defer regMu.Unlock()
	if name == "" || f == nil {
		panic("sched: Register with empty name or nil factory")
	}
	if _, dup := registry[name]; dup {
		panic("sched: Register called twice for " + name)
	}
	registry[name] = f
}

// New returns a new instance of the named scheduler.
func New(name string) (Scheduler, error) {
	regMu.RLock()
	f, ok := registry[name]
	regMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("sched: unknown scheduler %q (registered: %v)", name, Names())
	}
	return f(), nil
}

// Names lists the registered schedulers, sorted.
func Names() []string {
	regMu.RLock()
	defer regMu.RUnlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
