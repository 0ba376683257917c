package session_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/qlogwriter"

	"github.com/mpqsched/mpqsched/pkg/certs"
	"github.com/mpqsched/mpqsched/pkg/session"
)

// loopbackBytes is what one loopback transfer moves.
const loopbackBytes = 64 << 20

func udp(b *testing.B) *net.UDPConn {
	c, err := listenLoopback()
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// listenLoopback opens a UDP socket on 127.0.0.1, on a free port.
func listenLoopback() (*net.UDPConn, error) {
	return net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
}

// multipathLoopback moves n bytes server→client over a 2-path session on
// real loopback UDP sockets (no shaping), both ends configured by cfg (nil:
// the defaults), and returns the time it took.
func multipathLoopback(b *testing.B, pair *certs.Pair, n int64, cfg *session.Config) time.Duration {
	ctx := context.Background()
	ln, err := session.Listen(udp(b), pair.Server, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		s, err := ln.Accept(ctx)
		if err != nil {
			return
		}
		st, err := s.AcceptStream(ctx)
		if err != nil {
			return
		}
		io.CopyN(io.Discard, st, 1)
		io.CopyN(st, zeros{}, n)
		st.Close()
		s.Close()
	}()
	start := time.Now()
	cli, err := session.Dial(ctx, udp(b), ln.Addr(), pair.Client, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer cli.Close()
	if _, err := cli.AddPath(ctx, udp(b), ln.Addr(), session.PathOptions{}); err != nil {
		b.Fatal(err)
	}
	st, _ := cli.OpenStream()
	st.Write([]byte{1})
	if got, err := io.Copy(io.Discard, st); err != nil || got != n {
		b.Fatalf("multipath: %d bytes, %v", got, err)
	}
	return time.Since(start)
}

// quicLoopback moves n bytes server→client over one plain quic-go
// connection and stream, the same way. With traced set, both ends carry a
// qlog tracer that does nothing: quic-go then builds an event for every
// packet sent and received (the session's tracer makes it do that too, on
// every path), which is the floor under the session's cost per packet.
func quicLoopback(b *testing.B, pair *certs.Pair, n int64, traced bool) time.Duration {
	d, err := quicTransfer(pair, n, traced)
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// quic2Loopback moves n bytes over two plain quic-go connections at once,
// n/2 each, on their own sockets: what any design that runs one quic-go
// connection per path costs at the least, with nothing of its own on top.
func quic2Loopback(b *testing.B, pair *certs.Pair, n int64) time.Duration {
	var wg sync.WaitGroup
	var errs [2]error
	start := time.Now()
	for i := range errs {
		wg.Go(func() { _, errs[i] = quicTransfer(pair, n/2, false) })
	}
	wg.Wait()
	if err := errors.Join(errs[:]...); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

// quicTransfer is quicLoopback's transfer; it is safe to run several at
// once.
func quicTransfer(pair *certs.Pair, n int64, traced bool) (time.Duration, error) {
	ctx := context.Background()
	srvTLS, cliTLS := pair.Server.Clone(), pair.Client.Clone()
	srvTLS.NextProtos, cliTLS.NextProtos = []string{"bench"}, []string{"bench"}
	var qc *quic.Config
	if traced {
		qc = &quic.Config{Tracer: func(context.Context, bool, quic.ConnectionID) qlogwriter.Trace { return nopTrace{} }}
	}
	sc, err := listenLoopback()
	if err != nil {
		return 0, err
	}
	str := &quic.Transport{Conn: sc}
	defer str.Close()
	ln, err := str.Listen(srvTLS, qc)
	if err != nil {
		return 0, err
	}
	go func() {
		c, err := ln.Accept(ctx)
		if err != nil {
			return
		}
		st, err := c.AcceptStream(ctx)
		if err != nil {
			return
		}
		io.CopyN(io.Discard, st, 1)
		io.CopyN(st, zeros{}, n)
		st.Close()
		<-c.Context().Done()
	}()
	start := time.Now()
	cc, err := listenLoopback()
	if err != nil {
		return 0, err
	}
	ctr := &quic.Transport{Conn: cc}
	defer ctr.Close()
	c, err := ctr.Dial(ctx, ln.Addr(), cliTLS, qc)
	if err != nil {
		return 0, err
	}
	defer c.CloseWithError(0, "")
	st, _ := c.OpenStream()
	st.Write([]byte{1})
	if got, err := io.Copy(io.Discard, st); err != nil || got != n {
		return 0, fmt.Errorf("quic-go: %d bytes, %v", got, err)
	}
	return time.Since(start), nil
}

// nopTrace is a qlog trace and recorder that drops every event.
type nopTrace struct{}

func (nopTrace) AddProducer() qlogwriter.Recorder { return nopTrace{} }
func (nopTrace) RecordEvent(qlogwriter.Event)     {}
func (nopTrace) Close() error                     { return nil }

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// timed adds one transfer's wall time (what run returns) to wall and the
// process's CPU time over it to cpu.
func timed(wall, cpu *time.Duration, run func() time.Duration) {
	c0 := processCPU()
	*wall += run()
	*cpu += processCPU() - c0
}

// BenchmarkLoopback compares a 2-path session with one plain quic-go
// connection on loopback, with one that carries a do-nothing qlog tracer,
// and with two plain connections that carry half the bytes each,
// alternating them in the same run. The mp/quic metric is the ratio of
// their throughputs (target ≥ 0.9); mp/quic-traced sets the session
// against the cost quic-go's tracing alone adds, and quic2 is the floor of
// any design with one quic-go connection per path. The cpu-µs/seg metrics
// are the process's CPU time (both ends, user and system) per 1200-byte
// segment, where the platform reports it.
func BenchmarkLoopback(b *testing.B) {
	pair, err := certs.SelfSigned("loopback.test")
	if err != nil {
		b.Fatal(err)
	}
	var mp, q, qt, q2 time.Duration             // wall time
	var mpCPU, qCPU, qtCPU, q2CPU time.Duration // CPU time
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		timed(&mp, &mpCPU, func() time.Duration { return multipathLoopback(b, pair, loopbackBytes, nil) })
		timed(&q, &qCPU, func() time.Duration { return quicLoopback(b, pair, loopbackBytes, false) })
		timed(&qt, &qtCPU, func() time.Duration { return quicLoopback(b, pair, loopbackBytes, true) })
		timed(&q2, &q2CPU, func() time.Duration { return quic2Loopback(b, pair, loopbackBytes) })
	}
	mbps := func(d time.Duration) float64 { return float64(b.N) * loopbackBytes * 8 / d.Seconds() / 1e6 }
	b.ReportMetric(mbps(mp), "mp-Mbit/s")
	b.ReportMetric(mbps(q), "quic-Mbit/s")
	b.ReportMetric(mbps(qt), "quic-traced-Mbit/s")
	b.ReportMetric(mbps(mp)/mbps(q), "mp/quic")
	b.ReportMetric(mbps(mp)/mbps(qt), "mp/quic-traced")
	b.ReportMetric(mbps(q2)/mbps(q), "quic2/quic")
	if mpCPU > 0 {
		perSeg := func(d time.Duration) float64 {
			return d.Seconds() * 1e6 / float64(b.N) / (loopbackBytes / segBytes)
		}
		b.ReportMetric(perSeg(mpCPU), "mp-cpu-µs/seg")
		b.ReportMetric(perSeg(qCPU), "quic-cpu-µs/seg")
		b.ReportMetric(perSeg(qtCPU), "quic-traced-cpu-µs/seg")
		b.ReportMetric(perSeg(q2CPU), "quic2-cpu-µs/seg")
	}
}

// segBytes is the segment the cpu-µs/seg metrics count in, bytes.
const segBytes = session.DefaultSegmentSize

// BenchmarkLoopbackDatagram compares the two transports of the session's
// segments (docs/data-plane.md): each path's reliable QUIC stream (the
// default) and QUIC DATAGRAM frames (Config.DatagramData), with one plain
// quic-go connection, alternated in the same run as BenchmarkLoopback
// alternates. The dg/quic and dg-cpu/quic metrics are the datagram
// transport's throughput and CPU time over plain quic-go's; mp/quic and
// mp-cpu/quic the stream transport's.
func BenchmarkLoopbackDatagram(b *testing.B) {
	pair, err := certs.SelfSigned("loopback.test")
	if err != nil {
		b.Fatal(err)
	}
	var mp, dg, q, mpCPU, dgCPU, qCPU time.Duration
	dgCfg := &session.Config{DatagramData: true}
	for i := 0; i < b.N; i++ {
		timed(&mp, &mpCPU, func() time.Duration { return multipathLoopback(b, pair, loopbackBytes, nil) })
		timed(&dg, &dgCPU, func() time.Duration { return multipathLoopback(b, pair, loopbackBytes, dgCfg) })
		timed(&q, &qCPU, func() time.Duration { return quicLoopback(b, pair, loopbackBytes, false) })
	}
	b.ReportMetric(q.Seconds()/mp.Seconds(), "mp/quic")
	b.ReportMetric(q.Seconds()/dg.Seconds(), "dg/quic")
	if qCPU > 0 {
		b.ReportMetric(mpCPU.Seconds()/qCPU.Seconds(), "mp-cpu/quic")
		b.ReportMetric(dgCPU.Seconds()/qCPU.Seconds(), "dg-cpu/quic")
	}
}
