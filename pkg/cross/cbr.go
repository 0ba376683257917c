package cross

import (
	"context"
	"time"

	"github.com/mpqsched/mpqsched/pkg/emu"
)

// runCBR sends CBRPayload-byte UDP packets from the server to the client at
// spec.CBRRateBps during on periods, and counts what arrives.
func (f *Flow) runCBR(ctx context.Context) error {
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		buf := make([]byte, 64<<10)
		for {
			n, _, err := f.client.ReadFrom(buf)
			if err != nil {
				return // deadline set by Stop, or the Network closed
			}
			f.rec.add(n)
		}
	}()
	gap := time.Duration(float64((CBRPayload+emu.Overhead)*8) / f.spec.CBRRateBps * 1e9)
	pkt := make([]byte, CBRPayload)
	to := f.client.LocalAddr()
	tick := time.NewTimer(0)
	defer tick.Stop()
	for {
		onEnd, offEnd, ok := f.period(f.net.Elapsed())
		if !ok {
			return nil
		}
		for next := f.net.Elapsed(); next < onEnd; next += gap {
			if !f.sleepUntil(ctx, next) {
				return nil
			}
			if _, err := f.server.WriteTo(pkt, to); err != nil {
				return err
			}
		}
		if !f.sleepUntil(ctx, offEnd) {
			return nil
		}
	}
}
