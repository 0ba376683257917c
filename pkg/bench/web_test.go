package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/scenario"
	"github.com/mpqsched/mpqsched/sched"
)

// fakeOrigin is an http.RoundTripper that answers a web workload's
// requests after a fixed delay per object, with the object's payload, and
// records when each was requested and with which priority header.
type fakeOrigin struct {
	seed  int64
	objs  []scenario.PageObject
	delay map[string]time.Duration // by object name
	start time.Time

	mu    sync.Mutex
	req   map[string]time.Duration // the first request's time
	prio  map[string]string
	count map[string]int // requests per object
}

func (f *fakeOrigin) RoundTrip(req *http.Request) (*http.Response, error) {
	var l, k int
	if _, err := fmt.Sscanf(req.URL.Path, "/p%d/o%d", &l, &k); err != nil {
		return nil, err
	}
	o := f.objs[k]
	f.mu.Lock()
	if f.count[o.Name]++; f.count[o.Name] == 1 {
		f.req[o.Name], f.prio[o.Name] = time.Since(f.start), req.Header.Get("Priority")
	}
	f.mu.Unlock()
	time.Sleep(f.delay[o.Name])
	body, _ := io.ReadAll(io.LimitReader(newPayload(objectSeed(f.seed, l, k)), o.Bytes))
	return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: o.Bytes,
		Header: http.Header{"Content-Length": {strconv.FormatInt(o.Bytes, 10)}}}, nil
}

// One page load against a timeline worked by hand (issue 22: "the HTML
// first, then N objects in dependency levels"). Page: HTML; group css (2
// objects); group img (2, after the HTML); group font (1, after css). The
// origin answers html in 100 ms, css-1 in 50, css-2 in 80, img-1 in 30,
// img-2 in 200, font-1 in 20:
//
//	0     html requested          100  html arrives: css-1, css-2, img-1, img-2 requested
//	150   css-1 arrives           180  css-2 arrives: font-1 requested (after css, not before)
//	130   img-1 arrives           200  font-1 arrives
//	300   img-2 arrives: the page is loaded at 300 ms
//
// Object completion times 100, 50, 80, 30, 200, 20 ms; each request carries
// its group's RFC 9218 priority (the HTML "u=0, i"), and each object is
// requested once.
func TestWebLoadTimeline(t *testing.T) {
	page := scenario.Page{HTMLBytes: 1000, Groups: []scenario.ObjectGroup{
		{Name: "css", Count: 2, Bytes: 500, Urgency: 0},
		{Name: "img", Count: 2, Bytes: 700, Urgency: 3, Incremental: true},
		{Name: "font", Count: 1, Bytes: 300, After: "css", Urgency: 0},
	}}
	ms := time.Millisecond
	synctest.Test(t, func(t *testing.T) {
		objs := page.Objects()
		f := &fakeOrigin{seed: 7, objs: objs, start: time.Now(), req: map[string]time.Duration{}, prio: map[string]string{}, count: map[string]int{},
			delay: map[string]time.Duration{"html": 100 * ms, "css-1": 50 * ms, "css-2": 80 * ms, "img-1": 30 * ms, "img-2": 200 * ms, "font-1": 20 * ms}}
		res, err := loadPage(context.Background(), &http.Client{Transport: f}, 7, 0, page, objs, f.start)
		if err != nil {
			t.Fatal(err)
		}
		wantReq := map[string]time.Duration{"html": 0, "css-1": 100 * ms, "css-2": 100 * ms, "img-1": 100 * ms, "img-2": 100 * ms, "font-1": 180 * ms}
		wantPrio := map[string]string{"html": "u=0, i", "css-1": "u=0", "css-2": "u=0", "img-1": "u=3, i", "img-2": "u=3, i", "font-1": "u=0"}
		for name, at := range wantReq {
			if f.req[name] != at || f.prio[name] != wantPrio[name] || f.count[name] != 1 {
				t.Errorf("%s requested %d times, first at %v with priority %q; want once, at %v, %q", name, f.count[name], f.req[name], f.prio[name], at, wantPrio[name])
			}
		}
		var end time.Duration
		for i, r := range res {
			if want := f.delay[objs[i].Name]; r.end-r.req != want || !r.ok || r.n != objs[i].Bytes {
				t.Errorf("%s: took %v (ok %v, %d bytes), want %v, verified, %d bytes", objs[i].Name, r.end-r.req, r.ok, r.n, want, objs[i].Bytes)
			}
			end = max(end, r.end)
		}
		if end != 300*ms {
			t.Errorf("page loaded at %v, want 300ms", end)
		}
	})
}

// A failed object stops the load from requesting more, and loadPage still
// returns (no dependent waits for ever): here the stylesheets fail, so the
// font is never requested.
func TestWebLoadStopsOnError(t *testing.T) {
	page := scenario.Page{HTMLBytes: 10, Groups: []scenario.ObjectGroup{
		{Name: "css", Count: 2, Bytes: 5}, {Name: "font", Count: 1, Bytes: 5, After: "css"},
	}}
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		asked := map[string]bool{}
		rt := roundTripFunc(func(req *http.Request) (*http.Response, error) {
			mu.Lock()
			asked[req.URL.Path] = true
			mu.Unlock()
			if !strings.HasSuffix(req.URL.Path, "/o0") {
				return nil, fmt.Errorf("refused")
			}
			body, _ := io.ReadAll(io.LimitReader(newPayload(objectSeed(1, 0, 0)), 10))
			return &http.Response{StatusCode: 200, Body: io.NopCloser(bytes.NewReader(body))}, nil
		})
		_, err := loadPage(context.Background(), &http.Client{Transport: rt}, 1, 0, page, page.Objects(), time.Now())
		if err == nil || asked["/p0/o3"] {
			t.Errorf("err %v, font requested %v: want an error and no font request", err, asked["/p0/o3"])
		}
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// webTest is a small page, 3 loads 200 ms apart, over two lossless paths of
// 10 Mbit/s, 20 ms and 40 ms RTT.
func webTest() scenario.Scenario {
	l := func(delayMs float64) scenario.Link {
		return scenario.Link{RateBps: 10 * scenario.Mbps, Delay: scenario.Duration(delayMs * float64(time.Millisecond))}
	}
	page := &scenario.Page{HTMLBytes: 20000, Groups: []scenario.ObjectGroup{
		{Name: "css", Count: 2, Bytes: 15000, Urgency: 0},
		{Name: "js", Count: 4, Bytes: 25000, Urgency: 1},
		{Name: "img", Count: 6, Bytes: 40000, Urgency: 3, Incremental: true},
		{Name: "font", Count: 2, Bytes: 30000, After: "css", Urgency: 0},
	}}
	w := &scenario.Workload{Kind: scenario.WorkloadWeb, Page: page, Pages: 3, ThinkTime: scenario.Duration(200 * time.Millisecond)}
	return scenario.Scenario{
		Name:     "web-test",
		Paths:    []scenario.PathSpec{{Name: "a", Up: l(10), Down: l(10)}, {Name: "b", Up: l(20), Down: l(20)}},
		Bytes:    w.TotalBytes(),
		Duration: scenario.Duration(30 * time.Second),
		Workload: w,
	}
}

// urgencies records the urgencies a scheduler is shown with stream data.
type urgencies struct {
	sched.Scheduler
	mu   sync.Mutex
	seen map[uint8]int
}

func (u *urgencies) Decide(c *sched.ConnInfo, p []sched.PathInfo) sched.Decision {
	if c.HasStream {
		u.mu.Lock()
		u.seen[c.Urgency]++
		u.mu.Unlock()
	}
	return u.Scheduler.Decide(c, p)
}

// The web workload end to end over HTTP/3 on a 2-path session, in virtual
// time. The page is 20 + 30 + 100 + 240 + 60 = 450 kB, three loads. Ranges
// from the setup:
//   - every object arrives and verifies: 3 loads × 15 objects, 1,350,000 B;
//   - a load needs the HTML (a round trip of the fast path, 20 ms, plus
//     20 kB at both paths' 20 Mbit/s, 8 ms), then the other objects (a round
//     trip plus 430 kB at 20 Mbit/s, 192 ms): at least 0.22 s; and, with the
//     paths idle between loads, under 1 s;
//   - the priorities reach the sender's scheduler: it is shown stream data
//     at urgencies 0 (HTML, css, fonts), 1 (js) and 3 (images), and no
//     other;
//   - minRTT sends nothing twice on lossless paths.
func TestWebEndToEnd(t *testing.T) {
	u := &urgencies{seen: map[uint8]int{}}
	res, _ := runScenario(t, webTest(), "minrtt", 1, func(r *Run) {
		r.NewServerScheduler = func() sched.Scheduler { in, _ := sched.New("minrtt"); u.Scheduler = in; return u }
	})
	w := res.Web
	if w == nil {
		t.Fatal("no web metrics")
	}
	t.Logf("page loads %v s, objects p50/p99 %.3f/%.3f s, redundancy %.2f%%, urgencies %v", w.PageLoadSec, w.ObjectP50Sec, w.ObjectP99Sec, 100*w.Redundancy, u.seen)
	if w.Pages != 3 || w.Objects != 45 || !res.SHA256OK || res.Bytes != 1_350_000 {
		t.Errorf("%d loads, %d objects, sha %v, %d bytes; want 3, 45, verified, 1350000", w.Pages, w.Objects, res.SHA256OK, res.Bytes)
	}
	for i, plt := range w.PageLoadSec {
		if plt < 0.22 || plt >= 1 {
			t.Errorf("load %d: %.3f s, want in [0.22, 1)", i, plt)
		}
	}
	if w.PageLoadMeanSec < 0.22 || w.ObjectP99Sec > w.PageLoadP95Sec+1e-9 || w.ObjectP50Sec <= 0 {
		t.Errorf("summary %+v inconsistent", w)
	}
	for urg := range u.seen {
		if urg != 0 && urg != 1 && urg != 3 {
			t.Errorf("the scheduler saw urgency %d, want only 0, 1 and 3", urg)
		}
	}
	if u.seen[0] == 0 || u.seen[1] == 0 || u.seen[3] == 0 {
		t.Errorf("urgencies seen %v: want 0, 1 and 3", u.seen)
	}
	if w.Redundancy > 0.01 {
		t.Errorf("redundancy %.3f, want < 0.01", w.Redundancy)
	}
}
