package session

import (
	"github.com/mpqsched/mpqsched/pkg/cc"
	"github.com/mpqsched/mpqsched/sched"
)

// Coupled congestion control over the session windows (window.go).
//
// quic-go runs its own NewReno on every path and lets no caller change it.
// With Config.Coupling set, the session also keeps, for each path, a window
// driven by a rule of package cc (LIA, OLIA, BALIA, or plain Reno for
// "reno-friendly"), and hands the path no more than min(quic-go's window,
// the coupled window):
//
//   - Until a path's first loss its coupled window is unlimited: quic-go's
//     slow start governs, as the papers leave slow start uncoupled.
//   - On a loss event (quic-go declared lost a packet sent after the last
//     reduction: one reduction per congestion event, as quic-go's NewReno
//     does with its largestSentAtLastCutback), the window becomes the rule's
//     Lost of the effective window min(coupled, quic-go's), scaled to the
//     stack's own decrease: RFC 6356 decreases "as in standard TCP", and the
//     single-path flows this session competes with by default are quic-go's,
//     whose NewReno keeps 0.7 of its window (renoBeta), not Reno's 0.5. So
//     LIA and OLIA keep 0.7 of the window and BALIA 1.4× its own decrease
//     (its w/2·min(α, 1.5) for β = 0.5). "reno-friendly", and any rule with
//     Config.RenoFriendly, keeps TCP Reno's 0.5 (BALIA: its own decrease
//     unscaled), for a session that must not take more than kernel TCP.
//   - When quic-go reports that the packet whose loss caused the last
//     reduction was acknowledged after all (a spurious loss), the window
//     returns to its value before that reduction, as quic-go's own NewReno
//     undoes its cutback (OnSpuriousLoss), unless the window has grown past
//     it since. "reno-friendly" never undoes: TCP Reno without RACK does not.
//   - On each acknowledged segment the window grows by the rule's Acked,
//     with every path's effective window and smoothed RTT in the sums, and
//     never passes quic-go's window (which governs when it is the smaller).
//
// So the coupled window can only hold a path below quic-go's: the session
// is at most as aggressive as the rule, and no more than quic-go.

// coupler is the session's coupling state, guarded by Session.mu.
type coupler struct {
	rule  cc.Coupling             // nil: no coupling
	reno  bool                    // plain Reno's response (Config.RenoFriendly, or the rule "reno-friendly"): β = 0.5, never undone
	paths [sched.MaxPaths]cc.Path // scratch, by slot
}

func (c *coupler) init(cfg Config) error {
	name := cfg.Coupling
	if (name == "" || name == "none") && cfg.RenoFriendly {
		name = cc.NameRenoFriendly
	}
	c.reno = cfg.RenoFriendly || name == cc.NameRenoFriendly
	if name == "" || name == "none" {
		return nil
	}
	r, err := cc.New(name)
	c.rule = r
	return err
}

// quicBeta is quic-go's NewReno decrease: the window kept after a loss
// (renoBeta in its internal/congestion).
const quicBeta = 0.7

// lost is the coupled window of path i after a loss event: the rule's
// decrease, scaled from Reno's β to quic-go's unless c.reno.
func (c *coupler) lost(i int, ps []cc.Path) float64 {
	w := c.rule.Lost(i, ps)
	if c.reno {
		return w
	}
	return max(w*quicBeta/cc.Beta, cc.MinWindow(ps[i].MSS))
}

// snapshotLocked fills c.paths with every path's effective window and RTT;
// it returns the rule's view, indexed by slot.
func (s *Session) ccSnapshotLocked() []cc.Path {
	c := &s.cc
	for i, p := range s.slots {
		cp := &c.paths[i]
		if p == nil {
			*cp = cc.Path{}
			continue
		}
		p.tr.mu.Lock()
		cwnd, srtt := uint64(max(p.tr.cwnd, 0)), p.tr.srtt
		p.tr.mu.Unlock()
		cp.Window = float64(p.window.limit(cwnd))
		cp.RTT = srtt
		cp.MSS = float64(s.snd.segSize)
		cp.BetweenLosses, cp.SinceLoss = p.window.l1, p.window.l2
		cp.Off = p.failed || cwnd == 0
	}
	return c.paths[:]
}

// ccAckedLocked grows path p's coupled window for n acknowledged bytes.
func (s *Session) ccAckedLocked(p *path, n uint64, cwnd uint64) {
	w := &p.window
	w.l2 += float64(n)
	if s.cc.rule == nil || !w.coupled {
		return
	}
	s.stats.ccAcked += n
	if w.bytes < float64(cwnd) {
		s.stats.ccGoverned += n
	}
	ps := s.ccSnapshotLocked()
	w.bytes += s.cc.rule.Acked(p.slot, float64(n), ps)
	w.bytes = min(max(w.bytes, cc.MinWindow(float64(s.snd.segSize))), float64(max(cwnd, 1)))
}

// ccLossesLocked reduces the coupled window of every path on which quic-go
// declared lost a packet sent after the path's last reduction.
func (s *Session) ccLossesLocked() {
	if s.cc.rule == nil {
		return
	}
	for _, p := range s.slots {
		if p == nil {
			continue
		}
		w := &p.window
		p.tr.mu.Lock()
		n, lost, sent, before := p.tr.packetsLost, p.tr.lastLost, p.tr.lastSent, p.tr.lossCwnd
		spurious := w.undo > 0 && p.tr.wasSpurious(w.cutBy)
		p.tr.mu.Unlock()
		if spurious {
			if !s.cc.reno { // as quic-go's NewReno undoes; plain Reno does not
				w.bytes = max(w.bytes, w.undo)
				s.stats.ccUndos++
			}
			w.undo = 0
		}
		if n == 0 || w.coupled && lost <= w.cutPN {
			continue // no loss, or one of a congestion event already answered
		}
		w.cutPN, w.cutBy = sent, lost
		ps := s.ccSnapshotLocked()
		if before > 0 {
			// The window before the loss: quic-go has already cut its own
			// by now, and the rule must not cut that cut again.
			ps[p.slot].Window = min(w.bytes, float64(before))
		}
		w.undo = ps[p.slot].Window
		w.bytes = s.cc.lost(p.slot, ps)
		w.coupled = true
		w.l1, w.l2 = w.l2, 0 // OLIA's bytes between the last two losses, and since the last
		s.stats.ccCuts++
	}
}
