// Command mpq-delayd delays the packets of one NFQUEUE queue: it accepts each
// queued packet after a fixed delay plus optional uniform jitter. The packet
// stays in the kernel; only its id travels to user space (copy mode META).
//
// It replaces `tc qdisc netem delay` on kernels without sch_netem. Typical use
// in a router namespace:
//
//	iptables -A FORWARD -i r1c -j NFQUEUE --queue-num 1
//	mpq-delayd -queue 1 -delay 10ms -jitter 1ms
//
// While no daemon is bound to the queue the kernel drops every packet sent to
// it, so a crashed daemon fails loudly. On SIGINT or SIGTERM the daemon
// accepts every packet it still holds, unbinds the queue and exits 0.
package main

import (
	"container/heap"
	"errors"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/mpqsched/mpqsched/pkg/nfq"
)

func main() {
	queue := flag.Uint("queue", 0, "NFQUEUE queue number to bind (0-65535)")
	delay := flag.Duration("delay", 0, "delay added to every packet (e.g. 10ms)")
	jitter := flag.Duration("jitter", 0, "uniform jitter: each packet's delay is drawn from [delay-jitter, delay+jitter]; packets may be reordered")
	maxLen := flag.Uint("maxlen", 20000, "kernel queue length, packets; excess packets are dropped by the kernel")
	seed := flag.Uint64("seed", 1, "seed of the jitter generator")
	stats := flag.Duration("stats", 0, "log packet counts at this interval (0: never)")
	rtprio := flag.Int("rtprio", 50, "run every thread SCHED_FIFO at this priority (1-99) so CPU contention does not delay verdicts; 0: normal scheduling")
	flag.Parse()
	log.SetPrefix(fmt.Sprintf("mpq-delayd[q%d] ", *queue))
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	if *queue > 65535 || *jitter < 0 || *delay < 0 {
		log.Fatal("bad flags: need 0 <= queue <= 65535, delay >= 0, jitter >= 0")
	}

	c, err := nfq.Open(uint16(*queue), nfq.Options{Mode: nfq.CopyMeta, MaxLen: uint32(*maxLen)})
	if err != nil {
		log.Fatal(err)
	}
	if *rtprio > 0 {
		if err := realtime(*rtprio); err != nil {
			log.Printf("warning: SCHED_FIFO not set, delays may stretch under CPU load: %v", err)
		}
	}
	d := newDelayer(c, *delay, *jitter, *seed)
	go d.run()

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		var pkts []nfq.Packet
		buf := make([]byte, 1<<16)
		for {
			pkts, err = c.Recv(pkts[:0], buf)
			if err != nil {
				if errors.Is(err, os.ErrClosed) {
					return
				}
				// A kernel error for an earlier verdict (e.g. an unknown
				// id) does not stop the queue.
				log.Printf("recv: %v", err)
			}
			if len(pkts) > 0 {
				d.add(pkts, time.Now())
			} else if err != nil {
				time.Sleep(time.Millisecond) // do not spin on a persistent error
			}
		}
	}()
	if *stats > 0 {
		go func() {
			for range time.Tick(*stats) {
				in, out := d.counts()
				log.Printf("queued %d accepted %d holding %d", in, out, in-out)
			}
		}()
	}
	log.Printf("bound, delay %v jitter %v", *delay, *jitter)
	s := <-sig
	n := d.flush()
	_ = c.Unbind()
	_ = c.Close()
	in, out := d.counts()
	log.Printf("%v: released %d held packets; queued %d accepted %d in total", s, n, in, out)
}

// realtime puts every thread of this process under SCHED_FIFO at prio.
// Threads the Go runtime creates later inherit the policy from their
// creator.
func realtime(prio int) error {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	param := [1]int32{int32(prio)} // struct sched_param
	const schedFIFO = 1
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if _, _, e := syscall.Syscall(syscall.SYS_SCHED_SETSCHEDULER, uintptr(tid), schedFIFO, uintptr(unsafe.Pointer(&param[0]))); e != 0 {
			return e
		}
	}
	return nil
}

// item is one held packet.
type item struct {
	due time.Time // when to accept it
	seq uint64    // arrival order, breaks ties so equal-delay packets stay FIFO
	id  uint32    // kernel packet id
}

type itemHeap []item

func (h itemHeap) Len() int { return len(h) }
func (h itemHeap) Less(i, j int) bool {
	if h[i].due.Equal(h[j].due) {
		return h[i].seq < h[j].seq
	}
	return h[i].due.Before(h[j].due)
}
func (h itemHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *itemHeap) Push(x any)   { *h = append(*h, x.(item)) }
func (h *itemHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// verdictSender is the part of *nfq.Conn the delayer uses.
type verdictSender interface {
	SendVerdicts(ids []uint32, v nfq.Verdict) error
}

// delayer holds packet ids until they are due and sends their verdicts.
type delayer struct {
	c      verdictSender
	delay  time.Duration // mean one-way delay added
	jitter time.Duration // half-width of the uniform jitter
	rng    *rand.Rand

	// early is how long before its due time a packet is released: a moving
	// average of how late timer wake-ups were, so that the mean delay
	// matches the request.
	early time.Duration

	mu      sync.Mutex
	h       itemHeap
	seq     uint64 // packets queued so far
	done    uint64 // packets accepted so far
	wake    chan struct{}
	stopped bool
}

func newDelayer(c verdictSender, delay, jitter time.Duration, seed uint64) *delayer {
	return &delayer{c: c, delay: delay, jitter: jitter, rng: rand.New(rand.NewPCG(seed, 0x6d7071)), wake: make(chan struct{}, 1)}
}

// add holds pkts, received at now.
func (d *delayer) add(pkts []nfq.Packet, now time.Time) {
	d.mu.Lock()
	wasEmpty := len(d.h) == 0
	var first time.Time
	if !wasEmpty {
		first = d.h[0].due
	}
	for _, p := range pkts {
		dl := d.delay
		if d.jitter > 0 {
			dl += time.Duration(d.rng.Int64N(int64(2*d.jitter)+1)) - d.jitter
			if dl < 0 {
				dl = 0
			}
		}
		d.seq++
		heap.Push(&d.h, item{due: now.Add(dl), seq: d.seq, id: p.ID})
	}
	earlier := len(d.h) > 0 && (wasEmpty || d.h[0].due.Before(first))
	d.mu.Unlock()
	if earlier {
		select {
		case d.wake <- struct{}{}:
		default:
		}
	}
}

// run accepts packets as they fall due, batching verdicts that are due
// together into one write.
func (d *delayer) run() {
	t := time.NewTimer(time.Hour)
	var ids []uint32
	for {
		d.mu.Lock()
		if d.stopped {
			d.mu.Unlock()
			return
		}
		now := time.Now()
		ids = ids[:0]
		cut := now.Add(d.early)
		for len(d.h) > 0 && !d.h[0].due.After(cut) {
			it := heap.Pop(&d.h).(item)
			if len(ids) == 0 {
				d.learn(now.Sub(it.due) + d.early)
			}
			ids = append(ids, it.id)
		}
		wait := time.Hour
		if len(d.h) > 0 {
			wait = d.h[0].due.Sub(now) - d.early
		}
		d.done += uint64(len(ids))
		d.mu.Unlock()
		if err := d.c.SendVerdicts(ids, nfq.Accept); err != nil {
			log.Printf("verdict: %v", err)
		}
		t.Reset(wait)
		select {
		case <-t.C:
		case <-d.wake:
			if !t.Stop() {
				select {
				case <-t.C:
				default:
				}
			}
		}
	}
}

// maxEarly caps the lateness compensation.
const maxEarly = time.Millisecond

// learn folds one wake-up lateness sample (how long after the moment the
// timer was aimed at it fired) into early, with gain 1/16.
func (d *delayer) learn(late time.Duration) {
	if late < 0 || late > 2*time.Millisecond { // not a timer sample, or a stall that must not skew the mean
		return
	}
	d.early += (late - d.early) / 16
	d.early = min(d.early, maxEarly)
}

// flush stops run and accepts every held packet at once; it returns how many.
func (d *delayer) flush() int {
	d.mu.Lock()
	d.stopped = true
	ids := make([]uint32, 0, len(d.h))
	for len(d.h) > 0 {
		ids = append(ids, heap.Pop(&d.h).(item).id)
	}
	d.done += uint64(len(ids))
	d.mu.Unlock()
	select { // let run see stopped and return
	case d.wake <- struct{}{}:
	default:
	}
	if err := d.c.SendVerdicts(ids, nfq.Accept); err != nil {
		log.Printf("verdict: %v", err)
	}
	return len(ids)
}

func (d *delayer) counts() (in, out uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.seq, d.done
}
