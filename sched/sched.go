// Package sched defines the multipath packet-scheduler interface of mpqsched.
//
// The package is transport-agnostic: it imports nothing from quic-go or from
// the session. A transport hands a Scheduler read-only snapshots of every path
// (PathInfo) and of the connection (ConnInfo); the scheduler answers with a
// Decision. As in the Linux MPTCP schedulers, a decision marks the paths it
// chose (a PathSet) instead of returning one path, so "redundant" is simply
// "mark every path that has room".
//
// Units: durations are time.Duration, sizes are bytes, rates are bytes per
// second, fractions are in [0, 1].
//
// The shape is close to the SelectPath plug-in of the multipath forks of
// quic-go (SelectPath(paths, hasRetransmission) *PathInfo): an adapter calls
// Decide and returns the lowest marked path of a SendNext decision.
package sched

import (
	"math/bits"
	"time"
)

// PathID identifies a path within one connection. IDs are assigned by the
// transport and never reused within a connection.
type PathID uint32

// PathInfo is a read-only snapshot of one path, taken just before a decision.
type PathInfo struct {
	ID PathID // transport-assigned path identifier

	SmoothedRTT time.Duration // smoothed RTT (RFC 9002 smoothed_rtt); 0 before the first sample
	MinRTT      time.Duration // minimum RTT seen on the path; 0 before the first sample
	LatestRTT   time.Duration // most recent RTT sample; 0 before the first sample
	RTTVar      time.Duration // RTT variation (RFC 9002 rttvar, a mean deviation)

	CongestionWindow uint64 // congestion window, bytes
	BytesInFlight    uint64 // bytes sent on the path and not yet acknowledged or declared lost (transport level)
	BytesQueued      uint64 // bytes handed to the path by the scheduler but not yet sent on the wire
	MSS              uint64 // largest segment payload the path takes in one decision, bytes

	PacketsSent          uint64 // packets sent on the path since it opened
	PacketsLost          uint64 // packets declared lost on the path since it opened
	PacketsRetransmitted uint64 // packets the path retransmitted (lost data re-sent on this path)
	BytesSent            uint64 // connection-level segment bytes sent on this path (payload)
	BytesAcked           uint64 // connection-level segment bytes sent on this path and acknowledged by the peer

	DeliveryRate float64 // recent acknowledged-bytes rate, bytes/s; 0 if unknown
	LossRate     float64 // PacketsLost/PacketsSent over a recent window, fraction in [0,1]
	PTOCount     uint32  // consecutive probe timeouts without an acknowledgement

	SegmentsInFlight uint64 // connection-level segments sent on this path and not yet acknowledged

	Backup            bool // path is a backup: carry data only when no regular path is live (OnlyBackups; a regular path whose window is full still counts)
	PotentiallyFailed bool // path made no progress for several RTOs (the transport is reinjecting its data), or is being replaced by a fresh connection after an outage
}

// Space is the congestion-window room of the path in bytes:
// cwnd − (bytes in flight + bytes queued), floored at 0.
func (p *PathInfo) Space() uint64 {
	used := p.BytesInFlight + p.BytesQueued
	if used >= p.CongestionWindow {
		return 0
	}
	return p.CongestionWindow - used
}

// SendingAllowed reports whether the path can take one more segment now: it
// is not potentially failed and has at least one MSS of window room.
func (p *PathInfo) SendingAllowed() bool {
	return !p.PotentiallyFailed && p.Space() >= p.MSS
}

// CongestionLimited reports whether the path is blocked by its congestion
// window (the opposite of SendingAllowed for a live path).
func (p *PathInfo) CongestionLimited() bool { return p.Space() < p.MSS }

// ConnInfo is a read-only snapshot of the connection, taken with the PathInfo
// snapshots.
type ConnInfo struct {
	Now time.Time // the time of the decision; schedulers never read the clock themselves

	SendBufferBytes  uint64 // application bytes waiting at connection level, not yet sent on any path
	PeerWindow       uint64 // bytes of new data the peer's receive window still admits
	InFlightBytes    uint64 // connection-level bytes sent and not yet acknowledged by the peer
	UnackedSegments  uint64 // connection-level segments sent and not yet acknowledged
	RetransmitQueued uint64 // segments waiting to be re-sent (lost or reinjected); SendNext takes these first
	NextSeq          uint64 // sequence number of the next new segment SendNext sends: the lowest one not yet sent (a segment a SendSeq skipped is already cut, and is still the next)
	SegmentSize      uint64 // payload of a full segment, bytes

	// The data's stream: the stream of the first record that begins in the
	// next new segment (NextSeq), or, if no record begins in it, of the
	// record it continues. A segment may carry records of several streams;
	// only this one is described. The fields describe new data: a SendNext
	// with RetransmitQueued > 0 re-sends an older segment first. HasStream is
	// false when the segment carries only control records or no stream is
	// known; the other fields are then zero.
	HasStream   bool
	StreamID    uint64    // the stream's ID (RFC 9000 §2.1)
	Urgency     uint8     // RFC 9218 urgency: 0 (most urgent) to 7; the session's default is 3
	Incremental bool      // RFC 9218 incremental flag: the stream shares bandwidth with others of its urgency
	Deadline    time.Time // the application's completion hint for the stream's data; zero: none. A hint: transports never drop data for it
	// StreamRemaining is the stream's data the application has written and
	// the transport has not yet put into a segment, bytes: a lower bound of
	// what of the stream is still to send (the next segment's own bytes are
	// not counted). The stream-aware scheduler's per-stream k.
	StreamRemaining uint64
	// PreferredPath is the path the application asked the stream's data to
	// use, if Preference is not NoPreference.
	PreferredPath PathID         // the path the application pinned or preferred the stream to
	Preference    PathPreference // none, prefer or pin (Stream.SetPathPreference)
}

// PathPreference is how strongly a stream's data is tied to
// ConnInfo.PreferredPath.
type PathPreference uint8

const (
	NoPreference PathPreference = iota // any path
	PreferPath                         // PreferredPath when it can send now, else any other path
	PinPath                            // only PreferredPath while it is live (present and not potentially failed): wait for its window rather than use another path
)

// PreferredIndex returns the index in paths of the path a scheduler should
// use for the data's stream under its path preference, and whether it must
// use only that one (pin). It returns -1, false when there is no
// preference, or when the preferred path is absent, potentially failed, or
// (for PreferPath) cannot send now: the scheduler then picks as usual. A
// pinned path that is live but full returns its index and true: the
// scheduler waits.
func (c *ConnInfo) PreferredIndex(paths []PathInfo) (i int, pinned bool) {
	if c.Preference == NoPreference || c.RetransmitQueued > 0 {
		return -1, false // no preference, or SendNext re-sends an older segment first
	}
	for k := range paths {
		p := &paths[k]
		if p.ID != c.PreferredPath || p.PotentiallyFailed {
			continue
		}
		switch {
		case c.Preference == PinPath:
			return k, true
		case p.SendingAllowed():
			return k, false
		}
		return -1, false
	}
	return -1, false
}

// HasRetransmission mirrors the forks' SelectPath hasRetransmission argument.
func (c *ConnInfo) HasRetransmission() bool { return c.RetransmitQueued > 0 }

// Action is what a Decision asks the transport to do.
type Action uint8

const (
	// Wait sends nothing now. The transport asks again on the next event
	// (an acknowledgement, a loss, new data, a path change) or at
	// Decision.RetryAt if that is set.
	Wait Action = iota
	// SendNext sends the next segment in the transport's order (segments
	// queued for retransmission first, then the lowest unsent sequence
	// number) on every marked path; more than one mark sends copies.
	SendNext
	// SendSeq sends the not-yet-sent segment Decision.Seq (≥ ConnInfo.NextSeq)
	// on the marked paths, leaving the segments before it for later; FPRS
	// uses this to reserve sequence ranges for a faster path.
	SendSeq
	// SendCopy sends a copy of an already-sent, unacknowledged segment on
	// each marked path. With Decision.Seq = OldestUncarried, the transport
	// picks for each marked path the oldest unacknowledged segment that path
	// has not carried yet (EdAR's redundant buffer); if there is none, the
	// path sends the next segment instead.
	SendCopy
)

// OldestUncarried is the Decision.Seq of a SendCopy that lets the transport
// pick, per path, the oldest unacknowledged segment the path has not carried.
const OldestUncarried = ^uint64(0)

// MaxPaths is the largest number of paths a PathSet can mark, and so the
// largest number of paths a connection may have.
const MaxPaths = 64

// PathSet marks paths by their index in the []PathInfo slice passed to Decide.
type PathSet uint64

// Of returns the set holding only index i.
func Of(i int) PathSet { return 1 << uint(i) }

// Add returns s with index i marked.
func (s PathSet) Add(i int) PathSet { return s | 1<<uint(i) }

// Has reports whether index i is marked.
func (s PathSet) Has(i int) bool { return s&(1<<uint(i)) != 0 }

// Len is the number of marked paths.
func (s PathSet) Len() int { return bits.OnesCount64(uint64(s)) }

// First is the lowest marked index, or -1 for the empty set.
func (s PathSet) First() int {
	if s == 0 {
		return -1
	}
	return bits.TrailingZeros64(uint64(s))
}

// Decision is a scheduler's answer.
type Decision struct {
	Action  Action    // wait, send the next segment, or send copies
	Paths   PathSet   // indexes into the []PathInfo slice; ignored for Wait
	Seq     uint64    // segment for SendSeq and SendCopy
	RetryAt time.Time // for Wait: ask again no later than this (zero: on the next event only)
}

// Scheduler decides which path carries which segment. One instance serves one
// connection and keeps that connection's state; it is called from one
// goroutine at a time. Decide is on the hot path: it must not allocate.
type Scheduler interface {
	// Name is the registry name, such as "minrtt".
	Name() string
	// Decide returns what to send next. The transport calls it while it has
	// data (or retransmissions) to send and some path may send, until the
	// answer is Wait or names no path that can send. paths is never empty.
	Decide(conn *ConnInfo, paths []PathInfo) Decision
}

// Observer is implemented by schedulers that learn from what happened to the
// segments they placed (Peekaboo, EdAR, BLEST's λ). The transport serializes
// these calls with each other and with Decide, but they may come from other
// goroutines than the one calling Decide. (The session queues what it learns
// and makes these calls from its send loop, before its next Decide, in the
// order the events happened.)
type Observer interface {
	// SegmentAcked reports that segment seq, last sent on path at sentAt,
	// was acknowledged at now; size is its payload in bytes.
	SegmentAcked(now time.Time, path PathID, seq uint64, size uint64, sentAt time.Time)
	// SegmentLost reports that the transport will re-send segment seq,
	// which was sent on path, because the path lost it or failed.
	SegmentLost(now time.Time, path PathID, seq uint64)
}

// Reinjector is implemented by schedulers that re-inject unacknowledged
// data when nothing new can be sent (XLINK). The transport calls Reinject,
// serialized with Decide, when it has no new data it may send (none left,
// or the peer's flow control holds it back) and no retransmission queued,
// while data is in flight and some path can send; conn's stream fields then
// describe the oldest unacknowledged segment. Only a SendCopy decision is
// carried out, and only with segments the marked paths have not carried;
// any other answer ends the round. Reinject must not allocate.
type Reinjector interface {
	Reinject(conn *ConnInfo, paths []PathInfo) Decision
}

// Quick is implemented by schedulers whose calls (Decide, Reinject and the
// Observer and ReceiverObserver methods) are short arithmetic on their
// arguments and their own state: they never block, wait, do I/O or call
// into the transport, and take well under a microsecond. When Quick
// returns true, a transport may make these calls while it holds its own
// locks, which saves it a release and a re-acquisition per decision; the
// calls are still serialized as described above. A scheduler that runs a
// model, or whose cost grows with its history, must return false or not
// implement Quick: the transport then calls it with its locks released and
// on a goroutine of its own (pkg/session's decider), so that a slow
// decision holds up no receiver, no Ack and no timer. A type that embeds a Quick
// scheduler and makes its calls slower must override Quick to return
// false. The transport asks once, when it creates the scheduler.
type Quick interface {
	Quick() bool
}

// QuickUntil is implemented by schedulers that are slow only at instants
// they know, and Quick otherwise: EdAR and the learned scheduler run their
// policy once per decision interval and between two of its boundaries only
// apply the mode it chose. QuickAt reports whether the scheduler's calls
// (Decide, Reinject and the Observer and ReceiverObserver methods) made at
// now, the ConnInfo.Now they will be given, are Quick in the sense above.
// A transport may then make them with its locks held, as for a Quick
// scheduler; otherwise it makes them as for one that is not. QuickAt is
// serialized with those calls, must itself be Quick, and is only asked
// of a scheduler whose Quick, if it has one, returns false.
type QuickUntil interface {
	QuickAt(now time.Time) bool
}

// ReceiverObserver is implemented by schedulers that take the receiver's
// reports (EdAR's reward features), which travel back over the session's
// control channel. ReceiverReport is serialized with Decide as Observer's
// calls are.
type ReceiverObserver interface {
	ReceiverReport(now time.Time, r ReceiverReport)
}

// ReceiverReport is what the receiving side of a connection measured over one
// reporting interval.
type ReceiverReport struct {
	Interval       time.Duration // length of the interval the report covers
	GoodputBytes   uint64        // bytes delivered in order to the application in the interval
	PathBytes      [8]uint64     // bytes received per path ID (IDs 0-7; a path's index in Decide's slice may differ) in the interval
	OutOfOrder     uint64        // segments that arrived out of order in the interval
	ReorderBytes   uint64        // bytes held in the reorder buffer at the end of the interval
	HoLBlocked     time.Duration // time in the interval during which data waited for a missing segment
	DuplicateBytes uint64        // bytes received more than once in the interval
}

// OnlyBackups reports whether backup paths may carry data now: no regular
// (non-backup) path is live. This is Linux MPTCP's rule
// (mptcp_subflow_get_send: "pick the best backup if no other subflow is
// active"): a regular path whose window is full still counts, so a backup
// waits instead of carrying the overflow, and Wi-Fi's backup LTE stays idle
// while Wi-Fi works. RFC 10069 says the same of PATH_STATUS_BACKUP: "the
// path should only be used for sending when no other path with the status
// 'available' is usable".
func OnlyBackups(paths []PathInfo) bool {
	for i := range paths {
		if !paths[i].Backup && !paths[i].PotentiallyFailed {
			return false
		}
	}
	return true
}

// AllPaths is the PathSet of every path.
const AllPaths = ^PathSet(0)

// WithRoom marks the paths of among that may send now (SendingAllowed):
// the regular ones, or, when no regular one has room, the backups. It is
// the set a scheduler copies a segment onto (EdAR's redundant action).
func WithRoom(paths []PathInfo, among PathSet) PathSet {
	var regular, backup PathSet
	for i := range paths {
		p := &paths[i]
		if !among.Has(i) || !p.SendingAllowed() {
			continue
		}
		if p.Backup {
			backup = backup.Add(i)
		} else {
			regular = regular.Add(i)
		}
	}
	if regular != 0 {
		return regular
	}
	return backup
}
