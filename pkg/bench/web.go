package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mpqsched/mpqsched/pkg/h3"
	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/scenario"
	"github.com/mpqsched/mpqsched/pkg/session"
)

// The web workload runs HTTP/3 (pkg/h3) on the session: the server is an
// h3.Server whose handler answers GET /p<load>/o<k> with object k of the
// page (its size from scenario.Page, its bytes the payload seeded by the
// run's seed, the load and k); the client is an h3.Transport whose
// connection is the run's session. Each request carries the object's RFC
// 9218 priority in its "priority" header, which the server applies to the
// response's stream (h3: Stream.SetPriority), as a browser asks and a
// server honours it.

// webAuthority is the host the client asks for; the session is its
// connection whatever the name.
const webAuthority = "mpqsched.test"

// objectSeed is the payload seed of object k of page load l in a run with
// seed seed.
func objectSeed(seed int64, l, k int) int64 { return seed ^ int64(l+1)<<48 ^ int64(k+1)<<32 }

// priorityField is the RFC 9218 priority header value of an object.
func priorityField(o scenario.PageObject) string {
	v := "u=" + strconv.Itoa(int(o.Urgency))
	if o.Incremental {
		v += ", i"
	}
	return v
}

// serveWeb serves the page's objects over HTTP/3 on one session until every
// object of every load has been written, then closes the session gracefully
// (Close waits until the responses are acknowledged).
func serveWeb(ctx context.Context, ln *session.Listener, r Run) serverResult {
	objs := r.Workload.WebPage().Objects()
	loads := r.Workload.PageLoads()
	total := int64(len(objs) * loads)
	var served atomic.Int64
	all := make(chan struct{})
	srv := &h3.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var l, k int
		if _, err := fmt.Sscanf(req.URL.Path, "/p%d/o%d", &l, &k); err != nil || l < 0 || l >= loads || k < 0 || k >= len(objs) {
			http.NotFound(w, req)
			return
		}
		n := objs[k].Bytes
		w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
		if _, err := io.CopyN(w, newPayload(objectSeed(r.Seed, l, k)), n); err != nil {
			return
		}
		if served.Add(1) == total {
			close(all)
		}
	})}
	stopped := make(chan struct{})
	res := serveSession(ctx, ln, func(s *session.Session) error {
		serveErr := make(chan error, 1)
		go func() {
			defer close(stopped)
			serveErr <- srv.ServeConn(h3.FromSession(s))
		}()
		select {
		case <-all:
			// Every handler has written its object, but the h3 server
			// ends each response (its last bytes and the FIN) after its
			// handler returns. The server's Close would fail those
			// writes (a Write fails once Close begins), so it waits for
			// the client, which closes once it has read everything (or
			// for the run's end). Closing at once failed about 1 run in
			// 20 of web-lte-wifi-only.short with H3_INTERNAL_ERROR.
			select {
			case <-s.Done():
			case <-ctx.Done():
			}
			return nil
		case err := <-serveErr:
			return fmt.Errorf("h3 server ended after %d of %d objects: %w", served.Load(), total, err)
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	srv.Close()
	select {
	case <-stopped:
	case <-ctx.Done():
	}
	return res
}

// fetched is one object's outcome.
type fetched struct {
	k        int
	req, end time.Duration // since the session's open
	n        int64
	ok       bool
	err      error
}

// fetchWeb loads the page r.Workload.PageLoads() times, ThinkTime apart:
// the HTML first, then each group of objects once its dependency has
// arrived, each object on its own request with its priority. It returns
// the bytes read, whether every object verified, and the browser's
// measurements.
func fetchWeb(ctx context.Context, s *session.Session, r Run, start time.Time) (int64, bool, *metrics.Web, error) {
	w := *r.Workload
	page := w.WebPage()
	objs := page.Objects()
	stop := context.AfterFunc(ctx, func() { s.CloseWithError(0, ctx.Err().Error()) })
	defer stop()
	conn := h3.FromSession(s)
	client := &http.Client{Transport: &h3.Transport{Dial: func(context.Context, string) (h3.Conn, error) { return conn, nil }}}
	m := &metrics.Web{}
	var html []float64
	var got int64
	ok := true
	for l := range w.PageLoads() {
		if l > 0 {
			if err := sleepUntil(ctx, start, time.Since(start)+w.ThinkTime.D()); err != nil {
				return got, false, webSummary(m, html), err
			}
		}
		loadStart := time.Since(start)
		res, err := loadPage(ctx, client, r.Seed, l, page, objs, start)
		end := loadStart
		for _, f := range res {
			got += f.n
			ok = ok && f.ok
			end = max(end, f.end)
			m.ObjectTimesSec = append(m.ObjectTimesSec, (f.end - f.req).Seconds())
		}
		if err != nil {
			return got, false, webSummary(m, html), err
		}
		html = append(html, (res[0].end - res[0].req).Seconds())
		m.StartSec = append(m.StartSec, loadStart.Seconds())
		m.PageLoadSec = append(m.PageLoadSec, (end - loadStart).Seconds())
	}
	if !ok {
		return got, false, webSummary(m, html), errors.New("bench: a web object is not the payload sent")
	}
	return got, true, webSummary(m, html), nil
}

// webSummary fills the derived fields of m from its lists; html is the
// loads' HTML completion times, s.
func webSummary(m *metrics.Web, html []float64) *metrics.Web {
	m.Pages, m.Objects = len(m.PageLoadSec), len(m.ObjectTimesSec)
	m.PageLoadMeanSec, m.HTMLMeanSec = mean(m.PageLoadSec), mean(html)
	m.PageLoadP95Sec = metrics.Percentile(m.PageLoadSec, 0.95)
	m.ObjectP50Sec = metrics.Percentile(m.ObjectTimesSec, 0.50)
	m.ObjectP99Sec = metrics.Percentile(m.ObjectTimesSec, 0.99)
	return m
}

// mean is the arithmetic mean of xs, 0 for none.
func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var t float64
	for _, x := range xs {
		t += x
	}
	return t / float64(len(xs))
}

// loadPage runs one page load and returns every object's outcome, in page
// order; err is the first request's error, if any (no object is requested
// after it; those that were still run to their end). At most len(objs)
// goroutines, one per object.
func loadPage(ctx context.Context, client *http.Client, seed int64, l int, page scenario.Page, objs []scenario.PageObject, start time.Time) ([]fetched, error) {
	out := make([]fetched, len(objs))
	left := make([]int, len(page.Groups)) // objects of each group still to arrive
	for _, o := range objs[1:] {
		left[o.Group]++
	}
	done := make(chan fetched, len(objs))
	var wg sync.WaitGroup
	launched := 0
	launch := func(k int) {
		launched++
		wg.Add(1)
		go func() {
			defer wg.Done()
			done <- fetchObject(ctx, client, seed, l, k, objs[k], start)
		}()
	}
	launchAfter := func(dep int) { // every object waiting for dep (-1: the HTML)
		for k := 1; k < len(objs); k++ {
			if objs[k].After == dep {
				launch(k)
			}
		}
	}
	launch(0)
	var err error
	for received := 0; received < launched; received++ {
		f := <-done
		out[f.k] = f
		if f.err != nil && err == nil {
			err = f.err
		}
		if err != nil {
			continue // let the launched ones end; launch no more
		}
		if f.k == 0 {
			launchAfter(-1)
			continue
		}
		if g := objs[f.k].Group; g >= 0 {
			if left[g]--; left[g] == 0 {
				launchAfter(g)
			}
		}
	}
	wg.Wait()
	return out, err
}

// fetchObject requests object k of load l and reads and verifies its body.
func fetchObject(ctx context.Context, client *http.Client, seed int64, l, k int, o scenario.PageObject, start time.Time) fetched {
	f := fetched{k: k, req: time.Since(start)}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("https://%s/p%d/o%d", webAuthority, l, k), nil)
	if err != nil {
		f.err = err
		return f
	}
	req.Header.Set("Priority", priorityField(o))
	resp, err := client.Do(req)
	if err != nil {
		f.err = fmt.Errorf("bench: %s of load %d: %w", o.Name, l, err)
		return f
	}
	defer resp.Body.Close()
	check := newPayloadCheck(objectSeed(seed, l, k))
	f.n, err = io.Copy(check, resp.Body)
	f.end = time.Since(start)
	if err != nil || resp.StatusCode != http.StatusOK || f.n != o.Bytes {
		f.err = fmt.Errorf("bench: %s of load %d: status %d, %d of %d bytes: %v", o.Name, l, resp.StatusCode, f.n, o.Bytes, err)
		return f
	}
	f.ok = check.ok(o.Bytes)
	return f
}
