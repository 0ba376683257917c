package bench

import (
	"net"
	"time"

	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/session"
)

// handoffProbe records a run's stall log and path trace (see handoff.go)
// from the client session, without touching the session: the reader's
// progress callback marks in-order deliveries, and a goroutine samples
// Session.Stats every PathSampleStep for each path's received bytes.
type handoffProbe struct {
	base  time.Time // the emulator's start: the frame of the event windows
	paths int       // paths in the run
	link  linkOf    // a session path's link (path order), by its client address
	log   stallLog  // written by the reader (the run's goroutine) only
	trace pathTrace // written by the sampler until done is closed
	quit  chan struct{}
	done  chan struct{}
}

// startHandoffProbe starts sampling s, whose run has paths paths, with
// times taken from base.
func startHandoffProbe(s *session.Session, base time.Time, paths int, link linkOf) *handoffProbe {
	p := &handoffProbe{base: base, paths: paths, link: link, quit: make(chan struct{}), done: make(chan struct{})}
	p.sample(s)
	go p.run(s)
	return p
}

// run samples s every PathSampleStep until stop.
func (p *handoffProbe) run(s *session.Session) {
	defer close(p.done)
	t := time.NewTicker(PathSampleStep)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			p.sample(s)
		case <-p.quit:
			p.sample(s)
			return
		}
	}
}

// sample appends s's per-path received bytes now.
func (p *handoffProbe) sample(s *session.Session) {
	st := s.Stats()
	per := make([]uint64, p.paths)
	for _, ps := range st.Paths {
		if i := p.link(ps.LocalAddr); i >= 0 && i < len(per) {
			per[i] += ps.BytesReceived
		}
	}
	p.trace.add(time.Since(p.base), per)
}

// now is the time since the emulator's start.
func (p *handoffProbe) now() time.Duration { return time.Since(p.base) }

// begin marks the request.
func (p *handoffProbe) begin() { p.log.begin(p.now()) }

// progress wraps a Hooks.Progress callback (nil allowed) so that every read
// of new bytes is a delivery in the stall log.
func (p *handoffProbe) progress(next func(int64)) func(int64) {
	return func(got int64) {
		p.log.delivered(p.now())
		if next != nil {
			next(got)
		}
	}
}

// stop ends the stall log at fct (in the emulator's frame) and the sampler.
func (p *handoffProbe) stop(fct time.Duration) {
	p.log.end(fct)
	close(p.quit)
	<-p.done
}

// fill records the maximum stall and the events of ws in res; fct is the
// FCT in the emulator's frame.
func (p *handoffProbe) fill(res *metrics.Result, ws []eventWindow, fct time.Duration) {
	res.MaxStallSec = p.log.max.Seconds()
	res.HandoffEvents = handoffEvents(ws, &p.log, &p.trace, fct)
}

// eventWindows lists the Down outages and handoffs of r's paths: those of
// its scenario when it has one, else the emulator paths' outages.
func eventWindows(r Run) []eventWindow {
	var ws []eventWindow
	if r.Spec != nil {
		for i, ps := range r.Spec.Paths {
			for _, w := range ps.Down.Outages {
				ws = append(ws, eventWindow{path: i, kind: "outage", start: w.Start.D(), end: w.End.D()})
			}
			for _, w := range ps.Down.Handoffs {
				ws = append(ws, eventWindow{path: i, kind: "handoff", start: w.Start.D(), end: w.End.D()})
			}
		}
		return ws
	}
	for i, ps := range r.Paths {
		for _, w := range ps.Down.Outages {
			ws = append(ws, eventWindow{path: i, kind: "outage", start: w.Start, end: w.End})
		}
	}
	return ws
}

// linkOf maps a client-side address to the index of the scenario path (the
// emulated link) it belongs to, or -1. A session path that joined again
// after an outage has a new ID but the same client socket, so its bytes
// still count for its link.
type linkOf func(clientAddr net.Addr) int

// linksByAddr returns the linkOf of the client sockets, in path order.
func linksByAddr(clients []net.Addr) linkOf {
	idx := make(map[string]int, len(clients))
	for i, a := range clients {
		idx[a.String()] = i
	}
	return func(a net.Addr) int {
		if a == nil {
			return -1
		}
		if i, ok := idx[a.String()]; ok {
			return i
		}
		return -1
	}
}
