package attack_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/cmd/mpq-attack/attack"
	"github.com/mpqsched/mpqsched/pkg/certs"
	"github.com/mpqsched/mpqsched/pkg/h3"
	"github.com/mpqsched/mpqsched/pkg/session"
)

// serveH3 serves HTTP/3 in this process on a loopback session listener:
// /big is 4 MiB of zeros; it returns the attack options pointing at it.
func serveH3(t testing.TB) attack.Options {
	t.Helper()
	pair, err := certs.SelfSigned("localhost")
	if err != nil {
		t.Fatal(err)
	}
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := session.Listen(pc, pair.Server, nil)
	if err != nil {
		t.Fatal(err)
	}
	big := bytes.NewReader(make([]byte, 4<<20))
	srv := &h3.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/big" {
			http.NotFound(w, r)
			return
		}
		http.ServeContent(w, r, "big", time.Time{}, bytes.NewReader(make([]byte, big.Size())))
	})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			s, err := ln.Accept(context.Background())
			if err != nil {
				return
			}
			go srv.ServeConn(h3.FromSession(s))
		}
	}()
	t.Cleanup(func() {
		srv.Close()
		ln.Close()
		pc.Close()
		<-done
	})
	return attack.Options{Addr: pc.LocalAddr().(*net.UDPAddr), TLS: pair.Client, Sessions: 2, Duration: 30 * time.Second, File: "big"}
}

// Each protocol violation of issue 21 item 7 gets the answer RFC 9114
// gives it, on every session: a second control stream and DATA before
// HEADERS close the session with H3_STREAM_CREATION_ERROR (0x103) and
// H3_FRAME_UNEXPECTED (0x105); a header section past
// SETTINGS_MAX_FIELD_SECTION_SIZE gets 431 and STOP_SENDING with
// H3_EXCESSIVE_LOAD (0x107).
func TestH3Violations(t *testing.T) {
	if attack.Version() < 3 {
		t.Skip("no HTTP/3 before protocol version 3")
	}
	o := serveH3(t)
	for _, c := range []struct {
		run  func(context.Context, attack.Options) attack.Result
		want []string // answers each session must get
	}{
		{attack.H3SecondControl, []string{"close 0x103"}},
		{attack.H3DataFirst, []string{"close 0x105"}},
		{attack.H3BigHeaders, []string{"status 431", "stop 0x107"}},
	} {
		r := c.run(context.Background(), o)
		if r.Sessions != int64(o.Sessions) {
			t.Errorf("%s: %d sessions, want %d (%+v)", r.Attack, r.Sessions, o.Sessions, r)
		}
		for _, a := range c.want {
			if r.Answers[a] != r.Sessions {
				t.Errorf("%s: answers %v, want %q on each of %d sessions", r.Attack, r.Answers, a, r.Sessions)
			}
		}
		if r.Seconds > 20 {
			t.Errorf("%s: took %.1f s", r.Attack, r.Seconds)
		}
	}
}

// 10,000 requests opened and cancelled at once on one session (issue 21
// item 7, "10,000 cancelled requests") leave nothing behind: the server
// keeps granting stream credit (past 10,000 streams with its 256), still
// answers a request afterwards, and its goroutines and heap come back to
// what they were before.
func TestH3CancelReleases(t *testing.T) {
	if attack.Version() < 3 {
		t.Skip("no HTTP/3 before protocol version 3")
	}
	if testing.Short() {
		t.Skip("10,000 requests")
	}
	o := serveH3(t)
	o.Sessions, o.Requests = 1, 10000
	// Warm up: one session's worth of goroutines and buffers exists.
	warm := o
	warm.Requests = 10
	attack.H3Cancel(context.Background(), warm)
	g0, heap0 := settle(0)
	r := attack.H3Cancel(context.Background(), o)
	t.Logf("%+v", r)
	if r.Frames != 10000 || r.Answers["status 200"] != 1 || r.Ended != 0 || r.Credit < 10001 {
		t.Errorf("%d requests cancelled, answers %v, %d sessions ended by the server, credit %d; want 10000, one status 200, 0, at least 10001",
			r.Frames, r.Answers, r.Ended, r.Credit)
	}
	g, heap := settle(g0 + 4)
	t.Logf("goroutines %d before, %d after; heap %d KiB before, %d KiB after", g0, g, heap0>>10, heap>>10)
	// 16 MiB: heap in use after a GC varied by up to 6 MiB between runs
	// of 10,000, 40,000 and 80,000 requests (quic-go's buffer pools); 2 KiB
	// kept per cancelled request would be 20 MiB.
	if g > g0+4 || heap > heap0+16<<20 {
		t.Errorf("after 10,000 cancelled requests: %d goroutines (%d before), heap %d KiB (%d KiB before)", g, g0, heap>>10, heap0>>10)
	}
}

// settle waits (up to 10 s) for the goroutines to come down to want (0:
// just a moment), and returns them and the heap in use after a GC.
func settle(want int) (int, uint64) {
	end := time.Now().Add(10 * time.Second)
	for {
		g := runtime.NumGoroutine()
		if want == 0 {
			time.Sleep(time.Second)
			g = runtime.NumGoroutine()
		}
		if g <= want || want == 0 || time.Now().After(end) {
			runtime.GC()
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			return g, m.HeapInuse
		}
		time.Sleep(100 * time.Millisecond)
	}
}
