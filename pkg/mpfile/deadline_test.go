package mpfile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/certs"
	"github.com/mpqsched/mpqsched/pkg/emu"
	"github.com/mpqsched/mpqsched/pkg/session"
)

// fakeStream is a fileStream that writes to w and ignores deadlines.
type fakeStream struct{ w io.Writer }

func (f *fakeStream) Write(p []byte) (int, error)      { return f.w.Write(p) }
func (f *fakeStream) SetReadDeadline(time.Time) error  { return nil }
func (f *fakeStream) SetWriteDeadline(time.Time) error { return nil }

func testLimits() fileLimits {
	return fileLimits{request: time.Second, write: time.Second, now: time.Now}
}

// lines collects log lines, safely across goroutines.
type lines struct {
	mu sync.Mutex
	l  []string
}

func (l *lines) logf(f string, a ...any) {
	l.mu.Lock()
	l.l = append(l.l, fmt.Sprintf(f, a...))
	l.mu.Unlock()
}

func (l *lines) count(sub string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, s := range l.l {
		if strings.Contains(s, sub) {
			n++
		}
	}
	return n
}

// emuServe runs srv over a one-path emulated network (100 Mbit/s, 5 ms
// each way) inside the current synctest bubble and returns a connected
// client session; everything is closed when the bubble's function returns.
func emuServe(t *testing.T, srv *Server, cfg *session.Config) *session.Session {
	t.Helper()
	return emuServeCfg(t, srv, nil, cfg)
}

// emuServeCfg is emuServe with the server's session config srvCfg.
func emuServeCfg(t *testing.T, srv *Server, srvCfg, cfg *session.Config) *session.Session {
	t.Helper()
	l := emu.LinkConfig{RateBps: 100e6, Delay: 5 * time.Millisecond}
	topo, err := emu.NewTopology(1, emu.PathSpec{Up: l, Down: l})
	if err != nil {
		t.Fatal(err)
	}
	pair, err := certs.SelfSigned("mpfile.test")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := session.Listen(topo.Server, pair.Server, srvCfg)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	s, err := Connect(context.Background(), []net.PacketConn{topo.Clients[0]}, net.UDPAddrFromAddrPort(topo.ServerAddr), pair.Client, cfg, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.CloseWithError(0, "")
		srv.Close()
		<-served
		topo.Close()
	})
	return s
}

// A downloader that never reads has its response stream reset with
// CodeWriteTimeout once the server's writes have made no progress for
// WriteTimeout (default 30 s): the session survives and serves the next
// request, the client reads what arrived and then the reset with its code,
// and the event is logged once.
func TestNeverReadingDownloaderReset(t *testing.T) {
	dir := t.TempDir()
	want := writeFile(t, dir, "big", 8<<20)
	synctest.Test(t, func(t *testing.T) {
		var log lines
		var resetAt time.Time
		srv := &Server{Dir: dir, Limits: &RateLog{Logf: func(f string, a ...any) {
			resetAt = time.Now()
			log.logf(f, a...)
		}}}
		s := emuServe(t, srv, &session.Config{RecvWindow: 256 << 10})
		st, err := s.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if _, err := fmt.Fprintf(st, "FILE big\n"); err != nil {
			t.Fatal(err)
		}
		// Never read for a minute: the server fills the windows, then
		// stalls; the session must outlive the stall.
		select {
		case <-s.Done():
			t.Fatalf("the session ended after %v: %v", time.Since(start), s.Err())
		case <-time.After(time.Minute):
		}
		synctest.Wait()
		if n := log.count("write timeout: reset a response stream"); n != 1 {
			t.Fatalf("%d write-timeout lines, want 1: %q", n, log.l)
		}
		// The windows fill within a second at 100 Mbit/s; then 30 s pass
		// without progress.
		if el := resetAt.Sub(start); el < DefaultWriteTimeout || el > DefaultWriteTimeout+3*time.Second {
			t.Errorf("reset after %v, want %v plus the time to fill the windows", el, DefaultWriteTimeout)
		}
		// The client sees the reset with the server's code (what it had
		// not read yet is released with the reset, as in QUIC).
		got, err := io.ReadAll(st)
		var se *session.StreamError
		if !errors.As(err, &se) || !se.Remote || se.ErrorCode != CodeWriteTimeout {
			t.Fatalf("after %d bytes: %v, want the peer's reset with code %#x", len(got), err, CodeWriteTimeout)
		}
		if len(got) >= len(want) {
			t.Errorf("read %d bytes before the reset, want less than the %d-byte file", len(got), len(want))
		}
		st.Close()
		if n := srv.Sessions(); n != 1 {
			t.Errorf("server serves %d sessions, want 1 (the session survives)", n)
		}
		// The session still serves a complete download.
		var b bytes.Buffer
		if d, err := Get(context.Background(), s, "big", &b, nil); err != nil || !d.SHA256OK {
			t.Errorf("a download after the reset: %v (ok %v)", err, d.SHA256OK)
		}
	})
}

// blockedWriter takes its first write only after a pause.
type blockedWriter struct {
	pause time.Duration
	n     int
}

func (w *blockedWriter) Write(p []byte) (int, error) {
	if w.n == 0 {
		time.Sleep(w.pause)
	}
	w.n += len(p)
	return len(p), nil
}

// A client that stops reading for longer than the server's WriteTimeout
// gets a request error wrapping ErrWriteTimeout and the
// *session.StreamError, over FILE (Get) and HTTP (HTTPGet, net/http's
// transport) alike; the session goes on.
func TestStalledClientSeesReset(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "big", 8<<20)
	synctest.Test(t, func(t *testing.T) {
		srv := &Server{Dir: dir, WriteTimeout: time.Second}
		s := emuServe(t, srv, &session.Config{RecvWindow: 256 << 10})
		check := func(what string, err error) {
			t.Helper()
			var se *session.StreamError
			if !errors.Is(err, ErrWriteTimeout) || !errors.As(err, &se) || se.ErrorCode != CodeWriteTimeout {
				t.Errorf("%s: %v, want ErrWriteTimeout and a StreamError with code %#x", what, err, CodeWriteTimeout)
			}
		}
		_, err := Get(context.Background(), s, "big", &blockedWriter{pause: 5 * time.Second}, nil)
		check("FILE", err)
		hc := &http.Client{Transport: Transport(s)}
		_, err = HTTPGet(context.Background(), hc, "http://mpquic/big", &blockedWriter{pause: 5 * time.Second}, nil)
		check("HTTP", err)
		hc.CloseIdleConnections()
		if _, err := HTTPGet(context.Background(), hc, "http://mpquic/big", io.Discard, nil); err != nil {
			t.Errorf("HTTP after the resets: %v", err)
		}
		if s.Err() != nil {
			t.Errorf("session: %v", s.Err())
		}
	})
}

// slowWriter accepts each write after a pause.
type slowWriter struct {
	bytes.Buffer
	pause time.Duration
}

func (w *slowWriter) Write(p []byte) (int, error) {
	time.Sleep(w.pause)
	return w.Buffer.Write(p)
}

// The write deadline is renewed by progress: a download that takes far
// longer than WriteTimeout but keeps moving is never cut.
func TestSlowReaderNotDropped(t *testing.T) {
	dir := t.TempDir()
	want := writeFile(t, dir, "f", 2<<20)
	synctest.Test(t, func(t *testing.T) {
		srv := &Server{Dir: dir, WriteTimeout: 2 * time.Second}
		s := emuServe(t, srv, &session.Config{RecvWindow: 128 << 10})
		w := &slowWriter{pause: time.Second} // Get reads ≤ 64 KiB per write: about 64 KiB/s
		start := time.Now()
		d, err := Get(context.Background(), s, "f", w, nil)
		el := time.Since(start)
		if err != nil || !d.SHA256OK || !bytes.Equal(w.Bytes(), want) {
			t.Fatalf("after %v: %v (%d bytes, ok %v)", el, err, w.Len(), d.SHA256OK)
		}
		if el < 10*srv.WriteTimeout {
			t.Errorf("took %v: the test needs a download much longer than the %v write timeout", el, srv.WriteTimeout)
		}
		t.Logf("2 MiB at about 64 KiB/s took %v with a %v write timeout", el, srv.WriteTimeout)
	})
}

// 256 half-sent requests (128 FILE lines, 128 HTTP headers; the session
// allows 256 open streams) are all cut at RequestTimeout (default 10 s): no
// goroutine of the server waits on them longer.
func TestHalfSentRequestsTimeOut(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "f", 1024)
	synctest.Test(t, func(t *testing.T) {
		var log lines
		srv := &Server{Dir: dir, Limits: &RateLog{Logf: log.logf}}
		s := emuServe(t, srv, nil)
		const n = 128
		start := time.Now()
		ended := make(chan time.Duration, 2*n)
		for i := 0; i < 2*n; i++ {
			st, err := s.OpenStream()
			if err != nil {
				t.Fatal(err)
			}
			half := "FILE f" // no end of line
			if i%2 == 1 {
				half = "GET /f HTTP/1.1\r\nHost: mpquic\r\n" // no empty line
			}
			if _, err := io.WriteString(st, half); err != nil {
				t.Fatal(err)
			}
			go func() {
				b, err := io.ReadAll(st) // ends when the server gives up on the stream
				if err != nil || len(b) > 0 && !bytes.Contains(b, []byte("408")) {
					t.Errorf("stream: %q, %v", b, err)
				}
				ended <- time.Since(start)
				st.Close()
			}()
		}
		var last time.Duration
		for i := 0; i < 2*n; i++ {
			select {
			case d := <-ended:
				last = max(last, d)
				if d < DefaultRequestTimeout {
					t.Errorf("a half-sent request was cut after %v, before the %v timeout", d, DefaultRequestTimeout)
				}
			case <-time.After(time.Minute):
				t.Fatalf("%d of %d half-sent requests still open after a minute", 2*n-i, 2*n)
			}
		}
		if last > DefaultRequestTimeout+time.Second {
			t.Errorf("the last half-sent request was cut after %v, want about %v", last, DefaultRequestTimeout)
		}
		synctest.Wait() // the streams' closes reach the server
		if c := log.count("request timeout:"); c != 1 {
			t.Errorf("%d request-timeout lines for %d FILE timeouts, want 1: %q", c, n, log.l)
		}
		// The session itself still works.
		if _, err := Get(context.Background(), s, "f", io.Discard, nil); err != nil {
			t.Errorf("a complete request after the timeouts: %v", err)
		}
		t.Logf("%d half-sent requests cut by %v", 2*n, last)
	})
}

// The server frees each finished stream: more requests than the session's
// 256-stream limit succeed one after another on one session (FILE and
// HTTP alike).
func TestManyRequestsOneSession(t *testing.T) {
	dir := t.TempDir()
	want := writeFile(t, dir, "f", 1000)
	synctest.Test(t, func(t *testing.T) {
		s := emuServe(t, &Server{Dir: dir}, nil)
		for i := 0; i < 300; i++ {
			var got bytes.Buffer
			if _, err := Get(context.Background(), s, "f", &got, nil); err != nil || !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("FILE request %d: %v", i+1, err)
			}
		}
		for i := 0; i < 300; i++ {
			hc := &http.Client{Transport: Transport(s)} // a new stream per client
			_, err := HTTPGet(context.Background(), hc, "http://mpquic/f", io.Discard, nil)
			hc.CloseIdleConnections()
			if err != nil {
				t.Fatalf("HTTP request %d: %v", i+1, err)
			}
		}
	})
}
