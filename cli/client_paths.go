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
	byLocal map[string]int  // local address → number
	joined  map[string]bool // local addresses that joined once
}

func newPathNumbers(pcs []net.PacketConn) *pathNumbers {
	n := &pathNumbers{byLocal: map[string]int{}, joined: map[string]bool{}}
	for i, pc := range pcs {
		n.byLocal[pc.LocalAddr().String()] = i + 1
	}
	return n
}

// line is the -v line of e, or "" for an event already told (a path's
// first join, which JoinPaths logs). A join again after an outage comes
// after the removal of the path's old connection (Session.rejoinPath).
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
		if !n.joined[local] {
			n.joined[local] = true
			return ""
		}
		return fmt.Sprintf("%s: joined again after an outage (session path %d)", name, e.Path)
	case session.PathFailed:
		return fmt.Sprintf("%s: potentially failed; its data goes on the other paths (session path %d)", name, e.Path)
	case session.PathRecovered:
		return fmt.Sprintf("%s: live again (session path %d)", name, e.Path)
	case session.PathRemoved:
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
	n.joined[s.LocalAddr().String()] = true // the first path joined before PathEvents
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
