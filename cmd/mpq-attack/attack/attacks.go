package attack

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"maps"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mpqsched/mpqsched/pkg/wire"
	"github.com/quic-go/quic-go/quicvarint"
)

// Options bound an attack.
type Options struct {
	Addr     *net.UDPAddr  // the server (loopback only)
	TLS      *tls.Config   // client TLS (the server's pinned certificate)
	Sessions int           // hostile sessions run at once
	Duration time.Duration // how long each keeps attacking
	MaxBytes int64         // overlap: payload bytes per session at most
	File     string        // window: the file requested
	Rate     int           // ackreq: AckReqs per second per session (0: as fast as QUIC takes them)
	Holes    int           // ackreq: holes in the receive buffer (0: 31; at most MaxHoles)
	Requests int           // h3-cancel: requests opened and cancelled per session (0: 10000; at most MaxRequests)
}

// Result counts what an attack did and what the server did to it.
type Result struct {
	Attack   string  `json:"attack"`
	Sessions int64   `json:"sessions"`        // sessions opened (the attack reconnects when the server ends one)
	Ended    int64   `json:"sessions_ended"`  // sessions the server ended while the attack ran
	Frames   int64   `json:"frames"`          // segments, Acks or AckReqs sent
	Bytes    int64   `json:"bytes"`           // payload bytes sent
	Failed   int64   `json:"dial_failures"`   // sessions that could not be opened
	Accepted int64   `json:"joins_accepted"`  // joins: forged or replayed joins the server accepted
	Refused  int64   `json:"joins_refused"`   // joins: refused
	Seconds  float64 `json:"elapsed_seconds"` // wall time of the attack
	// HTTP/3 attacks: how the server answered, counted by answer: "close
	// 0x103" (it closed the session with that H3 code), "status 431" (a
	// response), "stop 0x107" or "reset 0x10c" (a stream's STOP_SENDING or
	// RESET_STREAM code), "no answer", "credit stalled".
	Answers map[string]int64 `json:"h3_answers,omitempty"`
	Credit  uint64           `json:"stream_credit,omitempty"` // h3-cancel: the most bidirectional streams the server allowed a session at the end
}

// counters is a Result under construction, safe for concurrent use.
type counters struct {
	sessions, ended, frames, bytes, failed, accepted, refused atomic.Int64
	credit                                                    atomic.Uint64

	mu      sync.Mutex
	answers map[string]int64 // at most a few keys per attack
}

// answer counts one answer of the server.
func (c *counters) answer(a string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.answers == nil {
		c.answers = make(map[string]int64)
	}
	c.answers[a]++
}

func (c *counters) result(name string, el time.Duration) Result {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Result{Attack: name, Sessions: c.sessions.Load(), Ended: c.ended.Load(), Frames: c.frames.Load(),
		Bytes: c.bytes.Load(), Failed: c.failed.Load(), Accepted: c.accepted.Load(), Refused: c.refused.Load(), Seconds: el.Seconds(),
		Answers: maps.Clone(c.answers), Credit: c.credit.Load()}
}

// run runs body for o.Sessions sessions at once until o.Duration passed
// (or ctx ended); body returns when its session ended or it is done, and
// a new session replaces one the server ended.
func run(ctx context.Context, name string, o Options, body func(ctx context.Context, p *Peer, c *counters) error) Result {
	return runWith(ctx, name, o, func(ctx context.Context, o Options) (*Peer, error) {
		p, err := Dial(ctx, o.Addr, o.TLS)
		if err == nil {
			go p.Discard()
		}
		return p, err
	}, body)
}

// runWith is run with the sessions opened (and their reading started) by
// dial.
func runWith(ctx context.Context, name string, o Options, dial func(context.Context, Options) (*Peer, error), body func(ctx context.Context, p *Peer, c *counters) error) Result {
	ctx, cancel := context.WithTimeout(ctx, o.Duration)
	defer cancel()
	start := time.Now()
	var c counters
	var wg sync.WaitGroup
	for range max(o.Sessions, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				p, err := dial(ctx, o)
				if err != nil {
					if ctx.Err() == nil {
						c.failed.Add(1)
						time.Sleep(50 * time.Millisecond)
					}
					continue
				}
				c.sessions.Add(1)
				err = body(ctx, p, &c)
				if p.Conn.Context().Err() != nil && ctx.Err() == nil {
					c.ended.Add(1)
				}
				p.Close()
				if errors.Is(err, errOnce) {
					return
				}
				if errors.Is(err, errDone) {
					<-ctx.Done()
				}
				select { // a breath before the next session
				case <-ctx.Done():
				case <-time.After(100 * time.Millisecond):
				}
			}
		}()
	}
	wg.Wait()
	return c.result(name, time.Since(start))
}

// errDone ends a session's attack without reconnecting; errOnce ends it
// and its worker at once (the attack makes one round per session).
var (
	errDone = errors.New("done")
	errOnce = errors.New("one round done")
)

// Overlap (issue 10 item 1) leaves segment 0 missing and sends 16 KiB
// segments whose offsets overlap one another anywhere in the window the
// server announced (each offset at least its sequence number, which is all
// a receiver that checks each segment alone asks), up to o.MaxBytes per
// session: such a receiver holds every one of them.
func Overlap(ctx context.Context, o Options) Result {
	payload := make([]byte, wire.MaxSegmentPayload)
	return run(ctx, "overlap", o, func(ctx context.Context, p *Peer, c *counters) error {
		if err := p.Segment(1, 1, payload); err != nil {
			return err
		}
		c.frames.Add(1)
		c.bytes.Add(int64(len(payload)))
		limit := max(p.credit, 64<<10) // the server's window (its Accept's credit), over which the segments spread
		const maxSeq = 1 << 16
		span := uint64(1)
		if limit > 2*maxSeq+wire.MaxSegmentPayload {
			span = limit - 2*maxSeq - wire.MaxSegmentPayload
		}
		sent := int64(len(payload))
		for seq := uint64(2); seq < maxSeq && ctx.Err() == nil; seq++ {
			if o.MaxBytes > 0 && sent >= o.MaxBytes {
				return errDone
			}
			if err := p.Segment(seq, seq+(seq*4099)%span, payload); err != nil {
				return err
			}
			sent += int64(len(payload))
			c.frames.Add(1)
			c.bytes.Add(int64(len(payload)))
		}
		return errDone
	})
}

// MaxHoles is the most holes AckReqs makes: with the segment at the
// window's end, one run fewer than pkg/session's cap of 4096 runs (a peer
// that needs more is in violation).
const MaxHoles = 4094

// AckReqs (issue 10 item 2) puts o.Holes one-byte segments (default 31)
// evenly over the window the server announced, segment 0 and the ones in
// between missing, and one byte at the window's end; then it asks for Acks
// (1-byte datagrams), o.Rate per second (0: as fast as QUIC lets it). With
// fewer than 32 holes, a receiver that looks for Ack ranges sequence
// number by sequence number scans the whole window for each Ack; with
// MaxHoles, one that walks its ranges has the most to walk.
func AckReqs(ctx context.Context, o Options) Result {
	holes := uint64(o.Holes)
	if holes == 0 {
		holes = 31
	}
	holes = min(holes, MaxHoles)
	return run(ctx, "ackreq", o, func(ctx context.Context, p *Peer, c *counters) error {
		one := []byte{0}
		if err := p.Segment(1, 1, one); err != nil {
			return err
		}
		limit := max(p.credit, 1<<20) // the server's window (its Accept's credit)
		step := (limit - 2) / holes
		for k := uint64(1); k < holes; k++ {
			if err := p.Segment(1+k*step, 1+k*step, one); err != nil {
				return err
			}
			c.frames.Add(1)
		}
		if err := p.Segment(limit-1, limit-1, one); err != nil {
			return err
		}
		start := time.Now()
		for i := 1; ctx.Err() == nil && p.Conn.Context().Err() == nil; i++ {
			if err := p.AckReq(); err != nil {
				return err
			}
			c.frames.Add(1)
			if o.Rate > 0 {
				if d := time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(o.Rate))); d > 0 {
					time.Sleep(d)
				}
			}
		}
		return nil
	})
}

// Window (issue 10 item 3) requests o.File, reads (and drops) every byte
// the server sends, and answers with Acks that acknowledge nothing and
// grant a 2^62-1 byte connection credit, every 20 ms (as its Hello did,
// grantData): a sender that trusts the credit keeps everything it sent for
// retransmission.
func Window(ctx context.Context, o Options) Result {
	return run(ctx, "window", o, func(ctx context.Context, p *Peer, c *counters) error {
		if err := p.Request("FILE " + o.File + "\n"); err != nil {
			return err
		}
		a := wire.Ack{Cum: 0, MaxData: quicvarint.Max}
		return p.ackEvery(ctx, c, 20*time.Millisecond, func() *wire.Ack { return &a })
	})
}

// Idle (issue 10 item 4) opens sessions and does nothing with them; QUIC
// keep-alives keep the paths up.
func Idle(ctx context.Context, o Options) Result {
	return run(ctx, "idle", o, func(ctx context.Context, p *Peer, c *counters) error {
		select {
		case <-ctx.Done():
		case <-p.Conn.Context().Done():
		}
		return nil
	})
}

// randomBytes fills b from crypto/rand.
func randomBytes(b []byte) { rand.Read(b) }
