package session

import "sync"

// maxLogQueue bounds the log messages waiting for Config.Logf; beyond it new
// messages are dropped and counted, and the next message emitted says how
// many were lost.
const maxLogQueue = 256

// logQueue runs Config.Logf outside every lock of the session and the
// listener (issue 19, finding 7: a Logf that called Stats or Refused
// deadlocked). Code holding s.mu or l.mu calls printf, which only queues;
// one emitter goroutine, started on demand and gone once the queue is
// empty, calls Logf with no lock held, in order. At most maxLogQueue
// messages wait.
type logQueue struct {
	logf func(string, ...any)

	mu       sync.Mutex
	q        []logMsg
	dropped  int
	emitting bool          // the emitter goroutine runs
	idle     chan struct{} // closed when the emitter stops; nil while none ever ran
}

type logMsg struct {
	format string
	args   []any
}

// printf queues one message. It never blocks on Logf and may be called
// with any lock held.
func (lq *logQueue) printf(format string, args ...any) {
	if lq.logf == nil {
		return
	}
	lq.mu.Lock()
	defer lq.mu.Unlock()
	if len(lq.q) >= maxLogQueue {
		lq.dropped++
		return
	}
	lq.q = append(lq.q, logMsg{format, args})
	if !lq.emitting {
		lq.emitting = true
		lq.idle = make(chan struct{})
		go lq.emit(lq.idle)
	}
}

// emit calls Logf for each queued message until the queue is empty.
func (lq *logQueue) emit(idle chan struct{}) {
	for {
		lq.mu.Lock()
		if len(lq.q) == 0 {
			lq.emitting = false
			lq.q = nil
			lq.mu.Unlock()
			close(idle)
			return
		}
		m := lq.q[0]
		lq.q[0] = logMsg{}
		lq.q = lq.q[1:]
		dropped := lq.dropped
		lq.dropped = 0
		lq.mu.Unlock()
		if dropped > 0 {
			lq.logf("session: %d log messages dropped (more than %d waiting for Logf)", dropped, maxLogQueue)
		}
		lq.logf(m.format, m.args...)
	}
}

// wait returns once every message queued so far has been passed to Logf.
// It must not be called with a lock held that Logf may take.
func (lq *logQueue) wait() {
	lq.mu.Lock()
	idle := lq.idle
	lq.mu.Unlock()
	if idle != nil {
		<-idle
	}
}
