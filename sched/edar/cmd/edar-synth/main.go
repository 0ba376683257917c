// Command edar-synth writes SYNTHETIC EdAR transition files, to prove the
// training pipeline (Go writes transitions → Python trains → ONNX → Go loads)
// before real transitions from the multipath session exist. Models trained on
// them are labelled synthetic and must not be shipped as EdAR models.
//
// The environment is a toy, not a network: two paths (A: 10 Mbit/s, 50 ms;
// B: 10 Mbit/s, 100 ms) where B suffers handoffs (loss 50%, 5% capacity,
// 3× RTT) a third of the time. Receiver reports follow the paper's Fig. 2/3
// story: normal mode aggregates both paths when B is good and is HoL-blocked
// during a handoff; redundant mode wastes half the bytes when B is good and
// keeps path A's goodput during a handoff. The real EdAR Scheduler runs over
// these snapshots with ε = 1 (uniformly random modes), so the files exercise
// the real state, reward and attribution code.
//
//	go run ./sched/edar/cmd/edar-synth -o DIR [-flows 8] [-seconds 20] [-seed 1]
package main

import (
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/edar"
)

func main() {
	out := flag.String("o", "", "output directory (created)")
	flows := flag.Int("flows", 8, "flows, one file each")
	seconds := flag.Float64("seconds", 20, "length of each flow, seconds of simulated time")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	if *out == "" {
		log.Fatal("edar-synth: -o DIR is required")
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	total := 0
	for f := 0; f < *flows; f++ {
		n, err := writeFlow(filepath.Join(*out, fmt.Sprintf("synthetic-%03d.edar", f)),
			time.Duration(*seconds*float64(time.Second)), *seed+uint64(f))
		if err != nil {
			log.Fatal(err)
		}
		total += n
	}
	fmt.Printf("edar-synth: wrote %d SYNTHETIC transitions in %d files to %s\n", total, *flows, *out)
}

const (
	mss  = 1200
	rate = 1.25e6 // bytes/s, 10 Mbit/s per path
)

type path struct {
	rtt     time.Duration
	handoff bool
	info    sched.PathInfo
}

// advance moves a path's counters forward by dt at its current condition.
func (p *path) advance(dt time.Duration, rng *rand.Rand) {
	capacity, loss, rtt := rate, 0.002, p.rtt
	if p.handoff {
		capacity, loss, rtt = rate*0.05, 0.5, 3*p.rtt
	}
	capacity *= 0.9 + 0.2*rng.Float64()
	sent := capacity * dt.Seconds() / mss
	i := &p.info
	i.PacketsSent += uint64(sent + 0.5)
	i.PacketsLost += uint64(sent*loss + rng.Float64())
	i.BytesSent += uint64(sent * mss)
	i.BytesAcked += uint64(sent * (1 - loss) * mss)
	i.SmoothedRTT = rtt + time.Duration(rng.Float64()*float64(rtt)/10)
	i.LatestRTT = i.SmoothedRTT
	i.RTTVar = rtt / 8
	if i.MinRTT == 0 || rtt < i.MinRTT {
		i.MinRTT = rtt
	}
	i.CongestionWindow = uint64(capacity*rtt.Seconds()) + 4*mss
	i.BytesInFlight = i.CongestionWindow / 2
	i.DeliveryRate = capacity * (1 - loss)
	i.LossRate = loss
	i.MSS = mss
	if p.handoff {
		i.PTOCount = uint32(rng.IntN(3))
	} else {
		i.PTOCount = 0
	}
}

// report is what the receiver sees over one TI of mode m.
func report(m edar.Mode, a, b *path, ti time.Duration, rng *rand.Rand) sched.ReceiverReport {
	sec := ti.Seconds()
	noise := func() float64 { return 0.9 + 0.2*rng.Float64() }
	r := sched.ReceiverReport{Interval: ti}
	yA, yB := rate*sec*noise(), rate*sec*noise()
	if b.handoff {
		yB *= 0.05
	}
	switch {
	case m == edar.Normal && !b.handoff:
		r.GoodputBytes = uint64(yA + yB)
		r.ReorderBytes = uint64(16 << 10 * noise())
	case m == edar.Normal: // HoL-blocked behind B's losses
		r.GoodputBytes = uint64(0.3 * yA)
		r.ReorderBytes = uint64(300 << 10 * noise())
		r.HoLBlocked = time.Duration(0.6 * float64(ti) * noise())
	case !b.handoff: // redundant, B good: half of all bytes are copies
		r.GoodputBytes = uint64(max(yA, yB))
		r.DuplicateBytes = uint64(min(yA, yB))
	default: // redundant during a handoff: A carries everything
		r.GoodputBytes = uint64(yA)
		r.DuplicateBytes = uint64(yB)
	}
	r.PathBytes[0], r.PathBytes[1] = uint64(yA), uint64(yB)
	return r
}

func writeFlow(name string, length time.Duration, seed uint64) (int, error) {
	f, err := os.Create(name)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	w, err := edar.NewWriter(f, 2)
	if err != nil {
		return 0, err
	}
	var werr error
	n := 0
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	s := edar.New(edar.Config{
		Epsilon: 1, Rand: rand.New(rand.NewPCG(seed, 1)), Log: func(string) {},
		Sink: func(t edar.Transition) {
			if werr == nil {
				werr = w.Write(&t)
				n++
			}
		},
	})
	a := &path{rtt: 50 * time.Millisecond, info: sched.PathInfo{ID: 1}}
	b := &path{rtt: 100 * time.Millisecond, info: sched.PathInfo{ID: 2}}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	end := now.Add(length)
	const step = 5 * time.Millisecond
	nextFlip := now.Add(time.Duration(2+rng.IntN(4)) * time.Second)
	var pendingReport *sched.ReceiverReport
	mode, tiStart := edar.Redundant, now
	for now.Before(end) {
		if !now.Before(nextFlip) {
			b.handoff = !b.handoff
			d := 2 + rng.IntN(4) // handoffs 1–2 s, good spells 2–5 s
			if b.handoff {
				d = 1 + rng.IntN(2)
			}
			nextFlip = now.Add(time.Duration(d) * time.Second)
		}
		a.advance(step, rng)
		b.advance(step, rng)
		paths := []sched.PathInfo{a.info, b.info}
		conn := sched.ConnInfo{Now: now, PeerWindow: 1 << 20, UnackedSegments: (a.info.BytesInFlight + b.info.BytesInFlight) / mss, SegmentSize: mss}
		before := s.Stats().Intervals
		s.Decide(&conn, paths)
		if s.Stats().Intervals != before { // a TI boundary: the old TI's report comes back during the new one
			rep := report(mode, a, b, now.Sub(tiStart), rng)
			pendingReport = &rep
			mode, tiStart = s.Mode(), now
		}
		now = now.Add(step)
		if pendingReport != nil {
			s.ReceiverReport(now, *pendingReport)
			pendingReport = nil
		}
	}
	s.ReceiverReport(now, report(mode, a, b, now.Sub(tiStart), rng))
	s.EndOfFlow()
	if werr != nil {
		return n, werr
	}
	return n, w.Flush()
}
