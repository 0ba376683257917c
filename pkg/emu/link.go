package emu

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// Overhead is the per-packet header size, bytes (IPv4 20 + UDP 8), added to
// the payload when computing serialization time and queue occupancy.
const Overhead = 28

// MinDefaultQueue is the smallest default queue capacity, bytes.
const MinDefaultQueue = 64 << 10

// LinkConfig describes one direction of an emulated link. The zero value is
// an ideal link: unlimited rate, no delay, no loss.
//
// A packet offered to the link is dropped if the link is down or inside an
// outage window; otherwise it joins a drop-tail queue (dropped if the queued
// bytes would exceed the capacity), leaves the bottleneck after its
// serialization time, (len+Overhead)*8/RateBps, or at the next Trace
// opportunity, is lost with the configured probability, and arrives Delay
// (plus jitter) later. A packet whose flight overlaps an outage is dropped.
type LinkConfig struct {
	RateBps    float64         // bottleneck rate, bits/s; 0 = unlimited
	Delay      time.Duration   // one-way propagation delay
	Jitter     time.Duration   // max extra delay per packet, drawn uniform in [0, Jitter], then raised if needed so packets never reorder
	QueueBytes int             // drop-tail queue capacity, bytes; 0 = max(MinDefaultQueue, 1.5 × RateBps × 2·Delay / 8)
	Loss       float64         // Bernoulli loss probability per packet, in [0, 1]
	GE         *GilbertElliott // optional bursty loss model; replaces Loss (setting both is an error)
	Outages    []Window        // sorted, disjoint windows, relative to Network start, when everything is dropped
	Schedule   []Step          // sorted piecewise changes of rate, delay, loss or queue
	Trace      *Trace          // optional Mahimahi delivery trace replacing RateBps (aligned with Network start)
}

// Window is a time interval [Start, End) relative to the Network start.
type Window struct{ Start, End time.Duration }

// Validate reports the first invalid field of c, naming it.
func (c LinkConfig) Validate() error {
	bad := func(field string, v any, why string) error {
		return fmt.Errorf("emu: LinkConfig.%s = %v: %s", field, v, why)
	}
	switch {
	case !(c.RateBps >= 0 && c.RateBps < 1e15):
		return bad("RateBps", c.RateBps, "must be >= 0 and finite")
	case c.Delay < 0:
		return bad("Delay", c.Delay, "must be >= 0")
	case c.Jitter < 0:
		return bad("Jitter", c.Jitter, "must be >= 0")
	case c.QueueBytes < 0:
		return bad("QueueBytes", c.QueueBytes, "must be >= 0 (0 = default)")
	case !(c.Loss >= 0 && c.Loss <= 1):
		return bad("Loss", c.Loss, "must be in [0,1]")
	case c.GE != nil && c.Loss != 0:
		return bad("Loss", c.Loss, "must be 0 when GE is set (GE replaces Loss)")
	}
	if c.GE != nil {
		if err := c.GE.validate(); err != nil {
			return fmt.Errorf("emu: LinkConfig.%w", err)
		}
	}
	for i, w := range c.Outages {
		switch {
		case w.Start < 0:
			return bad(fmt.Sprintf("Outages[%d].Start", i), w.Start, "must be >= 0")
		case w.End <= w.Start:
			return bad(fmt.Sprintf("Outages[%d].End", i), w.End, fmt.Sprintf("must be after Start (%v)", w.Start))
		case i > 0 && w.Start < c.Outages[i-1].End:
			return bad(fmt.Sprintf("Outages[%d].Start", i), w.Start,
				fmt.Sprintf("overlaps or precedes Outages[%d] (ends %v); windows must be sorted and disjoint", i-1, c.Outages[i-1].End))
		}
	}
	for i, s := range c.Schedule {
		if err := s.validate(i, c.Trace != nil); err != nil {
			return fmt.Errorf("emu: LinkConfig.%w", err)
		}
		if i > 0 && s.At < c.Schedule[i-1].At {
			return bad(fmt.Sprintf("Schedule[%d].At", i), s.At,
				fmt.Sprintf("before Schedule[%d].At (%v); steps must be sorted", i-1, c.Schedule[i-1].At))
		}
	}
	if c.Trace != nil && (len(c.Trace.ms) == 0 || c.Trace.period <= 0) {
		return bad("Trace", "empty", "has no delivery opportunities or a zero period")
	}
	return nil
}

// queueCap returns the configured or default queue capacity, bytes.
func (c LinkConfig) queueCap() int {
	if c.QueueBytes > 0 {
		return c.QueueBytes
	}
	rate := c.RateBps
	if c.Trace != nil {
		rate = c.Trace.MeanRateBps()
	}
	bdp := rate / 8 * (2 * c.Delay).Seconds()
	return max(MinDefaultQueue, int(1.5*bdp))
}

// LinkStats counts what happened to the packets offered to one direction.
// Bytes are UDP payload bytes. Offered = Delivered + all drops + in flight.
type LinkStats struct {
	OfferedPkts    uint64 // packets written towards the link
	OfferedBytes   uint64 // payload bytes written towards the link
	DeliveredPkts  uint64 // packets handed to the receiving Conn, or to the next link of their route
	DeliveredBytes uint64 // payload bytes handed to the receiving Conn, or to the next link of their route
	DroppedQueue   uint64 // packets dropped because the queue was full
	DroppedLoss    uint64 // packets lost by the Loss or GE model
	DroppedOutage  uint64 // packets dropped by an outage window or a link set down
	DroppedRecv    uint64 // packets dropped at the receiver (last link of a route only): no Conn at the address, or its receive queue full
}

// Link is a bidirectional emulated link between two addresses.
type Link struct {
	ab, ba *dir
}

// SetDown cuts (down = true) or restores both directions at once, as an
// interface disappearing and coming back. Packets queued or in flight when the
// link goes down are dropped (counted as DroppedOutage).
func (l *Link) SetDown(down bool) {
	l.ab.setDown(down)
	l.ba.setDown(down)
}

// Update replaces both directions' configurations. Outage and Schedule times
// stay relative to the Network start; steps already due are applied at once.
// Packets already queued keep their computed delivery times.
func (l *Link) Update(ab, ba LinkConfig) error {
	if err := ab.Validate(); err != nil {
		return fmt.Errorf("a→b: %w", err)
	}
	if err := ba.Validate(); err != nil {
		return fmt.Errorf("b→a: %w", err)
	}
	l.ab.configure(ab)
	l.ba.configure(ba)
	return nil
}

// Stats returns snapshots of the counters of the a→b and b→a directions.
func (l *Link) Stats() (ab, ba LinkStats) {
	return l.ab.snapshot(), l.ba.snapshot()
}

// entry is one packet between the queue and the receiver (or the next link
// of its route). All times are offsets from the Network start.
type entry struct {
	departEnd time.Duration // when its last bit leaves the bottleneck
	deliverAt time.Duration // when it reaches the receiver or the next link
	buf       *[]byte       // payload copy; nil if the packet is dropped on the way
	rt        *hopRoute     // the packet's route; nil once dropped
	hop       int32         // index of this dir in rt.hops
	n         int32         // payload length, bytes
	wire      int32         // bytes held in the queue: n + Overhead
}

// dir is one direction of a Link. An eager dir has a goroutine that
// delivers packets when its timer fires; a lazy one (inbox.go) leaves that to
// the receiver's inbox. Everything else runs on the sender's goroutine (or,
// for a packet forwarded from the previous link of its route, on that link's
// goroutine). Packets of every route through the dir share its queue.
type dir struct {
	net   *Network
	id    uint64      // creation order in the Network
	timer *time.Timer // fires at the head packet's delivery time (eager dirs)
	fwd   []entry     // scratch for packets leaving towards their next link; used by run only

	// Guarded by Network.mu (set by Route):
	forwards bool   // some route goes on to a further link after this one
	multi    bool   // routes through it end at more than one address
	ends     *inbox // the inbox of the address its routes end at, if any

	mu        sync.Mutex
	eager     bool // has a goroutine and a timer (set once, by Route)
	cfg       LinkConfig
	queueCap  float64 // default queue capacity for this cfg, bytes
	sched     schedule
	loss      lossModel
	jitter    *rand.Rand    // seeded stream used only for jitter draws
	down      bool          // administratively down
	outage    int           // first window of cfg.Outages that ends after the last send
	busyUntil time.Duration // when the bottleneck finishes the last queued packet
	lastDeliv time.Duration // latest delivery time handed out (keeps jitter monotonic)
	nextOpp   int64         // next unused Trace opportunity
	ring      []entry       // FIFO of packets not yet delivered, in delivery order
	head, n   int           // ring start and length
	departed  int           // leading ring entries that have left the queue
	queued    int           // bytes in the queue (entries not yet departed)
	stats     LinkStats
}

func newDir(n *Network, cfg LinkConfig, seed, stream uint64) *dir {
	d := &dir{
		net:   n,
		id:    stream,
		timer: time.NewTimer(time.Hour),
		ring:  make([]entry, 64),
	}
	d.timer.Stop()
	d.loss.rng = rand.New(rand.NewPCG(seed, stream))
	d.jitter = rand.New(rand.NewPCG(seed^0x9e3779b97f4a7c15, stream))
	d.configure(cfg)
	return d
}

func (d *dir) configure(cfg LinkConfig) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if cfg.Trace != d.cfg.Trace {
		d.nextOpp = 0
	}
	d.cfg = cfg
	d.queueCap = float64(cfg.queueCap())
	if cfg.GE != d.loss.ge {
		d.loss.ge, d.loss.bad = cfg.GE, false
	}
	d.outage = 0
	d.sched.reset(cfg.Schedule, [numFields]float64{cfg.RateBps, float64(cfg.Delay), cfg.Loss, d.queueCap})
}

func (d *dir) setDown(down bool) {
	d.settleLazy()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.down = down
	if !down {
		return
	}
	now := d.net.now()
	for d.n > 0 {
		e := d.pop()
		if e.buf != nil {
			d.stats.DroppedOutage++
			putBuf(e.buf)
		}
	}
	d.departed, d.queued = 0, 0
	d.busyUntil, d.lastDeliv = now, now
}

func (d *dir) snapshot() LinkStats {
	d.settleLazy()
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.stats
}

// settleLazy hands the packets due by now to the receiver, if d is lazy.
func (d *dir) settleLazy() {
	d.net.mu.RLock()
	s := d.ends
	d.net.mu.RUnlock()
	if s != nil {
		s.settle(d.net, d.net.now(), nil)
	}
}

// inOutage reports whether [from, to] overlaps an outage window; from must
// not decrease between calls.
func (d *dir) inOutage(from, to time.Duration) bool {
	w := d.cfg.Outages
	for d.outage < len(w) && w[d.outage].End <= from {
		d.outage++
	}
	return d.outage < len(w) && w[d.outage].Start <= to
}

// advance releases the queue bytes of packets that have left the bottleneck.
func (d *dir) advance(now time.Duration) {
	for d.departed < d.n {
		e := &d.ring[(d.head+d.departed)%len(d.ring)]
		if e.departEnd > now {
			return
		}
		d.queued -= int(e.wire)
		d.departed++
	}
}

// send offers payload p, travelling on route rt whose hop-th link this is,
// to the link at the current time. owned, if not nil, is a pooled buffer
// holding p that the link takes over (a packet forwarded from the previous
// link); otherwise p is copied if the packet is accepted.
func (d *dir) send(rt *hopRoute, hop int, p []byte, owned *[]byte) {
	d.mu.Lock()
	now, head := d.enter(rt, hop, p, owned)
	eager, backlog := d.eager, d.n > lazyBacklog
	d.mu.Unlock()
	if eager {
		return
	}
	// Lazy: the receiver's reader may be asleep until a later packet.
	if c := rt.inbox.conn.Load(); c != nil && head != never {
		c.poke(head, now)
	}
	if backlog {
		rt.inbox.settle(d.net, now, nil)
	}
}

// enter queues the packet (or counts its drop) at the current time, which it
// returns, with the delivery time of the new head of the ring if the ring was
// empty (else never); d.mu must be held.
func (d *dir) enter(rt *hopRoute, hop int, p []byte, owned *[]byte) (time.Duration, time.Duration) {
	drop := func() {
		if owned != nil {
			putBuf(owned)
		}
	}
	now := d.net.now()
	d.stats.OfferedPkts++
	d.stats.OfferedBytes += uint64(len(p))
	v := d.sched.values(now)
	if d.down || d.inOutage(now, now) {
		d.stats.DroppedOutage++
		drop()
		return now, never
	}
	d.advance(now)
	wire := len(p) + Overhead
	if float64(d.queued+wire) > v[iQueue] {
		d.stats.DroppedQueue++
		drop()
		return now, never
	}
	var departEnd time.Duration
	switch {
	case d.cfg.Trace != nil:
		// The first unused opportunity at or after both the arrival and
		// the previous departure (which may come from an earlier config).
		tr, k, ready := d.cfg.Trace, d.nextOpp, max(now, d.busyUntil)
		if tr.oppTime(k) < ready {
			k = max(k, tr.firstAtOrAfter(ready))
		}
		departEnd = tr.oppTime(k)
		d.nextOpp = k + 1
	case v[iRate] > 0:
		departEnd = max(now, d.busyUntil) + time.Duration(float64(wire*8)/v[iRate]*1e9)
	default:
		departEnd = max(now, d.busyUntil)
	}
	d.busyUntil = departEnd
	deliverAt := departEnd + time.Duration(v[iDelay])
	if j := d.cfg.Jitter; j > 0 {
		deliverAt += time.Duration(d.jitter.Int64N(int64(j) + 1))
	}
	deliverAt = max(deliverAt, d.lastDeliv)

	// A dropped packet stays in the ring until it leaves the queue, but it
	// must not hold back later packets: it neither keeps its propagation
	// delay nor sets lastDeliv. Delivery times in the ring stay sorted.
	e := entry{departEnd: departEnd, deliverAt: max(departEnd, d.lastDeliv), n: int32(len(p)), wire: int32(wire)}
	switch {
	case d.loss.lost(v[iLoss]):
		d.stats.DroppedLoss++
		drop()
	case d.inOutage(now, deliverAt):
		d.stats.DroppedOutage++
		drop()
	default:
		if e.buf = owned; e.buf == nil {
			e.buf = getBuf(len(p))
			copy(*e.buf, p)
		}
		e.rt, e.hop = rt, int32(hop)
		e.deliverAt, d.lastDeliv = deliverAt, deliverAt
	}
	d.queued += wire
	d.push(e)
	if d.n > 1 {
		return now, never
	}
	if d.eager {
		d.timer.Reset(e.deliverAt - now)
	}
	return now, e.deliverAt
}

func (d *dir) push(e entry) {
	if d.n == len(d.ring) {
		r := make([]entry, 2*len(d.ring))
		for i := range d.n {
			r[i] = d.ring[(d.head+i)%len(d.ring)]
		}
		d.ring, d.head = r, 0
	}
	d.ring[(d.head+d.n)%len(d.ring)] = e
	d.n++
}

func (d *dir) pop() entry {
	e := d.ring[d.head]
	d.ring[d.head] = entry{}
	d.head = (d.head + 1) % len(d.ring)
	d.n--
	return e
}

// run delivers packets as the timer fires, until the Network closes.
func (d *dir) run() {
	defer d.net.wg.Done()
	for {
		select {
		case <-d.timer.C:
		case <-d.net.done:
			d.timer.Stop()
			return
		}
		d.deliver()
	}
}

// deliver hands every packet due by now to the receiving Conn, or to the
// next link of its route. Packets are forwarded after d.mu is released, so
// that no two links' locks are ever held together.
func (d *dir) deliver() {
	d.mu.Lock()
	now := d.net.now()
	d.advance(now)
	for d.n > 0 && d.ring[d.head].deliverAt <= now {
		e := d.pop()
		d.departed-- // deliverAt >= departEnd, so advance counted it
		if e.buf == nil {
			continue
		}
		if int(e.hop)+1 < len(e.rt.hops) {
			d.stats.DeliveredPkts++
			d.stats.DeliveredBytes += uint64(e.n)
			d.fwd = append(d.fwd, e)
			continue
		}
		d.land(e, e.rt.inbox.conn.Load(), true)
	}
	if d.n > 0 {
		d.timer.Reset(d.ring[d.head].deliverAt - now)
	}
	d.mu.Unlock()
	for i, e := range d.fwd {
		next := int(e.hop) + 1
		e.rt.hops[next].send(e.rt, next, (*e.buf)[:e.n], e.buf)
		d.fwd[i] = entry{}
	}
	d.fwd = d.fwd[:0]
}

// bufPool holds payload buffers of bufSize bytes.
var bufPool = sync.Pool{New: func() any { b := make([]byte, bufSize); return &b }}

const bufSize = 2048 // pooled buffer size, bytes; larger payloads are allocated

func getBuf(n int) *[]byte {
	if n > bufSize {
		b := make([]byte, n)
		return &b
	}
	b := bufPool.Get().(*[]byte)
	*b = (*b)[:n]
	return b
}

func putBuf(b *[]byte) {
	if cap(*b) == bufSize {
		bufPool.Put(b)
	}
}
