// Package bench runs multipath transfers over the in-process emulator and
// turns them into metrics.Result records: the engine behind mpquic-bench and
// the end-to-end tests. A run works the same in real time and inside a
// testing/synctest bubble (virtual time).
//
// Join policy (the same as mpquic-client's): Transfer opens the session on
// path 0, starts the download at once, and joins paths 1, 2, ... one after
// another in path order while the download runs, so path IDs follow path
// order. The FCT runs from the first packet of path 0's handshake to the
// last byte read, and so includes path 0's handshake but no wait for the
// other joins; scenario.FCTLowerBound models exactly this. A join that fails
// fails the run; a join still under way when the download ends is cancelled.
package bench

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mpqsched/mpqsched/pkg/certs"
	"github.com/mpqsched/mpqsched/pkg/emu"
	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/scenario"
	"github.com/mpqsched/mpqsched/pkg/session"
	"github.com/mpqsched/mpqsched/sched"
)

// Run describes one download: the client fetches Bytes from the server over
// every path of the topology.
type Run struct {
	Scheduler    string                 // registered scheduler name
	NewScheduler func() sched.Scheduler // optional, overrides Scheduler (both ends)
	// NewServerScheduler, if set, makes the server's (the data sender's)
	// scheduler, overriding Scheduler and NewScheduler on that end only: a
	// learning scheduler's transitions then come from the sender alone.
	NewServerScheduler func() sched.Scheduler
	Scenario           string          // name recorded in the result
	Seed               int64           // emulator and payload seed
	Paths              []emu.PathSpec  // path i joins the session in order
	Backup             []bool          // Backup[i] marks path i as a backup path
	Bytes              int64           // download size, bytes
	RecvWindow         int             // client receive window, bytes (0 = session default)
	Timeout            time.Duration   // give up after this long (0 = 10 minutes)
	Timed              time.Duration   // if > 0: a fixed-length run; stop reading after this long and verify the prefix received
	CapacityBps        float64         // recorded capacity, bits/s (0 = the sum of the paths' initial down rates)
	SeriesStep         time.Duration   // goodput series step (0 = 100 ms)
	Hooks              Hooks           // optional callbacks during the run
	SessionConfig      *session.Config // optional base config for both ends
	// Spec, if set, is the resolved scenario the run comes from (FromScenario
	// sets it): the Result then records its FCT lower bound for Bytes, its
	// capacity over time, outage and handoff windows, path names and whether
	// it is timed, so that reports need no scenario library.
	Spec *scenario.Scenario
	// Shared and Cross are the run's shared links and cross traffic (see
	// cross.go); when both are nil they come from Spec's bottlenecks and
	// cross_traffic.
	Shared []emu.SharedLink
	Cross  []CrossFlow // see Shared
	// Workload, if set, replaces the download by a workload (workload.go:
	// video, web or rpc): Bytes must be its TotalBytes.
	Workload *scenario.Workload
}

// Hooks let a caller act on a run in progress (tests, handoff scripts).
type Hooks struct {
	// Progress, if set, is called from the client's reader as data arrives
	// with the bytes received so far; it must not block.
	Progress func(received int64)
	// Started, if set, is called once the session is up on path 0 (the other
	// paths may still be joining), with the topology and the client session.
	Started func(topo *emu.Topology, client *session.Session)
}

// Detail is what a run measured beyond the Result record.
type Detail struct {
	Client, Server session.Stats    // each side's session counters: the client's at the FCT, the server's at its end
	Series         []session.Sample // the client's series from the session's open to the FCT
	RejectedJoins  int              // joins the server's listener refused
}

// Transfer runs r and returns its Result; the Result's Error field is set,
// and err returned, if the transfer failed or the data did not verify.
func Transfer(ctx context.Context, r Run) (metrics.Result, *Detail, error) {
	res := metrics.Result{Scheduler: r.Scheduler, Scenario: r.Scenario, Seed: r.Seed, Bytes: uint64(r.Bytes)}
	if r.NewScheduler != nil && res.Scheduler == "" {
		res.Scheduler = r.NewScheduler().Name()
	}
	res.CapacityBps = r.CapacityBps
	if res.CapacityBps == 0 {
		for _, p := range r.Paths {
			res.CapacityBps += p.Down.RateBps
		}
	}
	if r.Spec != nil {
		record(&res, *r.Spec, r.Bytes)
	}
	det, err := transfer(ctx, r, &res)
	if err != nil {
		res.Error = err.Error()
	}
	return res, det, err
}

// record copies what the scenario says into res: the FCT lower bound for
// bytes, the capacity curve, the Down windows, the path names, the
// description and Timed.
func record(res *metrics.Result, s scenario.Scenario, bytes int64) {
	s.Bytes = bytes
	if b := s.FCTLowerBound(); b > 0 && b < time.Duration(math.MaxInt64) {
		res.FCTLowerBoundSec = b.Seconds()
	}
	res.CapacityTimes, res.CapacitySeries = s.CapacityCurve()
	res.ScenarioDesc = s.Description
	for _, p := range s.Paths {
		res.PathNames = append(res.PathNames, p.Name)
		for _, w := range p.Down.Outages {
			res.Outages = append(res.Outages, [2]float64{w.Start.Seconds(), w.End.Seconds()})
		}
		for _, w := range p.Down.Handoffs {
			res.Handoffs = append(res.Handoffs, [2]float64{w.Start.Seconds(), w.End.Seconds()})
		}
	}
	res.Timed = s.Timed
}

func transfer(ctx context.Context, r Run, res *metrics.Result) (*Detail, error) {
	if len(r.Paths) == 0 {
		return nil, errors.New("bench: no paths")
	}
	if r.Timeout == 0 {
		r.Timeout = 10 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	topo, err := newTopology(r)
	if err != nil {
		return nil, err
	}
	defer topo.Close()
	flows, err := startCross(topo, r) // before the session: competitors may already be running
	if err != nil {
		return nil, err
	}
	defer flows.stop()
	pair, err := certs.SelfSigned("mpqsched.test")
	if err != nil {
		return nil, err
	}
	var base session.Config
	if r.SessionConfig != nil {
		base = *r.SessionConfig
	}
	base.Scheduler, base.NewScheduler = r.Scheduler, r.NewScheduler
	if base.CloseTimeout == 0 {
		// The run's own limit bounds the server's linger, up to what the
		// session accepts (edar-setting-v runs up to 10,000 s).
		base.CloseTimeout = min(r.Timeout, session.MaxDuration)
	}
	if r.SeriesStep > 0 {
		base.SeriesInterval = r.SeriesStep
	}
	srvCfg, cliCfg := base, base
	if r.RecvWindow > 0 {
		// The run's receive buffer bounds the download's stream, as it did
		// when a stream's window could equal the connection's: the session
		// keeps a stream's window at most 2/3 of the connection window (so
		// one unread stream never blocks another), so the connection window
		// is 1.5× the buffer.
		cliCfg.RecvWindow = 3 * ((r.RecvWindow + 1) / 2)
		cliCfg.MaxStreamWindow = r.RecvWindow
		cliCfg.StreamWindow = min(session.DefaultStreamWindow, r.RecvWindow)
	}
	if r.NewServerScheduler != nil {
		srvCfg.NewScheduler = r.NewServerScheduler
	}

	ln, err := session.Listen(topo.Server, pair.Server, &srvCfg)
	if err != nil {
		return nil, err
	}
	defer ln.Close()
	srvDone := make(chan serverResult, 1)
	srvRun := r                                          // the server's copy: the client side changes r.Hooks below
	go func() { srvDone <- serveRun(ctx, ln, srvRun) }() // workload.go

	start := time.Now()
	remote := net.UDPAddrFromAddrPort(topo.ServerAddr)
	cli, err := session.Dial(ctx, topo.Clients[0], remote, pair.Client, &cliCfg)
	if err != nil {
		return nil, err
	}
	defer cli.CloseWithError(0, "")
	extra := slices.Clone(topo.Clients[1:]) // before a hook may add paths
	if r.Hooks.Started != nil {
		r.Hooks.Started(topo, cli)
	}
	joinCtx, stopJoins := context.WithCancel(ctx)
	joined := make(chan error, 1)
	go func() { joined <- join(joinCtx, cli, extra, remote, r.Backup) }()
	var clientAddrs []net.Addr // the scenario's paths in order, by client socket
	for _, c := range topo.Clients[:len(r.Paths)] {
		clientAddrs = append(clientAddrs, c.LocalAddr())
	}
	links := linksByAddr(clientAddrs)
	probe := startHandoffProbe(cli, topo.Net.Start(), len(r.Paths), links) // handoff.go
	r.Hooks.Progress = probe.progress(r.Hooks.Progress)
	probe.begin()
	n, ok, wl, err := fetchRun(ctx, cli, r, start) // workload.go
	fct := time.Since(start)
	fctAt := start.Sub(topo.Net.Start()) + fct // the FCT in the emulator's frame
	probe.stop(fctAt)
	probe.fill(res, eventWindows(r), fctAt)
	flows.record(res, fct)
	series := cli.Series()
	stopJoins()
	joinErr := <-joined
	res.Bytes = uint64(n)
	det := &Detail{Client: cli.Stats(), Series: series, RejectedJoins: ln.RejectedJoins()}
	cli.Close()
	sr := <-srvDone
	det.Server = sr.stats
	res.FCTSeconds = fct.Seconds()
	if fct > 0 {
		res.GoodputBps = float64(n) * 8 / fct.Seconds()
	}
	res.Fairness = metrics.NewFairness(res.GoodputBps, res.CrossGoodputBps) // nil without cross traffic
	res.SHA256OK = ok
	fill(res, det, r.SeriesStep, links, len(r.Paths))
	wl.fill(res, n)
	if err != nil {
		return det, err
	}
	if joinErr != nil {
		return det, joinErr
	}
	if sr.err != nil && r.Timed == 0 {
		return det, fmt.Errorf("bench: server: %w", sr.err)
	}
	if !ok {
		return det, errors.New("bench: the data received is not the payload sent")
	}
	return det, nil
}

// join adds the client endpoints of paths 1, 2, ... (extra[0] is path 1)
// to s one after another, in path order; backup[i] marks path i as a
// backup. It stops without error when ctx is cancelled (the download ended
// first).
func join(ctx context.Context, s *session.Session, extra []*emu.Conn, remote net.Addr, backup []bool) error {
	for k, pc := range extra {
		i := k + 1
		opts := session.PathOptions{Backup: i < len(backup) && backup[i]}
		if _, err := s.AddPath(ctx, pc, remote, opts); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("bench: add path %d: %w", i, err)
		}
	}
	return nil
}

// fill copies the sessions' measurements into the Result; step is the
// series step asked for (0: the session's default).
func fill(res *metrics.Result, det *Detail, step time.Duration, link linkOf, paths int) {
	c, s := det.Client, det.Server
	res.OOOSegments = c.OOOSegments
	res.HoLBlockedSec = c.HoLBlocked.Seconds()
	res.RetransPackets = s.PacketsLost + s.RetransSegments
	res.SentBytes = s.SentBytes
	res.RedundantBytes = s.RedundantBytes
	// Bytes sent per scenario path: the server's paths by the client
	// address they come from (a path joined again after an outage counts
	// for its link).
	res.PerPathBytes = make([]uint64, paths)
	for _, p := range s.Paths {
		if i := link(p.RemoteAddr); i >= 0 && i < paths {
			res.PerPathBytes[i] += p.BytesSent
		}
	}
	if step <= 0 {
		step = session.DefaultSeriesInterval
	}
	if len(det.Series) > 1 {
		step = det.Series[0].T // a full step from the open, doubled by any compaction
	}
	if len(det.Series) > 0 {
		res.SeriesStepSec = step.Seconds()
	}
	for _, smp := range det.Series {
		res.GoodputSeries = append(res.GoodputSeries, smp.GoodputBps)
		res.SeriesTimes = append(res.SeriesTimes, smp.T.Seconds())
	}
	res.Extra = map[string]float64{
		"reinjected_segments": float64(s.ReinjectedSegs),
		"opportunistic_segs":  float64(s.OpportunisticSegs),
		"passed_over":         float64(s.PassedOver),
		"lost_segs":           float64(s.LostSegs),
		"path_failures":       float64(s.PathFailures),
		"duplicate_bytes":     float64(c.DuplicateBytes),
		"max_reorder_bytes":   float64(c.MaxReorderBytes),
	}
}

// payload is the deterministic content of a download: a 64 KiB block drawn
// from a PCG stream seeded by seed, repeated, with the first 8 bytes of each
// repetition replaced by its index, so that a misplaced or repeated block
// differs from it (payloadCheck). The content depends only on the offset, not on how
// it is read.
type payload struct {
	block []byte
	off   int64 // offset of the next byte
}

const payloadBlock = 64 << 10 // bytes

func newPayload(seed int64) *payload {
	rng := rand.NewPCG(uint64(seed), 0x6d7071)
	block := make([]byte, payloadBlock)
	for i := 0; i < len(block); i += 8 {
		binary.LittleEndian.PutUint64(block[i:], rng.Uint64())
	}
	return &payload{block: block}
}

func (p *payload) Read(b []byte) (int, error) {
	n := 0
	for n < len(b) {
		idx, i := p.off/payloadBlock, int(p.off%payloadBlock)
		k := copy(b[n:], p.block[i:])
		for j := i; j < 8 && j < i+k; j++ {
			b[n+j-i] = byte(idx >> (8 * j))
		}
		n += k
		p.off += int64(k)
	}
	return n, nil
}

type serverResult struct {
	stats session.Stats
	err   error
}

// serveSession accepts one session, runs body on it, then closes the session
// gracefully and returns its statistics with body's error (or else Close's).
func serveSession(ctx context.Context, ln *session.Listener, body func(s *session.Session) error) serverResult {
	s, err := ln.Accept(ctx)
	if err != nil {
		return serverResult{err: err}
	}
	err = body(s)
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	return serverResult{stats: s.Stats(), err: err}
}

// serve answers one session's "GET <bytes>" with that many bytes of the
// payload, then closes gracefully.
func serve(ctx context.Context, ln *session.Listener, r Run) serverResult {
	return serveSession(ctx, ln, func(s *session.Session) error { return serveGet(ctx, s, r) })
}

// serveGet answers the session's first stream.
func serveGet(ctx context.Context, s *session.Session, r Run) error {
	st, err := s.AcceptStream(ctx)
	if err != nil {
		return err
	}
	line, err := bufio.NewReader(io.LimitReader(st, 64)).ReadString('\n')
	if err != nil {
		return fmt.Errorf("request: %w", err)
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(strings.TrimSpace(line), "GET "), 10, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("bad request %q", line)
	}
	if _, err := io.CopyN(st, newPayload(r.Seed), n); err != nil {
		return err
	}
	return st.Close()
}

// fetch requests r.Bytes bytes, reads them and the stream's end, and
// reports whether they were the payload (payloadCheck). A timed run stops at
// r.Timed after start and checks the prefix it received.
func fetch(ctx context.Context, s *session.Session, r Run, start time.Time) (int64, bool, error) {
	n, progress := r.Bytes, r.Hooks.Progress
	st, err := s.OpenStream()
	if err != nil {
		return 0, false, err
	}
	if _, err := fmt.Fprintf(st, "GET %d\n", n); err != nil {
		return 0, false, err
	}
	st.Close()
	stop := context.AfterFunc(ctx, func() { s.CloseWithError(0, ctx.Err().Error()) })
	defer stop()
	check := newPayloadCheck(r.Seed)
	buf := make([]byte, 64<<10)
	var got int64
	if r.Timed > 0 {
		st.SetReadDeadline(start.Add(r.Timed))
	}
	for got < n {
		k, err := st.Read(buf[:min(int64(len(buf)), n-got)])
		check.Write(buf[:k])
		got += int64(k)
		if progress != nil && k > 0 {
			progress(got)
		}
		if r.Timed > 0 && errors.Is(err, os.ErrDeadlineExceeded) {
			return got, check.ok(got), nil
		}
		if err != nil {
			return got, false, fmt.Errorf("bench: read after %d of %d bytes: %w", got, n, err)
		}
	}
	if err := wantEOF(st); err != nil {
		return got, false, fmt.Errorf("bench: after %d bytes: %w", got, err)
	}
	return got, check.ok(n), nil
}
