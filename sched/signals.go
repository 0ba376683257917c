package sched

// Where a transport's signals come from, and the schedulers that need the
// costly ones.
//
// A transport over an unmodified QUIC stack can read some of PathInfo
// cheaply from the stack's counters (quic-go's ConnectionStats: the RTTs,
// CongestionWindow, PacketsSent, PacketsLost) and keep others itself
// (BytesQueued, BytesSent, BytesAcked, DeliveryRate, SegmentsInFlight: its
// own accounting of what it handed each path and what the peer
// acknowledged). Three fields need a per-ACK event feed from the stack (in
// quic-go, a qlog tracer, which makes the stack build an event for every
// packet it sends and receives: about a quarter more CPU per packet):
//
//   - PTOCount: the stack's consecutive probe timeouts. Without the feed
//     it is 0.
//   - LossRate over the recent packets, updated at every loss. Without the
//     feed the transport derives it from PacketsSent and PacketsLost at each
//     decision (the same moving average, advanced in steps).
//   - BytesInFlight as the stack's loss recovery counts it. Without the feed
//     the transport estimates it from the bytes the stack took (packetized)
//     within the latest round trip; pkg/session's TestInflightEstimateAgainstQlog
//     bounds the estimate's error against the stack's count.
//
// A scheduler that reads PTOCount, or needs LossRate and BytesInFlight as
// the stack sees them after every acknowledgement, says so by implementing
// PerAckSignals; the transport then keeps the event feed on for its
// connections. Every other scheduler gets the cheap signals, and its Decide
// is called when a path has room for more data (the stack asks for it) or
// an acknowledgement, new data or a path change arrives.

// PerAckSignals is implemented by a scheduler that needs signals only a
// per-ACK event feed from the QUIC stack gives (see above): PTOCount, and
// LossRate and BytesInFlight as the stack's loss recovery has them after
// every acknowledgement. The transport asks once, before it opens its first
// connection, and keeps the feed on for the scheduler's connections when
// NeedsPerAckSignals returns true. NeedsPerAckSignals must be safe to call
// on a scheduler that has not decided anything yet and must not depend on
// the connection.
type PerAckSignals interface {
	NeedsPerAckSignals() bool
}

// NeedsPerAckSignals reports whether s implements PerAckSignals and asks for
// the per-ACK signals.
func NeedsPerAckSignals(s Scheduler) bool {
	p, ok := s.(PerAckSignals)
	return ok && p.NeedsPerAckSignals()
}
