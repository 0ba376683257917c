package mpfile

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/session"
)

// HTTP at scale on one session (issue 9): the server code mpquic-server
// runs (Server, its HTTP side and handler) over the emulator in virtual
// time.
const (
	scaleSequential = 10000 // sequential requests, each on a new stream
	scaleConcurrent = 200   // concurrent requests, each on its own stream
	scaleSlack      = 4     // goroutines allowed above the baseline afterwards
)

// settleGoroutines lets timers and closes run out (virtual time) and
// returns the goroutine count.
func settleGoroutines() int {
	for range 3 {
		time.Sleep(2 * time.Second)
		synctest.Wait()
	}
	return runtime.NumGoroutine()
}

// getBody runs one HTTP GET of url with c and checks the body is want.
func getBody(c *http.Client, url string, want []byte) error {
	var got bytes.Buffer
	d, err := HTTPGet(context.Background(), c, url, &got, nil)
	if err != nil {
		return err
	}
	if !d.SHA256OK || !bytes.Equal(got.Bytes(), want) {
		return fmt.Errorf("%d bytes, SHA-256 ok %v", got.Len(), d.SHA256OK)
	}
	return nil
}

// 10,000 sequential HTTP GETs (each on a new stream: no keep-alive) and 200
// concurrent ones on one session, without error; afterwards the process
// (server, client session, emulator) has no more goroutines than before
// the first, within scaleSlack.
func TestHTTPAtScaleOneSession(t *testing.T) {
	dir := t.TempDir()
	want := writeFile(t, dir, "page.html", 4<<10)
	n := scaleSequential
	if testing.Short() {
		n = 1000
	}
	synctest.Test(t, func(t *testing.T) {
		srv := &Server{Dir: dir}
		s := emuServe(t, srv, nil)
		seq := Transport(s)
		seq.DisableKeepAlives = true
		hc := &http.Client{Transport: seq}
		if err := getBody(hc, "http://mpquic/page.html", want); err != nil {
			t.Fatal(err)
		}
		g0 := settleGoroutines()
		for i := range n {
			if err := getBody(hc, "http://mpquic/page.html", want); err != nil {
				t.Fatalf("sequential request %d: %v", i+1, err)
			}
		}
		g1 := settleGoroutines()

		conc := Transport(s)
		conc.MaxIdleConnsPerHost = scaleConcurrent
		cc := &http.Client{Transport: conc}
		var wg sync.WaitGroup
		errs := make(chan error, scaleConcurrent)
		for i := range scaleConcurrent {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := getBody(cc, "http://mpquic/page.html", want); err != nil {
					errs <- fmt.Errorf("concurrent request %d: %w", i, err)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		streams := s.Stats()
		conc.CloseIdleConnections()
		g2 := settleGoroutines()
		t.Logf("goroutines: %d before, %d after %d sequential requests, %d after %d concurrent ones; %d B delivered to the client",
			g0, g1, n, g2, scaleConcurrent, streams.DeliveredBytes)
		if g1 > g0+scaleSlack || g2 > g0+scaleSlack {
			t.Errorf("goroutines grew: %d before, %d after the sequential requests, %d after the concurrent ones", g0, g1, g2)
		}
		if srv.Sessions() != 1 || s.Err() != nil {
			t.Errorf("server serves %d sessions, client session error %v", srv.Sessions(), s.Err())
		}
	})
}

// More concurrent requests than the server grants streams (MaxStreams 16)
// wait for stream credit instead of failing: 100 concurrent GETs all
// succeed.
func TestHTTPWaitsForStreamCredit(t *testing.T) {
	dir := t.TempDir()
	want := writeFile(t, dir, "f", 64<<10)
	synctest.Test(t, func(t *testing.T) {
		s := emuServeCfg(t, &Server{Dir: dir}, &session.Config{MaxStreams: 16}, nil)
		tr := Transport(s)
		tr.MaxIdleConnsPerHost = 100
		hc := &http.Client{Transport: tr}
		var wg sync.WaitGroup
		var mu sync.Mutex
		var failed []error
		for range 100 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := getBody(hc, "http://mpquic/f", want); err != nil {
					mu.Lock()
					failed = append(failed, err)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		tr.CloseIdleConnections()
		if len(failed) > 0 {
			t.Errorf("%d of 100 requests failed, first: %v", len(failed), failed[0])
		}
	})
}
