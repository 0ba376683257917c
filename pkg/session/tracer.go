package session

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go/qlog"
	"github.com/quic-go/quic-go/qlogwriter"
)

// tracer collects one path connection's congestion-control signals from
// quic-go's qlog events. RecordEvent runs on the connection's goroutine, so
// it only updates fields under its own small mutex and pokes the send pass.
type tracer struct {
	mu          sync.Mutex
	srtt        time.Duration
	minRTT      time.Duration
	latestRTT   time.Duration
	rttVar      time.Duration
	cwnd        int // bytes
	inflight    int // bytes
	ptoCount    uint32
	packetsSent uint64
	packetsLost uint64
	lossRate    float64                         // EWMA of the per-packet loss indicator, window ≈ lossWindow packets
	lastRecv    time.Time                       // last packet received on the connection
	lastData    time.Time                       // last packet received that carried STREAM frames (see carriesData)
	dataSince   time.Time                       // first packet with data of the current run (packets with data no more than activeWindow apart)
	dataWake    bool                            // poke wake on the next packet with data (set by probeLocked when only data can change its view)
	roomWake    atomic.Bool                     // poke wake when the window's room grows: the session has data not yet acknowledged (setRoomWakes)
	gap         time.Duration                   // EWMA (1/8) of the time between received packets (gaps of 1 s or more left out)
	lastSent    qlog.PacketNumber               // largest 1-RTT packet number sent
	lastLost    qlog.PacketNumber               // largest 1-RTT packet number declared lost
	epochPN     qlog.PacketNumber               // largest packet sent when the current loss epoch began
	lossCwnd    int                             // cwnd when the epoch's first loss was reported: before quic-go's own reduction, bytes
	spurious    [spuriousRing]qlog.PacketNumber // the last packets quic-go found lost spuriously (acknowledged after all), -1: none
	nSpurious   uint64                          // spurious losses reported; spurious[nSpurious%spuriousRing] is next
	sizes       []sentSize                      // ring of sent 1-RTT packets' sizes by packet number: minSizeRing entries with the first 1-RTT packet, doubled up to sizeRing as packets in flight grow (growSizes)
	wake        chan struct{}
	fwd         qlogwriter.Recorder // optional qlog file
}

type sentSize struct {
	pn   qlog.PacketNumber
	size int
}

const (
	sizeRing     = 4096 // most sent 1-RTT packets whose sizes are remembered for loss accounting
	minSizeRing  = 64   // the ring's first size: an idle connection's packets in flight are a few keep-alives
	lossWindow   = 256  // packets in the loss-rate EWMA
	spuriousRing = 8    // spurious-loss reports remembered for the coupled window's undo
)

// wasSpurious reports whether quic-go reported packet pn lost spuriously
// among its last spuriousRing reports. Called with t.mu held.
func (t *tracer) wasSpurious(pn qlog.PacketNumber) bool {
	for i := range min(t.nSpurious, spuriousRing) {
		if t.spurious[i] == pn {
			return true
		}
	}
	return false
}

func (t *tracer) setWake(c chan struct{}) {
	t.mu.Lock()
	t.wake = c
	t.mu.Unlock()
}

// sizeOf is what the ring remembers about packet pn (zero if nothing).
func (t *tracer) sizeOf(pn qlog.PacketNumber) sentSize {
	if t.sizes == nil {
		return sentSize{pn: -1}
	}
	return t.sizes[int(pn)&(len(t.sizes)-1)]
}

// AddProducer implements qlogwriter.Trace.
func (t *tracer) AddProducer() qlogwriter.Recorder { return t }

// Close implements qlogwriter.Recorder.
func (t *tracer) Close() error {
	if t.fwd != nil {
		return t.fwd.Close()
	}
	return nil
}

// RecordEvent implements qlogwriter.Recorder.
func (t *tracer) RecordEvent(e qlogwriter.Event) {
	if t.fwd != nil {
		t.fwd.RecordEvent(e)
	}
	wake := false
	t.mu.Lock()
	switch ev := e.(type) {
	case qlog.MetricsUpdated:
		wake = t.metrics(&ev) && t.roomWake.Load()
	case *qlog.MetricsUpdated:
		wake = t.metrics(ev) && t.roomWake.Load()
	case qlog.PacketSent:
		if ev.Header.PacketType == qlog.PacketType1RTT {
			t.packetsSent++
			t.lossRate -= t.lossRate / lossWindow
			if t.sizes == nil {
				t.sizes = make([]sentSize, minSizeRing)
			}
			t.sizes[int(ev.Header.PacketNumber)&(len(t.sizes)-1)] = sentSize{ev.Header.PacketNumber, ev.Raw.Length}
			t.lastSent = max(t.lastSent, ev.Header.PacketNumber)
		}
	case qlog.PacketLost:
		if ev.Header.PacketType == qlog.PacketType1RTT {
			if t.packetsLost == 0 || ev.Header.PacketNumber > t.epochPN {
				// quic-go reports the loss before it reduces its window
				// (one reduction per epoch, as its largestSentAtLastCutback).
				t.epochPN, t.lossCwnd = t.lastSent, t.cwnd
			}
			t.packetsLost++
			t.lastLost = max(t.lastLost, ev.Header.PacketNumber)
			t.lossRate += 1.0 / lossWindow
			if s := t.sizeOf(ev.Header.PacketNumber); s.pn == ev.Header.PacketNumber {
				// Timer-based loss emits no MetricsUpdated: keep in-flight honest.
				t.inflight = max(0, t.inflight-s.size)
			}
			wake = true
		}
	case qlog.SpuriousLoss: // only 1-RTT packets are checked for spurious loss
		t.spurious[t.nSpurious%spuriousRing] = ev.PacketNumber
		t.nSpurious++
		wake = true
	case qlog.PacketReceived:
		now := time.Now()
		if gap := now.Sub(t.lastRecv); !t.lastRecv.IsZero() && gap < time.Second {
			t.gap += (gap - t.gap) / 8
		}
		t.lastRecv = now
		if carriesData(ev.Frames) {
			if t.lastData.IsZero() || now.Sub(t.lastData) >= activeWindow {
				t.dataSince = now
			}
			t.lastData = now
			if t.dataWake {
				t.dataWake, wake = false, true
			}
		}
	case qlog.PTOCountUpdated:
		t.ptoCount = ev.PTOCount
		wake = true
	}
	w := t.wake
	t.mu.Unlock()
	if wake && w != nil {
		poke(w)
	}
}

// carriesData reports whether a packet's frames include STREAM frames: the
// session's segments (and handshakes), which the peer sends because it has
// data for this end. quic-go's keep-alive PINGs, bare ACKs and the
// session's own control datagrams (Acks, reports, pings) do not count.
func carriesData(fs []qlog.Frame) bool {
	for _, f := range fs {
		if _, ok := f.Frame.(*qlog.StreamFrame); ok {
			return true
		}
	}
	return false
}

// setRoomWakes says whether the paths' tracers poke the send pass when a
// path's window room grows (paths without a tracer ask for data themselves
// when quic-go has room: pull.go). Room matters only while the session has data
// that is not yet acknowledged (to send, to send again or to copy); an idle
// session's loop need not wake for the ACK of each quic-go keep-alive. The
// send pass turns the pokes on before its scheduler reads the windows (so
// that no growth after that read goes unnoticed) and off after a pass that
// left everything acknowledged; new data pokes the loop on its own.
// s.mu is held.
//
// A path with a tracer still takes them: its session window (coupling.go,
// window.go) may hold it below quic-go's, and then its room grows with
// quic-go's ACKs while quic-go, whose own window has room, does not ask.
func (s *Session) setRoomWakes(on bool) {
	for _, p := range s.slots {
		if p != nil && p.tr != nil {
			p.tr.roomWake.Store(on)
		}
	}
}

// tracerKey carries a path's tracer in the context quic-go hands to
// Config.Tracer (the dial context, or Transport.ConnContext's on servers).
type tracerKey struct{}

// tracerFor returns the Config.Tracer callback: it takes the tracer from the
// context and, if qlogOpen is set, chains a qlog file behind it.
func tracerFor(qlogOpen func(isClient bool, id qlogwriter.ConnectionID) qlogwriter.Trace) func(context.Context, bool, qlogwriter.ConnectionID) qlogwriter.Trace {
	return func(ctx context.Context, isClient bool, id qlogwriter.ConnectionID) qlogwriter.Trace {
		t, _ := ctx.Value(tracerKey{}).(*tracer)
		if t == nil {
			return nil
		}
		if qlogOpen != nil {
			if tr := qlogOpen(isClient, id); tr != nil {
				t.fwd = tr.AddProducer()
			}
		}
		return t
	}
}

// metrics applies a MetricsUpdated snapshot; t.mu is held. It reports
// whether the path's window room grew, the only change that can let the
// scheduler send more (a packet sent only shrinks it).
func (t *tracer) metrics(ev *qlog.MetricsUpdated) bool {
	before := t.cwnd - t.inflight
	if ev.SmoothedRTT > 0 {
		t.srtt, t.minRTT, t.latestRTT, t.rttVar = ev.SmoothedRTT, ev.MinRTT, ev.LatestRTT, ev.RTTVariance
	}
	if ev.CongestionWindow > 0 {
		t.cwnd = ev.CongestionWindow
	}
	t.inflight = ev.BytesInFlight
	t.growSizes(ev.PacketsInFlight)
	return t.cwnd-t.inflight > before
}

// growSizes doubles the size ring while it holds fewer than twice the
// packets in flight (up to sizeRing entries), so that a lost packet's size
// is still there when quic-go declares it lost. The entries move to their
// places in the larger ring: the last len(t.sizes) packets stay known.
// Called with t.mu held.
func (t *tracer) growSizes(inFlight int) {
	n := len(t.sizes)
	if n == 0 || n >= sizeRing || 2*inFlight <= n {
		return
	}
	for n < sizeRing && 2*inFlight > n {
		n *= 2
	}
	grown := make([]sentSize, n)
	for _, e := range t.sizes {
		if e.size > 0 {
			grown[int(e.pn)&(n-1)] = e
		}
	}
	t.sizes = grown
}
