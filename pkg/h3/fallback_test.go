package h3

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/mpqsched/mpqsched/pkg/certs"
	"github.com/mpqsched/mpqsched/pkg/session"
)

// One port for every HTTP/3 client, and a client that falls back to plain
// HTTP/3 (issue 31), against real quic-go peers on loopback. The
// certificates name "localhost" only and the client's ServerName is left
// empty: the URL's host must be the name checked.

// localhostPair is a certificate for "localhost" alone, and a client
// config that trusts it with no ServerName.
func localhostPair(t *testing.T) (server, client *tls.Config) {
	t.Helper()
	p, err := certs.SelfSigned("localhost")
	if err != nil {
		t.Fatal(err)
	}
	client = p.Client.Clone()
	client.ServerName = ""
	return p.Server, client
}

// countingListener counts the connections quic-go's http3.Server accepted:
// the handshakes a client made.
type countingListener struct {
	*quic.EarlyListener
	n atomic.Int32
}

func (l *countingListener) Accept(ctx context.Context) (*quic.Conn, error) {
	c, err := l.EarlyListener.Accept(ctx)
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// getBig fetches /big?n= from base and checks the bytes.
func getBig(t *testing.T, c *http.Client, base string, n int) *http.Response {
	t.Helper()
	resp, err := c.Get(base + "/big?n=" + strconv.Itoa(n))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || len(b) != n || sum(b) != sum(pattern(n)) {
		t.Fatalf("GET %s/big: %d bytes (want %d), %v", base, len(b), n, err)
	}
	return resp
}

func TestDialerFallsBackToPlainQuicGoServer(t *testing.T) {
	srvTLS, cliTLS := localhostPair(t)
	ln, err := quic.ListenEarly(udpListen(t), http3.ConfigureTLSConfig(srvTLS), quicConf)
	if err != nil {
		t.Fatal(err)
	}
	cl := &countingListener{EarlyListener: ln}
	srv := &http3.Server{Handler: newTestHandler()}
	go srv.ServeListener(cl)
	t.Cleanup(func() { srv.Close() })

	var mu sync.Mutex
	var events []PathEvent
	d := &Dialer{TLSConfig: cliTLS, OnPath: func(e PathEvent) { mu.Lock(); events = append(events, e); mu.Unlock() }}
	tr := &Transport{Dial: d.Dial}
	defer tr.Close()
	c := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	base := "https://localhost:" + strconv.Itoa(ln.Addr().(*net.UDPAddr).Port)
	resp := getBig(t, c, base, 3_000_000)
	getBig(t, c, base, 1000) // the same connection again

	// RFC 10069 §2: endpoints that do not both negotiate multipath use
	// plain QUIC; here the server chose "h3", and the response says so.
	if got := resp.TLS.NegotiatedProtocol; got != NextProtoH3 {
		t.Fatalf("mode %q, want %q (plain single-path HTTP/3)", got, NextProtoH3)
	}
	// One handshake: the fallback is the connection the first one made.
	if n := cl.n.Load(); n != 1 {
		t.Fatalf("the server accepted %d connections, want 1", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(events) != 1 || events[0].Mode != NextProtoH3 || events[0].Err != nil || events[0].Index != 1 {
		t.Fatalf("path events %v, want one: path 1, plain h3", events)
	}
}

func TestDialerWithoutFallbackIsRefusedByPlainServer(t *testing.T) {
	srvTLS, cliTLS := localhostPair(t)
	pc := udpListen(t)
	srv := &http3.Server{Handler: newTestHandler(), TLSConfig: srvTLS, QUICConfig: quicConf}
	go srv.Serve(pc)
	t.Cleanup(func() { srv.Close() })
	tr := &Transport{Dial: (&Dialer{TLSConfig: cliTLS, NoFallback: true}).Dial}
	defer tr.Close()
	c := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	if resp, err := c.Get("https://localhost:" + strconv.Itoa(pc.LocalAddr().(*net.UDPAddr).Port) + "/hello"); err == nil {
		resp.Body.Close()
		t.Fatal("a session-only dialer reached a plain HTTP/3 server")
	}
}

// onePort is a session listener that also serves plain HTTP/3, with this
// package's Server and the multipath advertisement, as mpquic-server runs.
func onePort(t *testing.T, srvTLS *tls.Config) (port int) {
	t.Helper()
	ln, err := session.ListenAddr("127.0.0.1:0", srvTLS, &session.Config{PlainALPNs: []string{NextProtoH3}})
	if err != nil {
		t.Fatal(err)
	}
	srv := &Server{Handler: AdvertiseMultipath(newTestHandler())}
	go srv.Serve(SessionListener(ln))
	t.Cleanup(func() { srv.Close(); ln.Close() })
	return ln.Addr().(*net.UDPAddr).Port
}

func TestOnePortServesQuicGoClientAndSessions(t *testing.T) {
	srvTLS, cliTLS := localhostPair(t)
	port := onePort(t, srvTLS)
	base := "https://localhost:" + strconv.Itoa(port)

	// quic-go's own HTTP/3 client, offering only "h3".
	qtr := &http3.Transport{TLSClientConfig: cliTLS, QUICConfig: quicConf}
	defer qtr.Close()
	resp := getBig(t, &http.Client{Transport: qtr, Timeout: 30 * time.Second}, base, 2_000_000)
	if got := resp.TLS.NegotiatedProtocol; got != NextProtoH3 {
		t.Fatalf("quic-go client's mode %q, want h3", got)
	}
	// RFC 7838 §3: "An alternative service can be used to access the
	// origin's resources": the session protocol, on this port.
	if got, want := resp.Header.Get("Alt-Svc"), `mpqsched%2F1=":`+strconv.Itoa(port)+`"; ma=86400`; got != want {
		t.Fatalf("Alt-Svc %q, want %q", got, want)
	}

	// A two-path session client on the same port, whose ServerName comes
	// from the URL.
	var mu sync.Mutex
	var events []PathEvent
	var sessions []*session.Session
	d := &Dialer{TLSConfig: cliTLS, LocalAddrs: []string{"127.0.0.1", "127.0.0.2"},
		OnPath:    func(e PathEvent) { mu.Lock(); events = append(events, e); mu.Unlock() },
		OnSession: func(s *session.Session) { mu.Lock(); sessions = append(sessions, s); mu.Unlock() }}
	tr := &Transport{Dial: d.Dial}
	defer tr.Close()
	resp = getBig(t, &http.Client{Transport: tr, Timeout: 30 * time.Second}, base, 2_000_000)
	if got := resp.TLS.NegotiatedProtocol; got != session.ALPN {
		t.Fatalf("session client's mode %q, want %q", got, session.ALPN)
	}
	if got := resp.Header.Get("Alt-Svc"); got != "" {
		t.Fatalf("a session's response carries Alt-Svc %q", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(events) != 2 || events[0].Err != nil || events[1].Err != nil || events[1].Index != 2 || events[1].Path == events[0].Path {
		t.Fatalf("path events %v, want paths 1 and 2 joined", events)
	}
	if len(sessions) != 1 || len(sessions[0].Paths()) != 2 {
		t.Fatalf("OnSession got %d sessions, want 1 of 2 paths", len(sessions))
	}
}

func TestDialerReportsAPathThatDidNotJoin(t *testing.T) {
	srvTLS, cliTLS := localhostPair(t)
	port := onePort(t, srvTLS)
	var events []PathEvent
	// 192.0.2.1 (TEST-NET-1, RFC 5737) is no address of this host: its
	// socket cannot be bound.
	d := &Dialer{TLSConfig: cliTLS, LocalAddrs: []string{"127.0.0.1", "192.0.2.1"},
		OnPath: func(e PathEvent) { events = append(events, e) }}
	tr := &Transport{Dial: d.Dial}
	defer tr.Close()
	resp := getBig(t, &http.Client{Transport: tr, Timeout: 30 * time.Second}, "https://localhost:"+strconv.Itoa(port), 1000)
	if got := resp.TLS.NegotiatedProtocol; got != session.ALPN {
		t.Fatalf("mode %q, want %q", got, session.ALPN)
	}
	if len(events) != 2 || events[0].Err != nil || events[1].Err == nil || events[1].Index != 2 {
		t.Fatalf("path events %v, want path 2 reported as not used", events)
	}
	t.Logf("%v", events[1])
}

func TestTransportCloseEndsItsConnections(t *testing.T) {
	srvTLS, cliTLS := localhostPair(t)
	port := onePort(t, srvTLS)
	tr := &Transport{Dial: SessionDialer(cliTLS, nil)}
	getBig(t, &http.Client{Transport: tr, Timeout: 30 * time.Second}, "https://localhost:"+strconv.Itoa(port), 1000)
	tr.mu.Lock()
	var conns []*clientConn
	for _, cc := range tr.conns {
		conns = append(conns, cc)
	}
	tr.mu.Unlock()
	if len(conns) != 1 {
		t.Fatalf("%d connections kept, want 1", len(conns))
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-conns[0].h.c.Context().Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the connection is still open after Transport.Close")
	}
}
