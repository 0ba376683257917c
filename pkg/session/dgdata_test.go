package session_test

import (
	"context"
	"crypto/tls"
	"strings"
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/pkg/bench"
	"github.com/mpqsched/mpqsched/pkg/emu"
	"github.com/mpqsched/mpqsched/pkg/session"
)

// Config.DatagramData: segments in QUIC datagrams, with the session's own
// loss detection and retransmission (dgdata.go).

// On the lossless pair the only losses are the bottleneck queues' drops:
// RFC 9002 §6.1 declares a packet lost only once a later one is
// acknowledged ("The packet is unacknowledged, in flight, and was sent
// prior to an acknowledged packet"), so a segment that merely waits in a
// queue, or that an Ack's ranges leave out, is not sent again. What the
// receiver gets twice (a spurious loss) stays under 0.5% of the bytes, and
// goodput is within the range TestMinRTTAggregates asks of the stream.
func TestDatagramDataNoSpuriousLoss(t *testing.T) {
	const size = 20 << 20
	res, det := transfer(t, bench.Run{Scheduler: "minrtt", Paths: hetero(0), Bytes: size, Seed: 1,
		SessionConfig: &session.Config{DatagramData: true}})
	ratio := res.GoodputBps / res.CapacityBps
	t.Logf("goodput/capacity %.3f, lost %d segments, %d duplicate bytes at the client", ratio, det.Server.LostSegs, det.Client.DuplicateBytes)
	if ratio < 0.88 || ratio > 1.0 {
		t.Errorf("goodput/capacity = %.3f, want in [0.88, 1.0]", ratio)
	}
	if dup := det.Client.DuplicateBytes; dup > size/200 {
		t.Errorf("the client received %d bytes twice, want at most %d: spurious losses", dup, size/200)
	}
}

// RFC 9002 §6.1: "A packet is declared lost if it meets all of the
// following conditions: The packet is unacknowledged, in flight, and was
// sent prior to an acknowledged packet. The packet was sent
// kPacketThreshold packets before an acknowledged packet (Section
// 6.1.1), or it was sent long enough in the past (Section 6.1.2)." With 2%
// loss on both paths, the session declares the lost segments itself and
// sends them again: the transfer is intact, the server's lost and
// retransmitted segments roughly match what the links dropped, and
// nothing the peer already had is sent again more than rarely.
func TestDatagramDataRetransmitsLoss(t *testing.T) {
	const size = 8 << 20
	res, det := transfer(t, bench.Run{Scheduler: "minrtt", Paths: hetero(0.02), Bytes: size, Seed: 2,
		SessionConfig: &session.Config{DatagramData: true}})
	segs := uint64(size / session.DefaultSegmentSize)
	t.Logf("FCT %.2f s, lost %d of about %d segments, retransmitted %d, %d duplicate bytes", res.FCTSeconds, det.Server.LostSegs, segs, det.Server.RetransSegments, det.Client.DuplicateBytes)
	if lost := det.Server.LostSegs; lost < segs/100 || lost > segs/20 {
		t.Errorf("lost %d segments, want between 1%% and 5%% of %d on 2%% loss", lost, segs)
	}
	if det.Server.RetransSegments < det.Server.LostSegs*9/10 {
		t.Errorf("retransmitted %d segments of %d declared lost", det.Server.RetransSegments, det.Server.LostSegs)
	}
	if dup := det.Client.DuplicateBytes; dup > size/50 {
		t.Errorf("the client received %d bytes twice, want at most %d", dup, size/50)
	}
}

// Issue 30: "Data declared lost on a path, or stuck on a failed one, is
// framed again and offered to the scheduler like new data, on any path."
// The fast path goes dark for 3 s: what it carried is declared lost a
// probe timeout after its last acknowledgement and goes on the slow path,
// so the transfer goes on through the outage (the same bound as
// TestOutageReinjects on the stream) and no stall comes near the
// outage's 3 s. (Measured: 0.13-0.50 s over seeds 1-4 and reruns, the
// stream 0.16 s; docs/data-plane.md.)
func TestDatagramDataOutageMovesData(t *testing.T) {
	paths := hetero(0)
	out := []emu.Window{{Start: 2 * time.Second, End: 5 * time.Second}}
	paths[0].Up.Outages, paths[0].Down.Outages = out, out
	res, det := transfer(t, bench.Run{Scheduler: "minrtt", Paths: paths, Bytes: 20 << 20, Seed: 3,
		SessionConfig: &session.Config{DatagramData: true}})
	t.Logf("FCT %.2f s, longest stall %.3f s, lost %d, retransmitted %d", res.FCTSeconds, res.MaxStallSec, det.Server.LostSegs, det.Server.RetransSegments)
	if det.Server.LostSegs == 0 || det.Server.RetransSegments == 0 {
		t.Errorf("lost %d, retransmitted %d segments: the outage's segments were not declared lost", det.Server.LostSegs, det.Server.RetransSegments)
	}
	if res.FCTSeconds > 20<<20*8/30e6+3+4 {
		t.Errorf("FCT %.2f s: the other path did not carry the transfer through the outage", res.FCTSeconds)
	}
	if res.MaxStallSec > 1 {
		t.Errorf("longest stall %.3f s, want under 1 s", res.MaxStallSec)
	}
}

// A segment must fit one DATAGRAM frame of the smallest packet quic-go
// sends: a larger SegmentSize with DatagramData is refused up front.
func TestDatagramDataSegmentSize(t *testing.T) {
	pc, err := emu.NewTopology(1, emu.PathSpec{})
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	_, err = session.Dial(context.Background(), pc.Clients[0], pc.Server.LocalAddr(), &tls.Config{}, &session.Config{DatagramData: true, SegmentSize: session.MaxDatagramSegment + 1})
	if err == nil || !strings.Contains(err.Error(), "MaxDatagramSegment") {
		t.Fatalf("Dial with SegmentSize %d and DatagramData: %v, want an error naming MaxDatagramSegment", session.MaxDatagramSegment+1, err)
	}
}

// Two lossy paths (LLHD's scenario 2: 10 Mbit/s and 5 ms each, 2% and 8%
// loss). A path whose last segments were all lost must still take the
// retransmissions: its bytes in flight are what it carries that was
// neither acknowledged nor declared lost (RFC 9002 §2: "Bytes in flight:
// The sum of the size in bytes of all sent packets ... that have not been
// acknowledged or declared lost"). With the time-based estimate the
// stream uses, which does not fall while nothing comes back, the transfer
// stopped for good after 2.9 of 10 MB. (Seed 1 is left out: there the
// second path's QUIC handshake times out at 8% loss, stream or datagrams
// alike, a separate finding.)
func TestDatagramDataLossyPathsComplete(t *testing.T) {
	a := emu.LinkConfig{RateBps: 10e6, Delay: 5 * time.Millisecond, Loss: 0.02}
	b := emu.LinkConfig{RateBps: 10e6, Delay: 5 * time.Millisecond, Loss: 0.08}
	res, det := transfer(t, bench.Run{Scheduler: "minrtt", Paths: []emu.PathSpec{{Up: a, Down: a}, {Up: b, Down: b}}, Bytes: 10 << 20, Seed: 2,
		SessionConfig: &session.Config{DatagramData: true}, Timeout: time.Minute})
	t.Logf("goodput %.2f Mbit/s, lost %d, retransmitted %d", res.GoodputBps/1e6, det.Server.LostSegs, det.Server.RetransSegments)
	if res.GoodputBps < 8e6 {
		t.Errorf("goodput %.2f Mbit/s, want at least 8 (the stream reaches 11-13 on these paths)", res.GoodputBps/1e6)
	}
}
