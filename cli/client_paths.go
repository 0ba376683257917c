package cli

import (
	"fmt"
	"net"

	"github.com/mpqsched/mpqsched/pkg/session"
)

// pathNumbers names a session's paths as -paths and -backup count them:
// by their local socket, from 1. A path joined again after an outage is a
// new session path (a new connection, a new session path number) on the
// same socket, so it keeps its number here.
type pathNumbers struct {
	byLocal map[string]int // local address → number
	live    map[string]int // session paths open on each local address
}

func newPathNumbers(pcs []net.PacketConn) *pathNumbers {
	n := &pathNumbers{byLocal: map[string]int{}, live: map[string]int{}}
	for i, pc := range pcs {
		n.byLocal[pc.LocalAddr().String()] = i + 1
	}
	return n
}

// line is the -v line of e, or "" for an event already told (a path's
// first join, which JoinPaths logs).
func (n *pathNumbers) line(e session.PathEvent) string {
	local := "?"
	if e.Local != nil {
		local = e.Local.String()
	}
	name := "path ?"
	if num, ok := n.byLocal[local]; ok {
		name = fmt.Sprintf("path %d", num)
	}
	name += " (from " + local + ")"
	switch e.Kind {
	case session.PathJoined:
		n.live[local]++
		if n.live[local] == 1 {
			return ""
		}
		return fmt.Sprintf("%s: joined again after an outage (session path %d)", name, e.Path)
	case session.PathFailed:
		return fmt.Sprintf("%s: potentially failed; its data goes on the other paths (session path %d)", name, e.Path)
	case session.PathRecovered:
		return fmt.Sprintf("%s: live again (session path %d)", name, e.Path)
	case session.PathRemoved:
		n.live[local]--
		if n.live[local] > 0 {
			return fmt.Sprintf("%s: its connection before the outage closed (session path %d)", name, e.Path)
		}
		return fmt.Sprintf("%s: removed (session path %d)", name, e.Path)
	case session.PathStatusChanged:
		status := "available"
		if e.Backup {
			status = "a backup"
		}
		return fmt.Sprintf("%s: now %s (session path %d)", name, status, e.Path)
	}
	return fmt.Sprintf("%s: %v (session path %d)", name, e.Kind, e.Path)
}

// logPathEvents prints one -v line per path event of s, the paths named
// by their -paths number (pathNumbers), until the session's events end
// (the removals at its end are not news); wait returns once they did.
func (c *clientCmd) logPathEvents(s *session.Session, pcs []net.PacketConn) (wait func()) {
	n := newPathNumbers(pcs)
	n.live[s.LocalAddr().String()] = 1 // the first path joined before PathEvents
	ch := s.PathEvents()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for e := range ch {
			if e.Dropped > 0 {
				c.logf("%d path events dropped", e.Dropped)
			}
			l := n.line(e)
			if e.Kind == session.PathRemoved && s.Context().Err() != nil {
				continue // the session's end removes every path: no news
			}
			if l != "" {
				c.logf("%s", l)
			}
		}
	}()
	return func() { <-done }
}
