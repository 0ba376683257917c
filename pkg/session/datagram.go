package session

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/mpqsched/mpqsched/pkg/wire"
	"github.com/mpqsched/mpqsched/sched"
)

// Application datagrams, with the semantics of RFC 9221 and the shape of
// quic-go's Conn.SendDatagram and Conn.ReceiveDatagram: unreliable,
// unordered, never retransmitted. Each one travels in one QUIC datagram
// (wire.TypeAppDatagram) on the path or paths the scheduler chooses
// (sched.DecideDatagram); copies share a sequence number and the receiver
// delivers the first (DatagramWindow).

// DatagramQueueLen is how many received datagrams wait for ReceiveDatagram
// at most, as quic-go's receive queue; more are dropped
// (Stats.Datagrams.Dropped). With quic-go's largest packets (1452 bytes)
// the queue holds less than 190 KB.
const DatagramQueueLen = 128

// datagrams is a session's application-datagram state.
type datagrams struct {
	// Sender, guarded by Session.mu; ci, snap and slots also by
	// sender.schedMu, under which DecideDatagram reads them.
	nextSeq uint64           // sequence number of the next datagram
	ci      sched.ConnInfo   // the scheduler's view for the current decision (kept here: a local would escape)
	snap    []sched.PathInfo // the paths' snapshots for the current decision
	slots   []int            // slot of each snap entry

	// Receiver, guarded by mu (never held with Session.mu taken after it).
	mu     sync.Mutex
	win    dgramWindow
	queue  chan []byte // made on first use; DatagramQueueLen
	active time.Time   // when the last received datagram counted as activity (IdleTimeout)

	sent, copies, unsent, received, dups, late, dropped atomic.Uint64
}

// DatagramStats counts a session's application datagrams.
type DatagramStats struct {
	Sent       uint64 // datagrams SendDatagram handed to at least one path
	Copies     uint64 // further copies of those on other paths (a scheduler that marks several paths)
	Unsent     uint64 // datagrams SendDatagram accepted but no path took (the scheduler marked none, or every path refused)
	Received   uint64 // datagrams queued for ReceiveDatagram
	Duplicates uint64 // copies discarded: one with the same sequence number was delivered
	Late       uint64 // discarded: older than DatagramWindow behind the newest delivered
	Dropped    uint64 // discarded: DatagramQueueLen datagrams were waiting for ReceiveDatagram
}

func (d *datagrams) stats() DatagramStats {
	return DatagramStats{
		Sent: d.sent.Load(), Copies: d.copies.Load(), Unsent: d.unsent.Load(),
		Received: d.received.Load(), Duplicates: d.dups.Load(), Late: d.late.Load(), Dropped: d.dropped.Load(),
	}
}

// recvQueue returns the receive queue, making it on first use.
func (d *datagrams) recvQueue() chan []byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.queue == nil {
		d.queue = make(chan []byte, DatagramQueueLen)
	}
	return d.queue
}

// oversized is longer than any UDP payload, so every quic-go connection
// refuses it with a DatagramTooLargeError that states its current limit
// (Conn.SendDatagram checks the size before it queues anything).
var oversized [1 << 16]byte

// quicDatagramLimit is the largest QUIC datagram payload c accepts now,
// bytes (0 if it takes none). It never blocks.
func quicDatagramLimit(c *quic.Conn) int {
	var e *quic.DatagramTooLargeError
	if err := c.SendDatagram(oversized[:]); errors.As(err, &e) {
		return int(max(e.MaxDatagramPayloadSize, 0))
	}
	return 0
}

// MaxDatagramSize is the largest payload SendDatagram accepts now, bytes:
// the smallest QUIC datagram payload quic-go accepts over the session's
// current paths, less wire.MaxAppDatagramHeaderLen (9 bytes). It is 0 when
// the session has no path. It grows when quic-go's path MTU discovery
// raises a path's packet size and may shrink when a path joins; with
// quic-go's initial 1280-byte packets it is 1234 bytes (quic-go's limit,
// 1243, less the header). Safe for concurrent use.
func (s *Session) MaxDatagramSize() int {
	s.mu.Lock()
	var conns [sched.MaxPaths]*quic.Conn
	n := 0
	for _, p := range s.slots {
		if p != nil && p.conn != nil {
			conns[n] = p.conn
			n++
		}
	}
	s.mu.Unlock()
	if n == 0 {
		return 0
	}
	least := int(^uint(0) >> 1)
	for _, c := range conns[:n] {
		least = min(least, quicDatagramLimit(c))
	}
	return max(least-wire.MaxAppDatagramHeaderLen, 0)
}

// SendDatagram sends b as one application datagram on the path or paths
// the scheduler chooses (sched.DecideDatagram: the scheduler's
// DecideDatagram, or the live path with the lowest smoothed RTT). The
// datagram is unreliable: it may be lost, arrive out of order with other
// datagrams and stream data, and is never retransmitted; the peer receives
// it at most once, even if the scheduler sent copies.
//
// A payload larger than MaxDatagramSize is refused with a
// *quic.DatagramTooLargeError that states the limit, as quic-go's
// Conn.SendDatagram does. After the session ends it returns the session's
// error (ErrClosed after a clean close).
//
// SendDatagram copies b. Like quic-go's, it blocks while a chosen path's
// quic-go datagram queue is full (32 datagrams): the caller's goroutine
// waits, never one of the session's, and no session lock is held. Safe for
// concurrent use.
func (s *Session) SendDatagram(b []byte) error {
	if limit := s.MaxDatagramSize(); len(b) > limit {
		if s.isClosed() {
			return s.closedErr()
		}
		return &quic.DatagramTooLargeError{MaxDatagramPayloadSize: int64(limit)}
	}
	d := &s.dgram
	now := s.now()
	// The scheduler decides under schedMu, without s.mu (obsqueue.go).
	s.snd.schedMu.Lock()
	s.mu.Lock()
	if s.closed {
		err := s.closedErrLocked()
		s.mu.Unlock()
		s.snd.schedMu.Unlock()
		return err
	}
	var paths [sched.MaxPaths]*path // of each snap entry
	d.snap, d.slots = d.snap[:0], d.slots[:0]
	rules := s.snapRulesLocked()
	for i, p := range s.slots {
		if p != nil {
			paths[len(d.snap)] = p
			d.snap = append(d.snap, p.info(s.snd.segSize, now, rules))
			d.slots = append(d.slots, i)
		}
	}
	d.ci = s.connInfoLocked(now)
	seq := d.nextSeq
	d.nextSeq++
	if now.After(s.lastActive) {
		s.lastActive = now
	}
	observed := s.snd.obsq.takeLocked()
	s.mu.Unlock()
	if observed {
		s.obsDeliver()
	}
	set := sched.DecideDatagram(s.sch, &d.ci, d.snap, len(b))
	var to [sched.MaxPaths]*path // a path removed meanwhile refuses the datagram: lost, as on a path going away
	n := 0
	for i := range d.snap {
		if set.Has(i) {
			to[n] = paths[i]
			n++
		}
	}
	s.snd.schedMu.Unlock()

	msg := wire.AppendAppDatagram(make([]byte, 0, wire.AppDatagramHeaderLen(seq)+len(b)), seq, b)
	sent := 0
	var tooLarge *quic.DatagramTooLargeError
	for _, p := range to[:n] {
		err := p.sendDatagram(msg)
		if err == nil {
			sent++
			continue
		}
		// A path that joined after MaxDatagramSize looked may take less;
		// any other error is a path going away, and a lost datagram.
		var e *quic.DatagramTooLargeError
		if errors.As(err, &e) && (tooLarge == nil || e.MaxDatagramPayloadSize < tooLarge.MaxDatagramPayloadSize) {
			tooLarge = e
		}
	}
	switch {
	case sent > 0:
		d.sent.Add(1)
		d.copies.Add(uint64(sent - 1))
	case tooLarge != nil:
		return &quic.DatagramTooLargeError{MaxDatagramPayloadSize: max(tooLarge.MaxDatagramPayloadSize-wire.MaxAppDatagramHeaderLen, 0)}
	default:
		d.unsent.Add(1)
	}
	return nil
}

// ReceiveDatagram returns the next application datagram from the peer,
// waiting until one arrives, ctx is done (the error is context.Cause(ctx))
// or the session ends (its error, ErrClosed after a clean close; datagrams
// already queued are returned first). Datagrams come in arrival order,
// which may differ from the order they were sent in. The caller owns the
// returned slice. Safe for concurrent use; each datagram goes to one
// caller.
func (s *Session) ReceiveDatagram(ctx context.Context) ([]byte, error) {
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	q := s.dgram.recvQueue()
	select {
	case b := <-q:
		return b, nil
	default:
	}
	select {
	case b := <-q:
		return b, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	case <-s.done:
		select {
		case b := <-q:
			return b, nil
		default:
		}
		return nil, s.closedErr()
	}
}

// appDatagramReceived queues the payload of application datagram b (which
// the session may keep: quic-go hands each received datagram over in its
// own slice) unless it is a copy of one delivered, older than the window,
// or the queue is full. A malformed datagram is a connection error.
func (s *Session) appDatagramReceived(b []byte) error {
	seq, payload, err := wire.ParseAppDatagram(b)
	if err != nil {
		return protocolErr(err)
	}
	now := s.now()
	d := &s.dgram
	d.mu.Lock()
	if d.queue == nil {
		d.queue = make(chan []byte, DatagramQueueLen)
	}
	switch d.win.check(seq) {
	case dgramDup:
		d.mu.Unlock()
		d.dups.Add(1)
		return nil
	case dgramLate:
		d.mu.Unlock()
		d.late.Add(1)
		return nil
	}
	select {
	case d.queue <- payload:
		d.win.mark(seq) // only once queued: a copy on another path may still fit
		d.received.Add(1)
	default:
		d.dropped.Add(1)
	}
	// Received datagrams keep the session from idling out, as sent ones
	// do; Session.mu is taken for it at most once a second.
	active := now.Sub(d.active) >= time.Second
	if active {
		d.active = now
	}
	d.mu.Unlock()
	if active {
		s.mu.Lock()
		if now.After(s.lastActive) {
			s.lastActive = now
		}
		s.mu.Unlock()
	}
	return nil
}

// closedErr is the error calls return once the session has ended.
func (s *Session) closedErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closedErrLocked()
}
