package session

import (
	"context"
	"crypto/rand"
	"time"

	"github.com/quic-go/quic-go/quicvarint"

	"github.com/mpqsched/mpqsched/pkg/wire"
)

// Fast recovery of a path after an outage (client side).
//
// quic-go backs its probe timeout off exponentially while a path is dead:
// after a 5 s outage its next probe may come seconds after the link
// returned, and its window is full of packets sent into the outage, so
// nothing else can go out on that connection. The client therefore probes a
// silent path itself with tiny ack-eliciting datagrams (TypePing, about 40
// bytes on the wire) at a bounded rate, and once a probe is answered after a
// long silence it joins the path again with a fresh QUIC connection on the
// same socket: the new connection starts from quic-go's initial window (a
// safe value, not the pre-outage one) with no backoff, and the old one is
// closed, its unacknowledged data already reinjected on the other paths.
// While it is being joined again the old path takes no new segments if
// another path is live (path.info shows it potentially failed): they would
// wait behind quic-go's backed-off probe timer, or for a new failure if the
// link goes dark again. The only live path keeps carrying (snapRules).
//
// With each ping, the client also tells the server on its best live path
// that the path is silent (TypeSilent): the server, which sends, marks it
// failed at once if it has data on it that made no progress, so the data
// goes again on the other paths ~100 ms into an outage instead of ~300.
//
// How soon a path is back after its link returns is the wait for the next
// ping, the wait until the client sees the answer, and a handshake. So a
// silent path is pinged every two of its minimum RTTs, but not more often
// than every minPingInterval: the wait for a ping is at most that long,
// whatever the outage did to the smoothed RTT (a Wi-Fi handoff's
// degradation first raises it tenfold). Without a tracer the client looks
// for the answer (quic-go's ACK) when it is due from the minimum RTT:
// once for an ACK sent at once (quic-go acknowledges a packet after a gap
// immediately, RFC 9000 §13.2.1), once more after the peer's largest ACK
// delay.
//
// Cost: one ping per max(2 min RTTs, minPingInterval) while a path is
// silent, at most 20 a second of about 40 bytes (800 bytes a second), and
// one silence report on another path per reportInterval, about 200 bytes
// per second; one QUIC handshake per recovered outage.

// Timing of the probing.
const (
	minSilence      = 100 * time.Millisecond // no packet for max(3 RTT, 4 mean packet gaps, this) makes a path silent
	minPingInterval = 50 * time.Millisecond  // pings on a silent path at most this often
	reportInterval  = 200 * time.Millisecond // silence reports for a path at most this often
	rejoinSilence   = time.Second            // a silence this long is recovered by a fresh connection
	activeWindow    = 500 * time.Millisecond // another path must have received within this for a silence to count
)

// rejoinAttempt bounds one attempt to join a path of smoothed RTT srtt
// again. A link that fails again while the attempt's handshake is under
// way loses its packets, and quic-go's handshake timer backs off; an
// attempt that has not finished in a second (or 8 RTTs) is abandoned and
// the path probed afresh, so that after the link returns the path is down
// for at most the rest of one attempt, a ping and a handshake (issue 31:
// a rejoin begun during a 3 s throttle held the path 5.3 s after the link
// returned).
func rejoinAttempt(srtt time.Duration) time.Duration { return max(rejoinSilence, 8*srtt) }

// srtt is p's latest smoothed RTT, read without side effects (viewLocked
// updates the stats view).
func (p *path) srtt() time.Duration {
	if t := p.tr; t != nil {
		t.mu.Lock()
		defer t.mu.Unlock()
		return t.srtt
	}
	return p.conn.ConnectionStats().SmoothedRTT
}

// answerDue is how long after a ping its answer (quic-go's ACK) is due on
// a path of smoothed RTT srtt: an RTT and the peer's largest ACK delay, and
// a little more.
func answerDue(srtt time.Duration) time.Duration {
	return srtt + maxAckDelay + max(srtt/4, time.Millisecond)
}

// probeState is a path's probing state (client side).
type probeState struct {
	silentFrom time.Time // the last packet before the silence (zero: not silent)
	lastPing   time.Time
	lastReport time.Time // when the last silence report was due
	pings      int
	rejoining  bool
	report     bool                                      // a silence report is due (sent with the ping)
	answeredAt time.Time                                 // when a path probe of this silence was answered (probe_udp.go)
	nonces     [probeNonces][wire.PathProbeNonceLen]byte // the latest path probes' nonces
	sentAt     [probeNonces]time.Time                    // and when each was sent
	nonceN     int                                       // path probes sent this silence
	within     time.Duration                             // an answer counts if it comes this soon (probeAnswerWithin)
}

// probeLocked updates every path's probing state at now. It returns the
// paths to ping, the paths to join again, and its next deadline: the zero
// time if only an event can change anything, else a time after now.
//
// A path is silent when nothing arrived on it for its silence time while
// the peer kept sending data on another path, or when it failed. "Data"
// is a packet with STREAM frames (segments): quic-go's keep-alive PINGs,
// bare ACKs and the session's control datagrams show a connection alive,
// not a peer with data to send. The silence counts from the later of the path's last packet and
// the start of the other path's current run of data, and the other path
// must still be receiving at the end (its last data less than half the
// silence ago). So an idle session's paths are never silent, and neither
// is a path that stayed quiet during one short response on another: were
// it otherwise, the first packet after an idle spell would make every
// other path "silent since the idle spell began", and the answer to its
// ping would join it again after "an outage" of that length.
//
// Where only new data can change the verdict (no other path receives
// data, or its last data is not recent enough), there is no deadline: the
// other paths' tracers poke the send pass at their next packet with data
// (tracer.dataWake; without a tracer, their readers: statsView.dataWake). A failure is seen by checkPathsLocked on the same
// pass.
func (s *Session) probeLocked(now time.Time, ping, rejoin []*path) ([]*path, []*path, time.Time) {
	var next time.Time
	if !s.isClient {
		return ping, rejoin, next
	}
	type seen struct {
		last, data, since time.Time
		srtt, minRTT, gap time.Duration
	}
	var view [len(s.slots)]seen
	for i, p := range s.slots {
		if p == nil {
			continue
		}
		v := p.viewLocked(now)
		view[i] = seen{v.lastRecv, v.lastData, v.dataSince, v.srtt, v.minRTT, v.gap}
	}
	var wakeOn uint64 // slots whose next packet with data must poke the loop
	for i, p := range s.slots {
		if p == nil || p.qtr == nil || view[i].last.IsZero() {
			continue
		}
		ps := &p.probe
		last, srtt := max2(view[i].last, ps.answeredAt), view[i].srtt // an answered path probe was heard on the path
		silence := max(minSilence, 3*srtt, 4*view[i].gap)             // a slow path's packets are far apart
		if !ps.silentFrom.IsZero() && last.After(ps.silentFrom) {
			// A packet came back: long silences are recovered with a new
			// connection, short ones need nothing.
			if ps.pings > 0 && last.Sub(ps.silentFrom) >= rejoinSilence && !ps.rejoining {
				ps.rejoining = true
				rejoin = append(rejoin, p)
			}
			if !ps.rejoining {
				*ps = probeState{}
			}
			continue
		}
		if ps.silentFrom.IsZero() {
			// from: when the silence began to count (zero: it does not).
			var from time.Time
			ongoing := false // another path received data within activeWindow
			for j := range view {
				if j == i || s.slots[j] == nil || view[j].data.IsZero() {
					continue
				}
				q := &view[j]
				ongoing = ongoing || now.Sub(q.data) < activeWindow
				if q.data.After(last) && now.Sub(q.data) < silence/2 {
					if f := max2(last, q.since); from.IsZero() || f.Before(from) {
						from = f
					}
				}
			}
			switch {
			case now.Sub(last) < silence:
				if ongoing {
					next = sooner(next, last.Add(silence)) // after now
				} else {
					wakeOn |= ^(1 << uint(i)) // only data elsewhere can start the silence
				}
				continue
			case p.failed:
				ps.silentFrom = last
			case from.IsZero():
				wakeOn |= ^(1 << uint(i))
				continue
			case now.Sub(from) < silence:
				next = sooner(next, from.Add(silence)) // after now
				continue
			default:
				ps.silentFrom = from
			}
		}
		if ps.rejoining {
			continue
		}
		rtt := view[i].minRTT // the link's RTT: the outage may have inflated srtt
		if rtt <= 0 {
			rtt = srtt
		}
		every := max(minPingInterval, 2*rtt)
		ps.within = probeAnswerWithin(rtt)
		if now.Sub(ps.lastPing) >= every {
			ps.lastPing = now
			ps.pings++
			s.stats.pings++
			ping = append(ping, p)
			if now.Sub(ps.lastReport) >= reportInterval {
				ps.lastReport = now
				ps.report = true
			}
		}
		next = sooner(next, ps.lastPing.Add(every)) // after now: lastPing is now or less than every ago
		if p.tr == nil {
			// No tracer tells when the ping is answered (its PTO count
			// drops to 0): look when an immediate answer is due, and when
			// a delayed one is.
			for _, d := range [...]time.Duration{answerDue(rtt) - maxAckDelay, answerDue(rtt)} {
				if due := ps.lastPing.Add(d); due.After(now) {
					next = sooner(next, due)
					break
				}
			}
		}
	}
	for i, p := range s.slots {
		if p != nil && wakeOn&(1<<uint(i)) != 0 {
			if p.tr == nil {
				p.sv.dataWake = true // path_read.go pokes
				continue
			}
			p.tr.mu.Lock()
			p.tr.dataWake = true
			p.tr.mu.Unlock()
		}
	}
	return ping, rejoin, next
}

// rejoinPath replaces p by a fresh connection on the same socket, joined
// to the session, and removes p. On failure p stays, potentially failed,
// and probing goes on.
func (s *Session) rejoinPath(p *path) {
	// The session's context: Close cancels the dial (finding 6 of issue
	// 19: with context.Background, Close waited for it).
	s.mu.Lock()
	opts := PathOptions{Backup: p.backup}
	s.mu.Unlock()
	attempt := min(s.cfg.HandshakeTimeout, rejoinAttempt(p.srtt()))
	ctx, cancel := context.WithTimeout(s.life.ctx, attempt)
	defer cancel()
	j := &wire.Join{SessionID: s.id}
	rand.Read(j.Nonce[:])
	np, err := s.dialAttempt(ctx, p.qtr, p.remote, j, opts)
	s.mu.Lock()
	defer s.mu.Unlock()
	p.probe = probeState{}
	if err != nil {
		s.logf("session %x: path %d: joining again after an outage failed: %v", s.id[:4], p.id, err)
		// Its link failed again (or will not take it): the path stays out
		// of the schedule until a packet shows it alive, as it was while
		// being joined again, instead of taking segments into the dark.
		if !s.closed && s.slots[p.slot] == p && !p.failed {
			s.failLocked(p, s.now(), p.lastProgress, "joining it again failed")
		}
		return
	}
	np.qtr, np.remote, np.sendErrs = p.qtr, p.remote, p.sendErrs
	if s.closed || s.slots[p.slot] != p {
		go closeConn(np.conn, codePathRemoved, "path removed")
		return
	}
	s.logf("session %x: path %d back after an outage: joined again as path %d", s.id[:4], p.id, np.id)
	s.stats.rejoins++
	s.removeLocked(p, s.now())
	s.mu.Unlock()
	err = s.attach(np)
	s.mu.Lock()
	if err != nil {
		go closeConn(np.conn, codePathRemoved, err.Error())
	}
}

// reportSilence tells the peer, on the best other live path, that p is
// silent. s.mu is not held.
func (s *Session) reportSilence(p *path) {
	s.mu.Lock()
	var via *path
	if p.probe.report {
		p.probe.report = false
		for _, q := range s.slots {
			if q != nil && q != p && !q.failed && q.probe.silentFrom.IsZero() {
				via = q
				break
			}
		}
	}
	s.mu.Unlock()
	if via != nil {
		_ = via.sendDatagram(quicvarint.Append([]byte{wire.TypeSilent}, uint64(p.id)))
	}
}
