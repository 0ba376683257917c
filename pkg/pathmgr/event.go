package pathmgr

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/mpqsched/mpqsched/sched"
)

// Endpoint is a local address that can carry a path: an address on an
// interface.
type Endpoint struct {
	Index int        // interface index
	Name  string     // interface name when the endpoint was seen
	IP    netip.Addr // local address
}

// String is "NAME IP", e.g. "wlan0 192.0.2.7".
func (e Endpoint) String() string { return e.Name + " " + e.IP.String() }

// key identifies an endpoint: the same address on another interface is
// another endpoint.
type key struct {
	index int
	ip    netip.Addr
}

func (e Endpoint) key() key { return key{e.Index, e.IP} }

// less orders keys by interface index, then address.
func (k key) less(o key) bool {
	if k.index != o.index {
		return k.index < o.index
	}
	return k.ip.Less(o.ip)
}

// EventKind says what happened to a path.
type EventKind uint8

// Kinds of Event.
const (
	// Joined: a path joined over Event.Endpoint as Event.Path (Reason
	// "first path" for the one given to Attach).
	Joined EventKind = iota + 1
	// JoinFailed: a join over Event.Endpoint failed (Event.Err). It is
	// tried again after Config.RetryInterval while the address stays usable.
	JoinFailed
	// Removed: the path Event.Path was removed, for Event.Reason ("link
	// deleted", "link down", "address removed", …). Event.Err is
	// RemovePath's error, if any (session.ErrNoSuchPath: the session had
	// dropped the path already).
	Removed
	// Kept: the endpoint of Event.Path went away and came back within the
	// debounce, so the path was kept.
	Kept
)

// String names the kind.
func (k EventKind) String() string {
	switch k {
	case Joined:
		return "joined"
	case JoinFailed:
		return "join-failed"
	case Removed:
		return "removed"
	case Kept:
		return "kept"
	}
	return fmt.Sprintf("EventKind(%d)", uint8(k))
}

// Event is one thing the manager did to the paths.
type Event struct {
	Time     time.Time // when it happened
	Kind     EventKind
	Endpoint Endpoint
	Path     sched.PathID // Joined, Removed, Kept
	Backup   bool         // the path is a backup (Policy.Backup)
	Reason   string       // Removed: why; Joined: "first path" for Attach's; Kept: what had gone
	Err      error        // JoinFailed: why; Removed: RemovePath's error
}

// String is the event as one log line, e.g. "removed path 1 on c2
// 10.10.2.2: link deleted".
func (e Event) String() string {
	var s string
	switch e.Kind {
	case Joined:
		s = fmt.Sprintf("joined path %d on %v", e.Path, e.Endpoint)
	case JoinFailed:
		s = fmt.Sprintf("join on %v failed", e.Endpoint)
	case Removed:
		s = fmt.Sprintf("removed path %d on %v", e.Path, e.Endpoint)
	case Kept:
		s = fmt.Sprintf("kept path %d on %v", e.Path, e.Endpoint)
	default:
		s = fmt.Sprintf("%v on %v", e.Kind, e.Endpoint)
	}
	if e.Backup {
		s += " (backup)"
	}
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	if e.Err != nil {
		s += fmt.Sprintf(" (%v)", e.Err)
	}
	return s
}
