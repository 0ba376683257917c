package session

import (
	"github.com/mpqsched/mpqsched/sched"
)

// PathStatus is what an end wants a path used for (RFC 10069's
// PATH_STATUS_AVAILABLE and PATH_STATUS_BACKUP).
type PathStatus int

const (
	PathAvailable PathStatus = iota // carry data whenever the scheduler likes
	PathBackup                      // carry data only while no available path is live (sched.OnlyBackups)
)

// SetPathStatus marks path id available or backup, here and at the peer:
// the scheduler of either end treats the path as a backup while either end
// wants it so (sched.PathInfo.Backup). The status travels to the peer in
// the connection byte stream with a sequence number, so a late update never
// overwrites a newer one (as RFC 10069's status frames carry one).
func (s *Session) SetPathStatus(id sched.PathID, status PathStatus) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return s.closedErrLocked()
	}
	for _, p := range s.slots {
		if p != nil && p.id == id {
			s.setStatusLocked(p, status == PathBackup)
			return nil
		}
	}
	return ErrNoSuchPath
}

// setStatusLocked records this end's wish for p and queues it for the peer.
func (s *Session) setStatusLocked(p *path, backup bool) {
	was := p.backup || p.peerBackup
	p.backup = backup
	if (p.backup || p.peerBackup) != was {
		s.pathEventLocked(p, PathStatusChanged)
	}
	p.statusSeq++
	if !p.statusQueued {
		p.statusQueued = true
		s.streams.statusQ = append(s.streams.statusQ, p)
	}
	poke(s.wake)
}

// PathStatus takes the peer's wish for a path: the newest by sequence
// number wins; a status for a path this end does not have is dropped.
func (fs *frameSink) PathStatus(id uint64, seq uint64, backup bool) error {
	s := (*Session)(fs)
	for _, p := range s.slots {
		if p != nil && uint64(p.id) == id {
			if seq+1 > p.peerSeq {
				was := p.backup || p.peerBackup
				p.peerSeq, p.peerBackup = seq+1, backup
				if (p.backup || p.peerBackup) != was {
					s.pathEventLocked(p, PathStatusChanged)
				}
				poke(s.wake)
			}
			return nil
		}
	}
	return nil
}
