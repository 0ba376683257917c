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

// copied counts the payload bytes the session's own code copies, per
// direction (lockcount builds only; TestCopiesPerByte reads it): out is
// what a sender copies between Stream.Write and quic-go, in what a
// receiver copies between quic-go's Read and Stream.Read. quic-go's own
// copies are not counted. Safe for concurrent use.
var copied struct{ out, in atomic.Uint64 }

// countCopyOut notes n payload bytes copied on the send side.
func countCopyOut(n int) { copied.out.Add(uint64(n)) }

// countCopyIn notes n payload bytes copied on the receive side.
func countCopyIn(n int) { copied.in.Add(uint64(n)) }

// handoffCount counts a session's goroutine wake-ups (lockcount builds
// only; TestLockOpsPerSegment reads it): each time one of its goroutines
// returns from a wait for another goroutine, the session's or quic-go's.
// Safe for concurrent use.
type handoffCount struct{ n atomic.Uint64 }

// add notes one wake-up.
func (h *handoffCount) add() { h.n.Add(1) }
