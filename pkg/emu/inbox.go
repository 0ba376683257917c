package emu

import (
	"math"
	"net/netip"
	"slices"
	"sync/atomic"
	"time"
)

// Pull delivery. A link direction whose packets all end at one address (no
// route forwards them to a further link, and every route through it ends at
// the same endpoint) needs nobody to act when a packet becomes due: nothing
// else in the network depends on the moment it lands in the receiver's
// queue. Such a dir is lazy: it has no goroutine and no timer, and the
// endpoint's inbox moves its due packets into the receive queue whenever
// someone looks: the reader before each read (waking on its own timer at the
// earliest delivery time), Stats, SetDown, Close, and a sender that finds
// more than lazyBacklog packets waiting. Packets land in delivery-time order
// across the inbox's dirs, with the same counters and drops as if each had
// been handed over at its delivery time, so results do not change; per
// packet it saves one goroutine wake-up (in a synctest bubble, one
// scheduling round), and a busy reader wakes nobody.
//
// An inbox is lazy while every dir ending at its address is lazy; a route that
// forwards through one of them, or that ends at another address, makes the
// inbox eager for good: its dirs then get a goroutine each, as before.

// never is a wake-up time that never comes.
const never = time.Duration(math.MaxInt64)

// lazyBacklog is how many packets a lazy dir holds before its sender
// settles the inbox (bounds the ring when nobody reads the receiver).
const lazyBacklog = 4 * RecvQueueLen

// inbox is the receiving side of one address: the dirs that end there.
type inbox struct {
	conn atomic.Pointer[Conn]   // the open endpoint at the address, or nil
	lazy atomic.Pointer[[]*dir] // the dirs ending here while the inbox is lazy, by creation order; nil when eager

	// Guarded by Network.mu:
	all   []*dir // every dir that is the last hop of a route to this address
	eager bool   // some dir of all forwards or ends elsewhere too
}

// inboxLocked returns the inbox of addr, creating it; n.mu must be held.
func (n *Network) inboxLocked(addr netip.AddrPort) *inbox {
	s := n.inboxes[addr]
	if s == nil {
		s = &inbox{}
		n.inboxes[addr] = s
	}
	return s
}

// routedLocked updates the dirs and inboxes after a route was added whose
// hops are hops, ending at dst; n.mu must be held.
func (n *Network) routedLocked(hops []*dir, dst *inbox) {
	now := n.now()
	last := hops[len(hops)-1]
	for _, d := range hops[:len(hops)-1] {
		d.forwards = true
	}
	if last.ends == nil {
		last.ends = dst
	} else if last.ends != dst {
		last.multi = true
	}
	if !slices.Contains(dst.all, last) {
		dst.all = append(dst.all, last)
		slices.SortFunc(dst.all, func(a, b *dir) int { return int(a.id) - int(b.id) })
	}
	// Only the inboxes of the route's dirs can change.
	affected := []*inbox{dst}
	for _, d := range hops {
		if d.ends != nil && !slices.Contains(affected, d.ends) {
			affected = append(affected, d.ends)
		}
	}
	for _, s := range affected {
		s.update(n, now)
	}
	for _, d := range hops {
		if d.forwards || d.multi {
			d.makeEager(now)
		}
	}
}

// update makes s lazy if all its dirs may be, else eager for good; n.mu
// must be held.
func (s *inbox) update(n *Network, now time.Duration) {
	if s.eager {
		return
	}
	ok := true
	for _, d := range s.all {
		ok = ok && !d.forwards && !d.multi
	}
	if ok {
		l := slices.Clone(s.all)
		s.lazy.Store(&l)
		return
	}
	// Hand the packets due so far over in order, then let each dir's
	// goroutine deliver the rest at their times.
	s.settle(n, now, nil)
	s.eager = true
	s.lazy.Store(nil)
	for _, d := range s.all {
		d.makeEager(now)
	}
}

// settle hands every packet of the inbox's lazy dirs that is due by now to
// its receiver, in delivery-time order across the dirs (ties: the dir
// created first), and returns the delivery time of the next packet they
// hold, or never. self, if not nil, is a reader settling for itself: it is
// not signalled.
func (s *inbox) settle(n *Network, now time.Duration, self *Conn) time.Duration {
	lp := s.lazy.Load()
	if lp == nil || len(*lp) == 0 {
		return never
	}
	closed := false
	if c := n.closedAt.Load(); c >= 0 && now > time.Duration(c) {
		now, closed = time.Duration(c), true // a closed Network moves nothing
	}
	ds := *lp
	for _, d := range ds {
		d.mu.Lock()
		d.advance(now)
	}
	dst := s.conn.Load()
	next := never
	for {
		var first *dir
		next = never
		for _, d := range ds {
			if d.n > 0 && d.ring[d.head].deliverAt < next {
				first, next = d, d.ring[d.head].deliverAt
			}
		}
		if next > now {
			break
		}
		e := first.pop()
		first.departed--
		if e.buf != nil {
			first.land(e, dst, dst != self)
		}
	}
	for _, d := range ds {
		d.mu.Unlock()
	}
	if closed {
		return never
	}
	return next
}

// land hands packet e, which has reached the last link of its route, to the
// receiving Conn dst (nil if none is open), counting it; d.mu must be held.
// signal wakes dst's reader.
func (d *dir) land(e entry, dst *Conn, signal bool) {
	if dst != nil && dst.enqueue(e.buf, int(e.n), e.rt.from, signal) {
		d.stats.DeliveredPkts++
		d.stats.DeliveredBytes += uint64(e.n)
		return
	}
	d.stats.DroppedRecv++
	putBuf(e.buf)
}

// makeEager gives d its goroutine and arms its timer for the packets it
// holds; n.mu must be held and the Network open.
func (d *dir) makeEager(now time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.eager {
		return
	}
	d.eager = true
	d.net.wg.Add(1)
	go d.run()
	if d.n > 0 {
		d.timer.Reset(max(d.ring[d.head].deliverAt-now, 0))
	}
}
