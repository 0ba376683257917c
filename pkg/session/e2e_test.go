package session_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/bench"
	"github.com/mpqsched/mpqsched/pkg/emu"
	_ "github.com/mpqsched/mpqsched/sched/all"
)

// hetero is the built-in heterogeneous pair: 20 Mbit/s with a 10 ms RTT and
// 10 Mbit/s with a 30 ms RTT.
func hetero(loss float64) []emu.PathSpec {
	a := emu.LinkConfig{RateBps: 20e6, Delay: 5 * time.Millisecond, Loss: loss}
	b := emu.LinkConfig{RateBps: 10e6, Delay: 15 * time.Millisecond, Loss: loss}
	return []emu.PathSpec{{Up: a, Down: a}, {Up: b, Down: b}}
}

func TestSmoke(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		res, det, err := bench.Transfer(context.Background(), bench.Run{Scheduler: "minrtt", Paths: hetero(0), Bytes: 4 << 20, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%+v", res)
		t.Logf("client %+v", det.Client)
		t.Logf("server %+v", det.Server)
	})
}
