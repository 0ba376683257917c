package cli

import (
	"net"
	"testing"

	"github.com/mpqsched/mpqsched/pkg/session"
)

// Issue 31: "Path numbers are the same everywhere and stay stable across a
// rejoin." A path joined again after an outage is a new session path on
// the same socket: its -v lines keep its -paths number.
func TestPathNumbersStableAcrossRejoin(t *testing.T) {
	a := &net.UDPAddr{IP: net.IPv4(10, 10, 1, 2), Port: 1000}
	b := &net.UDPAddr{IP: net.IPv4(10, 10, 2, 2), Port: 2000}
	n := &pathNumbers{byLocal: map[string]int{a.String(): 1, b.String(): 2}, joined: map[string]bool{a.String(): true}}
	for _, c := range []struct {
		e    session.PathEvent
		want string
	}{
		{session.PathEvent{Kind: session.PathJoined, Path: 1, Local: b}, ""}, // JoinPaths tells it
		{session.PathEvent{Kind: session.PathFailed, Path: 1, Local: b}, "path 2 (from 10.10.2.2:2000): potentially failed; its data goes on the other paths (session path 1)"},
		{session.PathEvent{Kind: session.PathRemoved, Path: 1, Local: b}, "path 2 (from 10.10.2.2:2000): removed (session path 1)"},
		{session.PathEvent{Kind: session.PathJoined, Path: 2, Local: b}, "path 2 (from 10.10.2.2:2000): joined again after an outage (session path 2)"},
		{session.PathEvent{Kind: session.PathRecovered, Path: 0, Local: a}, "path 1 (from 10.10.1.2:1000): live again (session path 0)"},
		{session.PathEvent{Kind: session.PathRemoved, Path: 2, Local: b}, "path 2 (from 10.10.2.2:2000): removed (session path 2)"},
		{session.PathEvent{Kind: session.PathStatusChanged, Path: 0, Local: a, Backup: true}, "path 1 (from 10.10.1.2:1000): now a backup (session path 0)"},
		{session.PathEvent{Kind: session.PathFailed, Path: 5}, "path ? (from ?): potentially failed; its data goes on the other paths (session path 5)"},
	} {
		if got := n.line(c.e); got != c.want {
			t.Errorf("%v of session path %d: %q, want %q", c.e.Kind, c.e.Path, got, c.want)
		}
	}
}
