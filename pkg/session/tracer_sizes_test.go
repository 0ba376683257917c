package session

import (
	"testing"

	"github.com/quic-go/quic-go/qlog"
)

// The size ring starts small (an idle connection costs 1 KiB, not 64) and
// grows with the packets in flight, so that a packet declared lost by
// quic-go's timer after 1,000 others were sent still has its size known:
// "Timer-based loss emits PacketLost but no MetricsUpdated, so subtract the
// lost packet's Raw.Length from bytes in flight yourself" (FACTS.md).
func TestTracerSizeRingGrows(t *testing.T) {
	tr := &tracer{}
	send := func(pn qlog.PacketNumber, size, inFlight int) {
		tr.RecordEvent(qlog.PacketSent{
			Header: qlog.PacketHeader{PacketType: qlog.PacketType1RTT, PacketNumber: pn},
			Raw:    qlog.RawInfo{Length: size},
		})
		tr.RecordEvent(qlog.MetricsUpdated{BytesInFlight: inFlight * 1000, PacketsInFlight: inFlight, CongestionWindow: 2 << 20})
	}
	send(0, 50, 1)
	if n := len(tr.sizes); n != minSizeRing {
		t.Fatalf("after one packet the ring holds %d entries, want %d", n, minSizeRing)
	}
	for pn := qlog.PacketNumber(1); pn < 1000; pn++ {
		send(pn, 1000+int(pn%7), int(pn)+1)
	}
	if n := len(tr.sizes); n < 2000 || n > sizeRing {
		t.Fatalf("with 1,000 packets in flight the ring holds %d entries, want [2000, %d]", n, sizeRing)
	}
	for _, pn := range []qlog.PacketNumber{0, 5, 500, 999} {
		want := 1000 + int(pn%7)
		if pn == 0 {
			want = 50
		}
		if got := tr.sizeOf(pn); got.pn != pn || got.size != want {
			t.Errorf("sizeOf(%d) = %+v, want size %d", pn, got, want)
		}
	}
	before := tr.inflight
	tr.RecordEvent(qlog.PacketLost{Header: qlog.PacketHeader{PacketType: qlog.PacketType1RTT, PacketNumber: 5}})
	if got := before - tr.inflight; got != 1005 {
		t.Errorf("losing packet 5 took %d bytes off in flight, want its 1005", got)
	}
	// The ring never grows past sizeRing, whatever quic-go reports.
	send(1000, 1000, 1<<20)
	if n := len(tr.sizes); n != sizeRing {
		t.Errorf("with 2^20 packets in flight the ring holds %d entries, want %d", n, sizeRing)
	}
}
