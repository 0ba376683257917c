package h3

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/session"
)

// RFC 9114 §5.1: "HTTP/3 implementations will need to open a new HTTP/3
// connection ... when an existing connection has been idle for too long"
// and servers "are encouraged to maintain open HTTP/3 connections for as
// long as possible but are permitted to terminate idle connections if
// necessary." HTTP/3's control streams stay open for the connection's life,
// so the session's own idle timeout (no open stream) never fires: the server
// closes a connection that ran no request for Server.IdleTimeout, not
// before, and never while a request runs.
func TestServerIdleTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/slow" {
				<-release
			}
			io.WriteString(w, "ok")
		})
		b := newSessionBed(t, h, &Server{IdleTimeout: 10 * time.Second}, &session.Config{IdleTimeout: -1})
		defer b.close()
		get := func(path string) error {
			req, _ := http.NewRequest("GET", "https://mp.test"+path, nil)
			resp, err := b.tr.RoundTrip(req)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			_, err = io.ReadAll(resp.Body)
			return err
		}
		if err := get("/a"); err != nil {
			t.Fatal(err)
		}
		s := <-b.dialed
		start := time.Now()
		// A request that runs for 20 s, two idle timeouts, holds the
		// connection open.
		done := make(chan error, 1)
		go func() { done <- get("/slow") }()
		time.Sleep(20 * time.Second)
		select {
		case <-s.Done():
			t.Fatalf("the server closed the connection %v after the first request, while a request ran", time.Since(start))
		default:
		}
		close(release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		idleFrom := time.Now()
		select {
		case <-s.Done():
		case <-time.After(time.Minute):
			t.Fatal("the server kept an idle connection for a minute (IdleTimeout 10 s)")
		}
		if d := time.Since(idleFrom); d < 9900*time.Millisecond || d > 11*time.Second {
			t.Errorf("the idle connection was closed %v after its last request, want [9.9 s, 11 s] (the server counts from its handler's end, half a round trip earlier)", d)
		}
		var ae *session.ApplicationError
		if err := context.Cause(s.Context()); !errors.As(err, &ae) || ae.Code != session.ApplicationErrorCode(ErrCodeNoError) || !ae.Remote {
			t.Errorf("client saw %v, want the server's H3_NO_ERROR close", err)
		}
	})
}
