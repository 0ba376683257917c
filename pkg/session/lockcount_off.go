//go:build !lockcount

package session

import "sync"

// sessionMutex is Session.mu's type: a plain sync.Mutex, unless the
// lockcount build tag makes it one that counts its acquisitions
// (lockcount_on.go, for TestLockOpsPerSegment).
type sessionMutex = sync.Mutex
