package netns

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Each run's "why" (issue 23, item 2): per flow, the loss rate at the
// queue, window reductions, the share of time in slow start, bursts
// (pacing) and ACK frequency, from the bottleneck's counters, the packet
// capture, the kernel's counters and socket state (TCP, MPTCP) and the
// senders' qlogs (quic-go, the session).

// fairTCPStats are a server namespace's TCP events over a run (nstat):
// one flow's, since each flow has its own server namespace.
type fairTCPStats struct {
	recoveries uint64 // fast-recovery episodes: window reductions (TcpExtTCPSackRecovery + TCPRenoRecovery)
	rtos       uint64 // retransmission timeouts (TcpExtTCPTimeouts): the window falls to 1
	undos      uint64 // reductions undone (TcpExtTCP{Full,Partial,DSACK,Loss}Undo)
	retrans    uint64 // segments retransmitted (TcpRetransSegs)
	out, in    uint64 // segments sent and received (TcpOutSegs, TcpInSegs): data out, ACKs in
}

func tcpStatsOf(a, b map[string]uint64) fairTCPStats {
	return fairTCPStats{
		recoveries: tcpEvents(a, b, "TcpExtTCPSackRecovery", "TcpExtTCPRenoRecovery"),
		rtos:       tcpEvents(a, b, "TcpExtTCPTimeouts"),
		undos:      tcpEvents(a, b, "TcpExtTCPFullUndo", "TcpExtTCPPartialUndo", "TcpExtTCPDSACKUndo", "TcpExtTCPLossUndo"),
		retrans:    tcpEvents(a, b, "TcpRetransSegs"),
		out:        tcpEvents(a, b, "TcpOutSegs"),
		in:         tcpEvents(a, b, "TcpInSegs"),
	}
}

// quicDiag is what a QUIC flow's server qlogs say, summed or averaged
// over its path connections.
type quicDiag struct {
	conns       int
	recoveries  int     // window reductions over the whole run
	recovWin    int     // of those, in the measurement window
	lost        int     // packets declared lost
	spurious    int     // of those, found spurious (quic-go undoes its reduction when all of an epoch's losses are)
	sent        int     // packets sent
	slowStart   float64 // share of the window in slow start (mean over the connections alive in it)
	appLimited  float64 // … application-limited (quic-go's state: in flight more than 3 packets below its window)
	cwndLimited float64 // share of metrics updates in the window with in flight within 3 packets of quic-go's window
}

// fairDiag is one run's diagnostics.
type fairDiag struct {
	lossOurs, lossComp float64 // fraction of the flow's packets dropped at the queue (whole run)
	pktsOurs, pktsComp uint64  // packets that entered the queue
	dropsTc, dropsSum  uint64  // the queue's drop count and the per-flow drops summed (a check)
	ackOurs, ackComp   float64 // data packets per packet the client sent back (ACK frequency)

	tcpOurs, tcpComp fairTCPStats // nstat (the flow's only for tcp and mptcp)
	tiOurs, tiComp   tcpShares    // socket state in the window (tcp, mptcp)
	bOurs, bComp     burstStats   // bursts in the window
	quic             quicDiag     // quic and session flows
	ccCuts, ccUndos  float64      // the session's coupled-window reductions and undos (server's Stats via the client's result)
	ccGoverned       float64      // share of the bytes acknowledged under a coupled window while it was below quic-go's
	retransOurs      uint64       // the session's or quic-go's lost + reinjected packets (client's result)
	redundantOurs    uint64       // the session's bytes beyond first transmissions
	errs             []string
}

// fairDiagRun holds what startDiag began.
type fairDiagRun struct {
	c0          fairCounters
	kOurs0      map[string]uint64
	kComp0      map[string]uint64
	cap         *capture
	tiOurs      *tcpInfoSampler
	tiComp      *tcpInfoSampler
	startedCapt time.Time
}

// startDiag snapshots the counters and starts the capture and the socket
// samplers of run n.
func (fe *fairEnv) startDiag(t *testing.T, n int) *fairDiagRun {
	t.Helper()
	d := &fairDiagRun{c0: fe.counters(t), kOurs0: fe.kernelCounters(t, fe.spec.ServerNS()), kComp0: fe.kernelCounters(t, fairComp)}
	if os.Getenv("MPQ_FAIR_CAPTURE") != "0" {
		d.cap = startCaptureT(t, fe.capDir, n)
	}
	var err error
	if d.tiOurs, err = startTCPInfo(fe.spec.ServerNS(), 4433); err != nil {
		t.Fatalf("tcp_info sampler: %v", err)
	}
	if d.tiComp, err = startTCPInfo(fairComp, 4433); err != nil {
		t.Fatalf("tcp_info sampler: %v", err)
	}
	return d
}

// finishDiag stops what startDiag began and fills r.diag.
func (fe *fairEnv) finishDiag(t *testing.T, d *fairDiagRun, r *fairRun, paths []int) {
	t.Helper()
	g := &r.diag
	c1 := fe.counters(t)
	kOurs1, kComp1 := fe.kernelCounters(t, fe.spec.ServerNS()), fe.kernelCounters(t, fairComp)
	tiO, errO := d.tiOurs.Stop()
	tiC, errC := d.tiComp.Stop()
	for _, e := range []error{errO, errC} {
		if e != nil {
			g.errs = append(g.errs, "tcp_info: "+e.Error())
		}
	}
	var capt []capPacket
	if d.cap != nil {
		var err error
		if capt, err = d.cap.stop(); err != nil {
			g.errs = append(g.errs, "capture: "+err.Error())
		}
	}

	g.lossOurs, g.lossComp = fairLoss(d.c0, c1, paths...), fairLoss(d.c0, c1, fairCompPath)
	var up, upC uint64
	for _, p := range paths {
		g.pktsOurs += c1.in[p-1] - d.c0.in[p-1]
		up += c1.up[p-1] - d.c0.up[p-1]
	}
	g.pktsComp = c1.in[fairCompPath-1] - d.c0.in[fairCompPath-1]
	upC = c1.up[fairCompPath-1] - d.c0.up[fairCompPath-1]
	if up > 0 {
		g.ackOurs = float64(g.pktsOurs) / float64(up)
	}
	if upC > 0 {
		g.ackComp = float64(g.pktsComp) / float64(upC)
	}
	g.dropsTc = c1.tcDrops - d.c0.tcDrops
	for p := 1; p <= 5; p++ {
		in, rx := c1.in[p-1]-d.c0.in[p-1], c1.rx[p-1]-d.c0.rx[p-1]
		if in > rx {
			g.dropsSum += in - rx
		}
	}
	g.tcpComp = tcpStatsOf(d.kComp0, kComp1)
	g.tiComp = sharesOf(tiC, []int{fairCompPath}, r.from, r.to)
	if r.flow.kind == "tcp" || r.flow.kind == "mptcp" {
		g.tcpOurs = tcpStatsOf(d.kOurs0, kOurs1)
		g.tiOurs = sharesOf(tiO, paths, r.from, r.to)
	}
	if capt != nil {
		g.bOurs = burstsOver(capt, paths, r.from, r.to)
		g.bComp = bursts(capt, fairCompPath, r.from, r.to)
	}
	g.ccCuts, g.ccUndos = r.ours.Extra["coupling_cuts"], r.ours.Extra["coupling_undos"]
	if a := r.ours.Extra["coupled_acked_bytes"]; a > 0 {
		g.ccGoverned = r.ours.Extra["coupled_governed_bytes"] / a
	}
	g.retransOurs = r.ours.RetransPackets
	g.redundantOurs = r.ours.RedundantBytes
	if r.flow.kind == "session" || r.flow.kind == "quic" {
		dir := filepath.Join(fe.qlogRoot, r.flow.mode())
		if r.flow.kind == "quic" {
			dir = filepath.Join(fe.qlogRoot, "quic-go")
		}
		// The server closes a path connection's qlog when the client's
		// close reaches it.
		time.Sleep(100 * time.Millisecond)
		conns, err := takeQlogs(dir, "server")
		if err != nil {
			g.errs = append(g.errs, err.Error())
		}
		g.quic = quicDiagOf(conns, r.from, r.to)
	}
	for _, e := range g.errs {
		t.Logf("run %d diagnostics: %s", r.n, e)
	}
}

// burstsOver merges the bursts of a flow's paths (each path is its own
// sender): packet-weighted.
func burstsOver(ps []capPacket, paths []int, from, to time.Time) burstStats {
	var s burstStats
	var sq, n5 float64
	for _, p := range paths {
		b := bursts(ps, p, from, to)
		s.packets += b.packets
		s.bursts += b.bursts
		s.max = max(s.max, b.max)
		sq += b.mean * float64(b.packets)
		n5 += b.in5 * float64(b.packets)
	}
	if s.packets > 0 {
		s.mean, s.in5 = sq/float64(s.packets), n5/float64(s.packets)
	}
	return s
}

// quicDiagOf summarises a QUIC flow's server connections; connections
// that sent fewer than 100 packets (a control connection, a handshake
// that went nowhere) are left out.
func quicDiagOf(conns []qlogConn, from, to time.Time) quicDiag {
	var d quicDiag
	var alive int
	for i := range conns {
		c := &conns[i]
		if c.sent < 100 {
			continue
		}
		d.conns++
		d.recoveries += len(c.recoveries)
		d.recovWin += c.recoveriesIn(from, to)
		d.lost += c.lost
		d.spurious += c.spurious
		d.sent += c.sent
		if c.last.After(from) && c.first.Before(to) {
			alive++
			sh := c.stateShares(from, to)
			d.slowStart += sh["slow_start"]
			d.appLimited += sh["application_limited"]
			l, _ := c.cwndLimited(from, to)
			d.cwndLimited += l
		}
	}
	if alive > 0 {
		d.slowStart /= float64(alive)
		d.appLimited /= float64(alive)
		d.cwndLimited /= float64(alive)
	}
	return d
}

// reductions is the flow's window reductions over the run: recovery
// episodes and timeouts (TCP, MPTCP), quic-go's recoveries (QUIC).
func (g *fairDiag) reductions(kind string) float64 {
	switch kind {
	case "tcp", "mptcp":
		return float64(g.tcpOurs.recoveries + g.tcpOurs.rtos)
	}
	return float64(g.quic.recoveries)
}

// cutsInWindow is the flow's window reductions in the measurement
// window: tcp_info's congestion-state entries (TCP, MPTCP), quic-go's
// recoveries (QUIC).
func (g *fairDiag) cutsInWindow(kind string) float64 {
	switch kind {
	case "tcp", "mptcp":
		return float64(g.tiOurs.cuts)
	}
	return float64(g.quic.recovWin)
}

// slowStart is the flow's share of the window in slow start.
func (g *fairDiag) slowStart(kind string) float64 {
	switch kind {
	case "tcp", "mptcp":
		return g.tiOurs.slowStart
	}
	return g.quic.slowStart
}

// line is the run's diagnostics in one line.
func (g *fairDiag) line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "loss %.2f%%/%.2f%% of %d/%d pkts (queue drops %d, per-flow sum %d); data pkts per ACK %.2f/%.2f; bursts %.1f/%.1f (max %d/%d, ≥5: %.0f%%/%.0f%%)",
		100*g.lossOurs, 100*g.lossComp, g.pktsOurs, g.pktsComp, g.dropsTc, g.dropsSum, g.ackOurs, g.ackComp,
		g.bOurs.mean, g.bComp.mean, g.bOurs.max, g.bComp.max, 100*g.bOurs.in5, 100*g.bComp.in5)
	if g.tiOurs.samples > 0 || g.tcpOurs.out > 0 {
		fmt.Fprintf(&b, "; flow TCP: %d recoveries (%d in window), %d RTOs, %d undos, %d retrans, slow start %.0f%%, recovery %.0f%%, cwnd %.0f",
			g.tcpOurs.recoveries, g.tiOurs.cuts, g.tcpOurs.rtos, g.tcpOurs.undos, g.tcpOurs.retrans, 100*g.tiOurs.slowStart, 100*g.tiOurs.recovery, g.tiOurs.cwnd)
	}
	if g.quic.conns > 0 {
		q := g.quic
		fmt.Fprintf(&b, "; flow quic-go: %d conns, %d recoveries (%d in window), %d lost, %d spurious, slow start %.0f%%, app-limited %.0f%%, cwnd-limited %.0f%%; retrans %d, redundant %d B",
			q.conns, q.recoveries, q.recovWin, q.lost, q.spurious, 100*q.slowStart, 100*q.appLimited, 100*q.cwndLimited, g.retransOurs, g.redundantOurs)
	}
	if g.ccCuts > 0 {
		fmt.Fprintf(&b, "; session: %.0f coupled cuts, %.0f undone, coupled window below quic-go's for %.0f%% of the bytes", g.ccCuts, g.ccUndos, 100*g.ccGoverned)
	}
	fmt.Fprintf(&b, "; competitor: %d recoveries (%d in window), %d RTOs, %d undos, slow start %.0f%%, cwnd %.0f",
		g.tcpComp.recoveries, g.tiComp.cuts, g.tcpComp.rtos, g.tcpComp.undos, 100*g.tiComp.slowStart, g.tiComp.cwnd)
	return b.String()
}
