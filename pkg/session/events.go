package session

import (
	"fmt"
	"net"
	"time"

	"github.com/mpqsched/mpqsched/sched"
)

// PathEventKind is what happened to a path.
type PathEventKind uint8

const (
	// PathJoined: a path joined the session (the first path included, if
	// PathEvents was called before; a path joined again after an outage
	// appears as a new path, then PathRemoved for the old one).
	PathJoined PathEventKind = iota + 1
	// PathFailed: the path made no progress for several RTOs and is
	// potentially failed; its data went again on the other paths.
	PathFailed
	// PathRecovered: a potentially failed path receives packets again.
	PathRecovered
	// PathRemoved: the path left the session (RemovePath, a failure, the
	// peer, a rejoin, or the session's end).
	PathRemoved
	// PathStatusChanged: the path became a backup or available again, by
	// this end's SetPathStatus or the peer's (PathEvent.Backup is the
	// status now).
	PathStatusChanged
)

var pathEventNames = [...]string{"", "joined", "failed", "recovered", "removed", "status changed"}

// String is the kind's name, e.g. "failed".
func (k PathEventKind) String() string {
	if int(k) < len(pathEventNames) && k > 0 {
		return pathEventNames[k]
	}
	return fmt.Sprintf("PathEventKind(%d)", uint8(k))
}

// PathEvent is one change of a path (Session.PathEvents).
type PathEvent struct {
	Kind   PathEventKind // what happened
	Path   sched.PathID  // the path it happened to
	Local  net.Addr      // the path's local address (nil in some unit tests)
	Remote net.Addr      // the peer's address on the path
	Backup bool          // the path is used only as a backup (either end wants it so)
	Time   time.Time     // when the session saw it (its clock)
	// Dropped counts the older events dropped to make room (the
	// application did not keep up) since the previous event was queued.
	Dropped int
}

// maxPathEvents is the capacity of the PathEvents channel.
const maxPathEvents = 64

// pathEvents is the PathEvents channel, guarded by Session.mu.
type pathEvents struct {
	ch      chan PathEvent // nil until PathEvents is called
	closed  bool
	dropped int // dropped since the last event that went in
}

// PathEvents returns the channel of the session's path events, from the
// first call on (each call returns the same channel). The session never
// blocks on it: it holds maxPathEvents (64) events, and when the
// application does not keep up the oldest waiting event is dropped; the
// next event queued counts the drops (PathEvent.Dropped). The channel is
// closed when the session ends, after a PathRemoved for each of its paths.
// Safe for concurrent use.
func (s *Session) PathEvents() <-chan PathEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.events.ch == nil {
		s.events.ch = make(chan PathEvent, maxPathEvents)
		if s.closed {
			s.events.closed = true
			close(s.events.ch)
		}
	}
	return s.events.ch
}

// pathEventLocked queues an event about p, if anyone listens; s.mu is held.
// It never blocks: a full channel loses its oldest event.
func (s *Session) pathEventLocked(p *path, kind PathEventKind) {
	ev := &s.events
	if ev.ch == nil || ev.closed {
		return
	}
	e := PathEvent{Kind: kind, Path: p.id, Local: p.localAddr(), Remote: p.remoteAddr(), Backup: p.backup || p.peerBackup, Time: s.now()}
	for {
		e.Dropped = ev.dropped
		select {
		case ev.ch <- e:
			ev.dropped = 0
			return
		default:
		}
		select { // full: drop the oldest (the application may take it first)
		case <-ev.ch:
			ev.dropped++
		default:
		}
	}
}

// closeEventsLocked closes the channel once the session has ended; s.mu is
// held.
func (s *Session) closeEventsLocked() {
	if ev := &s.events; ev.ch != nil && !ev.closed {
		ev.closed = true
		close(ev.ch)
	}
}
