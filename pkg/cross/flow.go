package cross

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/mpqsched/mpqsched/pkg/emu"
)

// Flow is a running cross-traffic source. Its methods are safe for
// concurrent use.
type Flow struct {
	spec   Spec
	net    *emu.Network
	client *emu.Conn // receives the data
	server *emu.Conn // sends the data
	rec    *recorder
	rng    *rand.Rand // on and off lengths; used by the sender goroutine only
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	closers []func() // undo what the flow opened, in reverse order
	err     error    // first unexpected error
	stopped bool
}

// Start starts the flow described by spec between client and server, two
// endpoints of n (usually from emu.Topology.AddFlow): data goes from server
// to client. seed draws the on and off lengths. The flow runs on its own
// goroutines until Stop; it waits for spec.Start first, so Start returns at
// once. It works in real time and inside a synctest bubble (start and stop
// it inside the bubble).
func Start(n *emu.Network, client, server *emu.Conn, spec Spec, seed uint64) (*Flow, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if n == nil || client == nil || server == nil {
		return nil, errors.New("cross: Start needs a Network and two endpoints")
	}
	ctx, cancel := context.WithCancel(context.Background())
	f := &Flow{
		spec:   spec,
		net:    n,
		client: client,
		server: server,
		rec:    &recorder{step: spec.step(), now: n.Elapsed},
		rng:    rand.New(rand.NewPCG(seed, 0x63726f7373)),
		cancel: cancel,
	}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		if !f.sleepUntil(ctx, spec.Start) {
			return
		}
		var err error
		if spec.Kind == OnOff && spec.CBRRateBps > 0 {
			err = f.runCBR(ctx)
		} else {
			err = f.runQUIC(ctx)
		}
		if err != nil && ctx.Err() == nil {
			f.fail(err)
		}
	}()
	return f, nil
}

// Stop stops the flow, closes what it opened (its quic-go connections end
// abruptly, without a CONNECTION_CLOSE) and waits for its goroutines. It
// returns the first unexpected error the flow met, if any. The endpoints
// stay open; closing the Network closes them.
func (f *Flow) Stop() error {
	f.mu.Lock()
	if f.stopped {
		f.mu.Unlock()
		return f.err
	}
	f.stopped = true
	f.mu.Unlock()
	f.cancel()
	// Wake a CBR receiver blocked in ReadFrom; quic-go's Transport.Close
	// does the same for its own reader.
	f.client.SetReadDeadline(time.Now())
	f.mu.Lock()
	closers := f.closers
	f.closers = nil
	f.mu.Unlock()
	for i := len(closers) - 1; i >= 0; i-- {
		closers[i]()
	}
	f.wg.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// Goodput returns the flow's delivered bytes per interval so far, from the
// Network start up to now.
func (f *Flow) Goodput() Goodput { return f.rec.goodput(f.net.Elapsed()) }

// Spec returns the flow's specification.
func (f *Flow) Spec() Spec { return f.spec }

// onClose registers fn to run at Stop; after Stop it runs fn at once.
func (f *Flow) onClose(fn func()) {
	f.mu.Lock()
	if f.stopped {
		f.mu.Unlock()
		fn()
		return
	}
	f.closers = append(f.closers, fn)
	f.mu.Unlock()
}

func (f *Flow) fail(err error) {
	f.mu.Lock()
	if f.err == nil {
		f.err = err
	}
	f.mu.Unlock()
}

// sleepUntil waits until t after the Network start; it reports false if ctx
// ended first.
func (f *Flow) sleepUntil(ctx context.Context, t time.Duration) bool {
	d := t - f.net.Elapsed()
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// periods returns the next on period's end and the following off period's
// end, both since the Network start, for a period starting at now; a bulk
// flow is on until Stop. ok is false once the flow's Stop time has come.
func (f *Flow) period(now time.Duration) (onEnd, offEnd time.Duration, ok bool) {
	stop := f.spec.Stop
	if stop > 0 && now >= stop {
		return 0, 0, false
	}
	if f.spec.Kind == Bulk {
		onEnd = time.Duration(1<<63 - 1)
		if stop > 0 {
			onEnd = stop
		}
		return onEnd, onEnd, true
	}
	on := time.Duration(f.rng.ExpFloat64() * float64(f.spec.MeanOn))
	off := time.Duration(f.rng.ExpFloat64() * float64(f.spec.MeanOff))
	onEnd, offEnd = now+on, now+on+off
	if stop > 0 {
		onEnd, offEnd = min(onEnd, stop), min(offEnd, stop)
	}
	return onEnd, offEnd, true
}
