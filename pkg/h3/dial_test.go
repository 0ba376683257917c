package h3

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/pkg/certs"
	"github.com/mpqsched/mpqsched/pkg/session"
)

// SessionDialer with two local addresses on loopback gives the Transport a
// session of two paths, and the request goes through it.
func TestSessionDialerTwoLocalAddresses(t *testing.T) {
	pair, err := certs.SelfSigned("mp.test")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := session.ListenAddr("127.0.0.1:0", pair.Server, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := &Server{Handler: newTestHandler()}
	go srv.Serve(SessionListener(ln))
	defer srv.Close()
	defer ln.Close()

	tr := &Transport{Dial: SessionDialer(pair.Client, nil, "127.0.0.1", "127.0.0.2")}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	resp, err := c.Get("https://" + ln.Addr().String() + "/big?n=2000000")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || len(b) != 2000000 || sum(b) != sum(pattern(2000000)) {
		t.Fatalf("GET: %d bytes, %v", len(b), err)
	}
	tr.mu.Lock()
	cc := tr.conns[authorityOf(resp.Request)]
	tr.mu.Unlock()
	if cc == nil {
		t.Fatal("no connection kept for the authority")
	}
	if n := len(cc.h.c.(sessionConn).s.Paths()); n != 2 {
		t.Fatalf("the session has %d paths, want 2", n)
	}
}
