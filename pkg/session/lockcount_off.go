//go:build !lockcount

package session

import "sync"

// sessionMutex is Session.mu's type: a plain sync.Mutex, unless the
// lockcount build tag makes it one that counts its acquisitions
// (lockcount_on.go, for TestLockOpsPerSegment).
type sessionMutex = sync.Mutex

// countCopyOut and countCopyIn note payload bytes the session copies, per
// direction; they count only in lockcount builds (lockcount_on.go).
func countCopyOut(int) {}
func countCopyIn(int)  {}

// handoffCount counts a session's goroutine wake-ups in lockcount builds
// (lockcount_on.go); here it is empty and add does nothing.
type handoffCount struct{}

func (*handoffCount) add() {}
