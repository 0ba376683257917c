package session

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/mpqsched/mpqsched/pkg/wire"
)

// Path probes outside QUIC (wire.PathProbe).
//
// With each ping on a silent path (probe.go) the client also sends a path
// probe on the path's socket, outside its QUIC connection. After an outage
// that connection may send nothing: its congestion window is full of
// packets sent into the dark (the pings among them), and quic-go waits for
// its backed-off probe timer, which fired 200–700 ms after the link
// returned in about one outage in 50 (TestPathBackSoonAfterOutage). The
// listener answers a probe at once, and the answer counts as a packet
// heard on the path: after a long silence, the client joins the path again
// with a fresh connection.
//
// Security: a probe and its answer carry a MAC made with the session's
// join key (which only the session's two ends hold), and an answer echoes
// a nonce the client sent on that path among its last probeNonces probes.
// A copy of a probe replayed from another address gets an answer of the
// same size (no amplification), at most one per minProbeAnswerGap for each
// session.
//
// Bounds: one reader goroutine per client socket that sent a probe, until
// the socket closes or the session ends (quic-go queues at most 32
// non-QUIC packets for it), so at most one per path; one for the
// listener.

// probeAnswerWithin is how soon after a path probe its answer must come,
// on a path of minimum RTT rtt, to count: twice the minimum RTT and 10 ms.
// The probe is the fast way to see a link back to its usual self; a
// handoff's link first degrades (ten times less rate, a 30% loss and
// twice the delay, emu.Handoff), and a slow answer through that shows a
// path that carries packets, not one to join again and fill. Slow answers
// are left to the path's QUIC pings, which count whenever answered, as
// before the probes.
func probeAnswerWithin(rtt time.Duration) time.Duration { return 2*rtt + 10*time.Millisecond }

// probeNonces is how many of a path's latest probes an answer may answer.
const probeNonces = 4

// minProbeAnswerGap: a listener answers a session's probes at most this
// often.
const minProbeAnswerGap = 5 * time.Millisecond

// pathProbeMAC is the MAC of a probe or answer p with join key key.
func pathProbeMAC(key *[32]byte, p *wire.PathProbe) [wire.PathProbeMACLen]byte {
	m := hmac.New(sha256.New, key[:])
	m.Write([]byte("mpqsched path probe"))
	m.Write([]byte{p.Type()})
	m.Write(p.SessionID[:])
	m.Write(p.Nonce[:])
	var out [wire.PathProbeMACLen]byte
	copy(out[:], m.Sum(nil))
	return out
}

// sendPathProbe sends a path probe on p's socket and starts that socket's
// reader of answers if none runs. s.mu is not held.
func (s *Session) sendPathProbe(p *path) {
	pr := wire.PathProbe{SessionID: s.id}
	rand.Read(pr.Nonce[:])
	pr.MAC = pathProbeMAC(&s.joinKey, &pr)
	s.mu.Lock()
	if s.closed || p.qtr == nil || p.remote == nil {
		s.mu.Unlock()
		return
	}
	ps := &p.probe
	ps.nonces[ps.nonceN%probeNonces] = pr.Nonce
	ps.sentAt[ps.nonceN%probeNonces] = s.now()
	ps.nonceN++
	tr := p.qtr
	if !s.probeReaders[tr] {
		if s.probeReaders == nil {
			s.probeReaders = make(map[*quic.Transport]bool)
		}
		s.probeReaders[tr] = true
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.readPathProbeAnswers(tr)
			s.mu.Lock()
			delete(s.probeReaders, tr)
			s.mu.Unlock()
		}()
	}
	s.mu.Unlock()
	var b [wire.PathProbeLen]byte
	_, _ = tr.WriteTo(wire.AppendPathProbe(b[:0], &pr), p.remote)
}

// readPathProbeAnswers takes the non-QUIC datagrams that arrive on tr,
// until the session ends.
func (s *Session) readPathProbeAnswers(tr *quic.Transport) {
	buf := make([]byte, 2*wire.PathProbeLen) // a longer datagram reads longer than a probe
	var pr wire.PathProbe
	for {
		n, _, err := tr.ReadNonQUICPacket(s.life.ctx, buf)
		if err != nil {
			return // the session ended, or the socket closed
		}
		if wire.ParsePathProbe(buf[:n], &pr) != nil || !pr.Answer || pr.SessionID != s.id {
			continue
		}
		if mac := pathProbeMAC(&s.joinKey, &pr); !hmac.Equal(mac[:], pr.MAC[:]) {
			continue
		}
		s.pathProbeAnswered(tr, pr.Nonce)
	}
}

// pathProbeAnswered notes that the path on socket tr answered one of its
// latest probes within probeAnswerWithin: it was heard from now
// (probeLocked).
func (s *Session) pathProbeAnswered(tr *quic.Transport, nonce [wire.PathProbeNonceLen]byte) {
	s.mu.Lock()
	heard := false
	now := s.now()
	for _, p := range s.slots {
		if p == nil || p.qtr != tr || p.probe.silentFrom.IsZero() {
			continue
		}
		ps := &p.probe
		for i, n := range ps.nonces[:min(ps.nonceN, probeNonces)] {
			if n == nonce && now.Sub(ps.sentAt[i]) <= ps.within {
				ps.answeredAt = now
				heard = true
			}
		}
	}
	if heard {
		s.stats.probeAnswers++
	}
	s.mu.Unlock()
	if heard {
		poke(s.wake)
	}
}

// answerPathProbes answers the path probes of the listener's sessions
// until ctx ends.
func (l *Listener) answerPathProbes(ctx context.Context) {
	buf := make([]byte, 2*wire.PathProbeLen)
	var out [wire.PathProbeLen]byte
	var pr wire.PathProbe
	for {
		n, from, err := l.tr.ReadNonQUICPacket(ctx, buf)
		if err != nil {
			return
		}
		if wire.ParsePathProbe(buf[:n], &pr) != nil || pr.Answer {
			continue
		}
		l.mu.Lock()
		s := l.sessions[pr.SessionID]
		l.mu.Unlock()
		if s == nil || !s.pathProbeAnswer(&pr, time.Now()) {
			continue
		}
		_, _ = l.tr.WriteTo(wire.AppendPathProbe(out[:0], &pr), from)
	}
}

// pathProbeAnswer turns probe pr into its answer if its MAC is the
// session's and the session answered none in the last minProbeAnswerGap.
// Any goroutine (lastProbeAnswer is atomic; joinKey is set before the
// listener knows the session).
func (s *Session) pathProbeAnswer(pr *wire.PathProbe, now time.Time) bool {
	if mac := pathProbeMAC(&s.joinKey, pr); !hmac.Equal(mac[:], pr.MAC[:]) {
		return false
	}
	last := s.lastProbeAnswer.Load()
	if now.UnixNano()-last < int64(minProbeAnswerGap) || !s.lastProbeAnswer.CompareAndSwap(last, now.UnixNano()) {
		return false
	}
	pr.Answer = true
	pr.MAC = pathProbeMAC(&s.joinKey, pr)
	return true
}
