package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/session"
)

// The rpc workload's protocol, one stream per exchange: the client sends
// "RPC <k>\n" padded with spaces to RequestBytes, or "BULK\n" for the bulk
// download, and closes its side; the server answers request k with
// ResponseBytes of the payload seeded by the run's seed and k, at the
// workload's urgency, and the bulk request with BulkBytes of the payload
// seeded by the run's seed (at the session's default priority). The client
// verifies every body against the payload it generates itself.

// rpcSeed is the payload seed of response k.
func rpcSeed(seed int64, k int) int64 { return seed ^ int64(k+1)<<36 ^ 0x5250 }

// serveRPC answers the requests and the bulk download of one session, each
// stream on its own goroutine, until all have been written, then closes the
// session gracefully. A request that does not parse ends the session with
// an error.
func serveRPC(ctx context.Context, ln *session.Listener, r Run) serverResult {
	p := *r.Workload.RPC
	return serveSession(ctx, ln, func(s *session.Session) error {
		var wg sync.WaitGroup
		var failed atomic.Pointer[error]
		for range p.Requests + 1 {
			st, err := s.AcceptStream(ctx)
			if err != nil {
				return err
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := answerRPC(st, r); err != nil {
					failed.CompareAndSwap(nil, &err)
					st.CancelWrite(1)
				}
			}()
		}
		wg.Wait()
		if e := failed.Load(); e != nil {
			return *e
		}
		return nil
	})
}

// answerRPC reads one request and writes its answer.
func answerRPC(st *session.Stream, r Run) error {
	p := *r.Workload.RPC
	// Read the whole request, its end included: a stream is freed (and
	// its credit returned to the client) only once both sides ended.
	br := bufio.NewReader(io.LimitReader(st, p.RequestBytes+1))
	line, err := br.ReadString('\n')
	if err != nil {
		return fmt.Errorf("rpc request: %w", err)
	}
	rest, err := io.Copy(io.Discard, br) // the padding
	if err != nil {
		return fmt.Errorf("rpc request: %w", err)
	}
	if int64(len(line))+rest > p.RequestBytes {
		return fmt.Errorf("rpc request longer than %d bytes", p.RequestBytes)
	}
	f := strings.Fields(line)
	switch {
	case len(f) == 1 && f[0] == "BULK":
		_, err = io.CopyN(st, newPayload(r.Seed), p.BulkBytes)
	case len(f) == 2 && f[0] == "RPC":
		k, perr := strconv.Atoi(f[1])
		if perr != nil || k < 0 || k >= p.Requests {
			return fmt.Errorf("bad rpc request %q", line)
		}
		st.SetPriority(p.Urgency, false)
		_, err = io.CopyN(st, newPayload(rpcSeed(r.Seed, k)), p.ResponseBytes)
	default:
		return fmt.Errorf("bad rpc request %q", line)
	}
	if err != nil {
		return err
	}
	return st.Close()
}

// rpcDone is one exchange's outcome.
type rpcDone struct {
	k        int // -1: the bulk download
	due, end time.Duration
	n        int64
	err      error
}

// fetchRPC issues the requests on time (request k at RPC.At(k) after
// start, whatever the state of the earlier ones) and the bulk download at
// BulkStart, reads and verifies every answer, and returns the bytes read,
// whether all verified, and the client's measurements. Latency counts from
// the time a request was due, so a wait for stream credit is part of it.
func fetchRPC(ctx context.Context, s *session.Session, r Run, start time.Time) (int64, bool, *metrics.RPC, error) {
	p := *r.Workload.RPC
	stop := context.AfterFunc(ctx, func() { s.CloseWithError(0, ctx.Err().Error()) })
	defer stop()
	done := make(chan rpcDone, p.Requests+1)
	var wg sync.WaitGroup
	exchange := func(k int, due time.Duration, req string, n int64, seed int64) {
		defer wg.Done()
		d := rpcDone{k: k, due: due}
		d.n, d.err = exchangeOnce(ctx, s, req, n, seed)
		d.end = time.Since(start)
		done <- d
	}
	wg.Add(1)
	go func() {
		if err := sleepUntil(ctx, start, p.BulkStart.D()); err != nil {
			wg.Done()
			done <- rpcDone{k: -1, err: err}
			return
		}
		exchange(-1, time.Since(start), "BULK\n", p.BulkBytes, r.Seed)
	}()
	for k := range p.Requests {
		if err := sleepUntil(ctx, start, p.At(k)); err != nil {
			break
		}
		req := fmt.Sprintf("RPC %d\n", k)
		req += strings.Repeat(" ", int(p.RequestBytes)-len(req))
		wg.Add(1)
		go exchange(k, p.At(k), req, p.ResponseBytes, rpcSeed(r.Seed, k))
	}
	wg.Wait()
	close(done)
	lat := make([]float64, p.Requests)
	due := make([]time.Duration, p.Requests)
	okReq := make([]bool, p.Requests)
	var bulk rpcDone
	var got int64
	var errs []error
	n := 0
	for d := range done {
		got += d.n
		if d.err != nil {
			errs = append(errs, d.err)
			continue
		}
		if d.k < 0 {
			bulk = d
			continue
		}
		lat[d.k], due[d.k], okReq[d.k] = (d.end - d.due).Seconds(), d.due, true
		n++
	}
	m := rpcSummary(lat, due, okReq, bulk)
	if len(errs) > 0 {
		return got, false, m, fmt.Errorf("bench: rpc: %w", errors.Join(errs...))
	}
	return got, true, m, nil
}

// exchangeOnce sends req on a new stream and reads n bytes of the answer,
// which must match the payload of seed and end there. It returns the bytes
// read.
func exchangeOnce(ctx context.Context, s *session.Session, req string, n, seed int64) (int64, error) {
	st, err := s.OpenStreamSync(ctx)
	if err != nil {
		return 0, err
	}
	if _, err := io.WriteString(st, req); err != nil {
		return 0, err
	}
	st.Close()
	check := newPayloadCheck(seed)
	got, err := io.Copy(check, io.LimitReader(st, n+1))
	if err != nil {
		return got, err
	}
	if !check.ok(n) {
		return got, fmt.Errorf("%q: %d of %d bytes, or they do not verify", strings.TrimSpace(req), got, n)
	}
	return got, nil
}

// rpcSummary is the client's measurements: lat, due and ok are per
// request, in order (ok: it completed; the others are left out), bulk the
// bulk download.
func rpcSummary(lat []float64, due []time.Duration, ok []bool, bulk rpcDone) *metrics.RPC {
	m := &metrics.RPC{LatencySec: lat, BulkStartSec: bulk.due.Seconds(), BulkSec: (bulk.end - bulk.due).Seconds()}
	var idle []float64
	for k, l := range lat {
		if !ok[k] {
			continue
		}
		m.Requests++
		switch {
		case due[k] < bulk.due:
			idle = append(idle, l)
		case due[k] <= bulk.end:
			m.LoadedLatency = append(m.LoadedLatency, l)
		}
	}
	m.IdleCount, m.LoadedCount = len(idle), len(m.LoadedLatency)
	m.IdleP50Sec, m.IdleP99Sec = metrics.Percentile(idle, 0.5), metrics.Percentile(idle, 0.99)
	m.LoadedP50Sec, m.LoadedP99Sec = metrics.Percentile(m.LoadedLatency, 0.5), metrics.Percentile(m.LoadedLatency, 0.99)
	return m
}
