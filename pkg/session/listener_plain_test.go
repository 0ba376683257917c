package session_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/mpqsched/mpqsched/pkg/certs"
	"github.com/mpqsched/mpqsched/pkg/session"
)

// One UDP port for sessions and plain QUIC clients (listener_plain.go,
// dial_plain.go), against real quic-go peers on loopback.

func plainPair(t *testing.T) *certs.Pair {
	t.Helper()
	p, err := certs.SelfSigned("localhost")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func loopbackUDP(t *testing.T) *net.UDPConn {
	t.Helper()
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	return pc
}

// logLines collects a Config.Logf's lines.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logf(format string, args ...any) {
	l.mu.Lock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
	l.mu.Unlock()
}

func (l *logLines) has(sub string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.lines {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// echoPlain answers one bidirectional stream of c with what it read.
func echoPlain(ctx context.Context, c *quic.Conn) error {
	st, err := c.AcceptStream(ctx)
	if err != nil {
		return err
	}
	b, err := io.ReadAll(st)
	if err != nil {
		return err
	}
	_, err = st.Write(b)
	st.Close()
	return err
}

func TestListenerServesPlainALPNOnItsPort(t *testing.T) {
	pair := plainPair(t)
	var logs logLines
	ln, err := session.Listen(loopbackUDP(t), pair.Server, &session.Config{PlainALPNs: []string{"h3"}, Logf: logs.logf})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	// RFC 7301 §3.2: "the server SHALL select the first protocol in the
	// server's list that is also in the client's list": a plain client
	// offering only "h3" gets "h3" ...
	plainTLS := pair.Client.Clone()
	plainTLS.NextProtos = []string{"h3"}
	qc, err := quic.DialAddr(ctx, ln.Addr().String(), plainTLS, nil)
	if err != nil {
		t.Fatalf("a plain client offering h3 was refused: %v", err)
	}
	s, plain, err := ln.AcceptAny(ctx)
	if err != nil || s != nil || plain == nil {
		t.Fatalf("AcceptAny = %v, %v, %v; want a plain connection", s, plain, err)
	}
	if got := plain.ConnectionState().TLS.NegotiatedProtocol; got != "h3" {
		t.Fatalf("plain connection's ALPN %q, want h3", got)
	}
	go echoPlain(ctx, plain)
	st, err := qc.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st.Write([]byte("plain bytes"))
	st.Close()
	if b, err := io.ReadAll(st); err != nil || string(b) != "plain bytes" {
		t.Fatalf("echo over the plain connection: %q, %v", b, err)
	}
	qc.CloseWithError(0, "")

	// ... and a session client gets a session on the same port.
	sess, err := session.DialAddr(ctx, ln.Addr().String(), pair.Client, nil)
	if err != nil {
		t.Fatalf("session on the shared port: %v", err)
	}
	defer sess.Close()
	s, plain, err = ln.AcceptAny(ctx)
	if err != nil || s == nil || plain != nil {
		t.Fatalf("AcceptAny = %v, %v, %v; want a session", s, plain, err)
	}
	if got := sess.ConnectionState().TLS.NegotiatedProtocol; got != session.ALPN {
		t.Fatalf("session's ALPN %q, want %q", got, session.ALPN)
	}

	// A client offering none of them is refused by TLS, and logged.
	other := pair.Client.Clone()
	other.NextProtos = []string{"other/1"}
	if _, err := quic.DialAddr(ctx, ln.Addr().String(), other, nil); err == nil {
		t.Fatal("a client offering only other/1 was served")
	}
	deadline := time.Now().Add(5 * time.Second)
	for !logs.has(`refused a handshake from 127.0.0.1`) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !logs.has(`offered ALPN ["other/1"]`) || ln.RefusedHandshakes() != 1 {
		t.Fatalf("refused handshake not reported: RefusedHandshakes %d, log %q", ln.RefusedHandshakes(), logs.lines)
	}
}

func TestListenerWithoutPlainALPNsRefusesH3(t *testing.T) {
	pair := plainPair(t)
	ln, err := session.Listen(loopbackUDP(t), pair.Server, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	plainTLS := pair.Client.Clone()
	plainTLS.NextProtos = []string{"h3"}
	if _, err := quic.DialAddr(ctx, ln.Addr().String(), plainTLS, nil); err == nil {
		t.Fatal("a Listener without PlainALPNs served an h3 client")
	}
}

func TestListenerPlainCountsAgainstMaxSessions(t *testing.T) {
	pair := plainPair(t)
	ln, err := session.Listen(loopbackUDP(t), pair.Server, &session.Config{PlainALPNs: []string{"h3"}, MaxSessions: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	plainTLS := pair.Client.Clone()
	plainTLS.NextProtos = []string{"h3"}
	first, err := quic.DialAddr(ctx, ln.Addr().String(), plainTLS, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer first.CloseWithError(0, "")
	// The refusal may end the second connection's handshake, or the
	// connection just after it. RFC 9000 §10.2.3: before the handshake is
	// confirmed, an application's close "MUST be replaced by a
	// CONNECTION_CLOSE of type 0x1c" with "the error code APPLICATION_ERROR".
	second, err := quic.DialAddr(ctx, ln.Addr().String(), plainTLS, nil)
	var ae *quic.ApplicationError
	var te *quic.TransportError
	refused := errors.As(err, &ae) || errors.As(err, &te) && te.ErrorCode == quic.ApplicationErrorErrorCode
	switch {
	case err != nil && !refused:
		t.Fatalf("second connection: %v, want the listener's refusal", err)
	case err == nil:
		select {
		case <-second.Context().Done():
		case <-ctx.Done():
			t.Fatal("a second plain connection beyond MaxSessions 1 stayed open")
		}
	}
	if ln.Refused() != 1 {
		t.Fatalf("Refused() = %d, want 1", ln.Refused())
	}
}

func TestPlainALPNsChecked(t *testing.T) {
	pair := plainPair(t)
	for _, bad := range [][]string{{""}, {session.ALPN}, {strings.Repeat("x", 256)}} {
		pc := loopbackUDP(t)
		if ln, err := session.Listen(pc, pair.Server, &session.Config{PlainALPNs: bad}); err == nil {
			ln.Close()
			t.Errorf("Listen accepted PlainALPNs %q", bad)
		}
		pc.Close()
	}
}

// plainServer is a quic-go listener offering only "h3" that counts the
// connections it accepted and echoes one stream on each.
func plainServer(t *testing.T, pair *certs.Pair) (addr net.Addr, accepted func() int) {
	t.Helper()
	srvTLS := pair.Server.Clone()
	srvTLS.NextProtos = []string{"h3"}
	ln, err := quic.Listen(loopbackUDP(t), srvTLS, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var mu sync.Mutex
	n := 0
	go func() {
		for {
			c, err := ln.Accept(context.Background())
			if err != nil {
				return
			}
			mu.Lock()
			n++
			mu.Unlock()
			go echoPlain(context.Background(), c)
		}
	}()
	return ln.Addr(), func() int { mu.Lock(); defer mu.Unlock(); return n }
}

func TestDialAnyFallsBackOnTheSameConnection(t *testing.T) {
	pair := plainPair(t)
	addr, accepted := plainServer(t, pair)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, plain, err := session.DialAny(ctx, loopbackUDP(t), addr, pair.Client, &session.Config{PlainALPNs: []string{"h3"}}, session.PathOptions{})
	if err != nil {
		t.Fatalf("DialAny to a plain h3 server: %v", err)
	}
	if s != nil || plain == nil {
		t.Fatalf("DialAny = %v, %v; want a plain connection", s, plain)
	}
	defer plain.CloseWithError(0, "")
	if got := plain.ConnectionState().TLS.NegotiatedProtocol; got != "h3" {
		t.Fatalf("ALPN %q, want h3", got)
	}
	st, err := plain.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st.Write([]byte("fallback"))
	st.Close()
	if b, err := io.ReadAll(st); err != nil || string(b) != "fallback" {
		t.Fatalf("echo: %q, %v", b, err)
	}
	if n := accepted(); n != 1 {
		t.Fatalf("the server accepted %d connections, want 1 (no second handshake)", n)
	}
}

func TestDialAnyGetsASessionFromAListener(t *testing.T) {
	pair := plainPair(t)
	ln, err := session.Listen(loopbackUDP(t), pair.Server, &session.Config{PlainALPNs: []string{"h3"}})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, plain, err := session.DialAny(ctx, loopbackUDP(t), ln.Addr(), pair.Client, &session.Config{PlainALPNs: []string{"h3"}}, session.PathOptions{})
	if err != nil || s == nil || plain != nil {
		t.Fatalf("DialAny = %v, %v, %v; want a session", s, plain, err)
	}
	defer s.Close()
	// Its joins offer ALPN alone, and join the session on the same port.
	if _, err := s.AddPath(ctx, loopbackUDP(t), ln.Addr(), session.PathOptions{}); err != nil {
		t.Fatalf("join on the shared port: %v", err)
	}
	if n := len(s.Paths()); n != 2 {
		t.Fatalf("%d paths, want 2", n)
	}
}

func TestDialAnyWithoutFallbackIsRefusedByPlainServer(t *testing.T) {
	pair := plainPair(t)
	addr, _ := plainServer(t, pair)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _, err := session.DialAny(ctx, loopbackUDP(t), addr, pair.Client, nil, session.PathOptions{})
	var te *quic.TransportError
	if !errors.As(err, &te) {
		t.Fatalf("DialAny with no PlainALPNs to an h3-only server: %v, want a TLS refusal", err)
	}
}

// DialAddr checks the certificate against the address's host name, not
// the IP address it resolves to.
func TestDialAddrServerNameFromHost(t *testing.T) {
	pair := plainPair(t)
	ln, err := session.Listen(loopbackUDP(t), pair.Server, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cli := pair.Client.Clone()
	cli.ServerName = ""
	port := ln.Addr().(*net.UDPAddr).Port
	s, err := session.DialAddr(ctx, fmt.Sprintf("localhost:%d", port), cli, nil)
	if err != nil {
		t.Fatalf("DialAddr(localhost) with a certificate for localhost: %v", err)
	}
	s.Close()
}
