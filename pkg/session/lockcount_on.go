//go:build lockcount

package session

import (
	"sync"
	"sync/atomic"
)

// sessionMutex counts its acquisitions (lockcount builds only; see
// lockcount_off.go).
type sessionMutex struct {
	sync.Mutex
	n atomic.Uint64 // Lock calls
}

// Lock counts the acquisition and locks.
func (m *sessionMutex) Lock() {
	m.n.Add(1)
	m.Mutex.Lock()
}
