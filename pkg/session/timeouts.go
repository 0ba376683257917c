package session

import "time"

// timeoutsLocked ends the session when one of its timeouts expired and
// returns when to check again (zero: nothing pending).
//
//   - AckTimeout: data is in flight and no acknowledgement progress was made
//     for that long (a peer that stops acknowledging cannot hold the data
//     kept for retransmission forever; quic-go's keep-alives would otherwise
//     keep the paths up).
//   - IdleTimeout: no stream is open and nothing is in flight for that long.
func (s *Session) timeoutsLocked(now time.Time) (next time.Time) {
	sn := &s.snd
	if sn.inflightBytes > 0 {
		t := sn.progressAt.Add(s.cfg.AckTimeout)
		if !now.Before(t) {
			s.closeLocked(ErrAckTimeout, codeAckTimeout)
			return time.Time{}
		}
		next = t
	}
	if s.cfg.IdleTimeout > 0 {
		if s.streams.Len() > 0 || sn.inflightBytes > 0 || !s.drainedLocked() {
			s.lastActive = now
		}
		t := s.lastActive.Add(s.cfg.IdleTimeout)
		if !now.Before(t) {
			s.closeLocked(ErrIdleTimeout, codeIdleTimeout)
			return time.Time{}
		}
		next = sooner(next, t)
	}
	return next
}
