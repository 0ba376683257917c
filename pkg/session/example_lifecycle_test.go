package session_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/mpqsched/mpqsched/pkg/certs"
	"github.com/mpqsched/mpqsched/pkg/emu"
	"github.com/mpqsched/mpqsched/pkg/session"
)

// loopback starts a Listener on 127.0.0.1 and dials it, both by address:
// the Listener and the session own their sockets.
func loopback(ctx context.Context) (*session.Listener, *session.Session, *session.Session) {
	pair, err := certs.SelfSigned("localhost")
	if err != nil {
		log.Fatal(err)
	}
	ln, err := session.ListenAddr("127.0.0.1:0", pair.Server, nil)
	if err != nil {
		log.Fatal(err)
	}
	cli, err := session.DialAddr(ctx, ln.Addr().String(), pair.Client, nil)
	if err != nil {
		log.Fatal(err)
	}
	srv, err := ln.Accept(ctx)
	if err != nil {
		log.Fatal(err)
	}
	return ln, cli, srv
}

// DialAddr and ListenAddr make and own their UDP sockets: closing the
// session or the Listener closes them.
func ExampleDialAddr() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pair, err := certs.SelfSigned("localhost")
	if err != nil {
		log.Fatal(err)
	}
	ln, err := session.ListenAddr("127.0.0.1:0", pair.Server, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ln.Close()
	cli, err := session.DialAddr(ctx, ln.Addr().String(), pair.Client, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cli.Close()
	fmt.Println("paths:", len(cli.Paths()))
	// Output: paths: 1
}

// ListenAddr binds its own socket; port 0 picks a free one.
func ExampleListenAddr() {
	pair, err := certs.SelfSigned("localhost")
	if err != nil {
		log.Fatal(err)
	}
	ln, err := session.ListenAddr("127.0.0.1:0", pair.Server, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ln.Close() // closes the socket too
	fmt.Println("listening on an ephemeral port:", ln.Addr().String() != "127.0.0.1:0")
	// Output: listening on an ephemeral port: true
}

// The peer of CloseWithError sees the code and reason as an
// *ApplicationError with Remote set.
func ExampleSession_CloseWithError() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ln, cli, srv := loopback(ctx)
	defer ln.Close()
	cli.CloseWithError(0x2a, "bye")
	<-srv.Done()
	var ae *session.ApplicationError
	if errors.As(srv.Err(), &ae) {
		fmt.Println(ae.Code, ae.Reason, ae.Remote)
	}
	fmt.Println(srv.Err())
	fmt.Println(cli.Err())
	// Output:
	// 42 bye true
	// session: closed by peer: application error 0x2a: bye
	// session: closed: application error 0x2a: bye
}

// Context ends with the session; its cause is why.
func ExampleSession_Context() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ln, cli, srv := loopback(ctx)
	defer ln.Close()
	defer srv.Close()
	cli.Close() // nothing was written: a clean close
	<-cli.Context().Done()
	fmt.Println(context.Cause(cli.Context()))
	<-srv.Done()                           // the peer's clean close
	srv.CloseWithError(7, "shutting down") // after the end: ignored
	fmt.Println(errors.Is(context.Cause(srv.Context()), session.ErrClosed))
	// Output:
	// session: closed
	// true
}

// ConnectionState tells what the first path's TLS handshake established.
func ExampleSession_ConnectionState() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ln, cli, srv := loopback(ctx)
	defer ln.Close()
	defer srv.Close()
	defer cli.Close()
	tls := cli.ConnectionState().TLS
	fmt.Println(tls.NegotiatedProtocol, tls.ServerName, tls.PeerCertificates[0].DNSNames)
	// Output: mpqsched/1 localhost [localhost]
}

// ErrUnacknowledged: the peer closed cleanly before acknowledging all
// this end wrote; Close (and Err, and blocked stream calls) say how much.
func ExampleErrUnacknowledged() {
	upload := func(s *session.Session, data []byte) error {
		st, err := s.OpenStream()
		if err != nil {
			return err
		}
		if _, err := st.Write(data); err != nil {
			return err // ErrUnacknowledged if the peer closed meanwhile
		}
		st.Close()
		if err := s.Close(); errors.Is(err, session.ErrUnacknowledged) {
			return fmt.Errorf("upload incomplete: %w", err) // "... N bytes this end wrote were never acknowledged"
		} else if err != nil {
			return err
		}
		return nil
	}
	_ = upload
}

// An application's close and the session's own errors stay apart: test
// the first with errors.As or errors.Is on an *ApplicationError, the
// others with errors.Is on the Err… variables.
func ExampleApplicationError() {
	var err error = &session.ApplicationError{Code: 3, Reason: "quota", Remote: true}
	fmt.Println(errors.Is(err, &session.ApplicationError{Code: 3, Remote: true}))
	fmt.Println(errors.Is(err, session.ErrProtocol))
	var code session.ApplicationErrorCode = 3
	fmt.Println(err.(*session.ApplicationError).Code == code)
	// Output:
	// true
	// false
	// true
}

// Path events arrive on a channel that never blocks the session.
func ExampleSession_PathEvents() {
	link := emu.LinkConfig{RateBps: 20e6, Delay: 5 * time.Millisecond}
	topo, err := emu.NewTopology(1, emu.PathSpec{Up: link, Down: link}, emu.PathSpec{Up: link, Down: link})
	if err != nil {
		log.Fatal(err)
	}
	defer topo.Close()
	pair, err := certs.SelfSigned("example.test")
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	ln, err := session.Listen(topo.Server, pair.Server, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ln.Close()
	cli, err := session.Dial(ctx, topo.Clients[0], topo.Server.LocalAddr(), pair.Client, nil)
	if err != nil {
		log.Fatal(err)
	}
	events := cli.PathEvents() // from now on
	id, err := cli.AddPath(ctx, topo.Clients[1], topo.Server.LocalAddr(), session.PathOptions{})
	if err != nil {
		log.Fatal(err)
	}
	cli.SetPathStatus(id, session.PathBackup)
	cli.Close()
	for e := range events { // closed when the session has ended
		var kind session.PathEventKind = e.Kind
		fmt.Println(kind, e.Backup)
	}
	// Output:
	// joined false
	// status changed true
	// removed false
	// removed true
}

// PathEventKind names what happened.
func ExamplePathEventKind() {
	for _, k := range []session.PathEventKind{session.PathJoined, session.PathFailed, session.PathRecovered, session.PathRemoved, session.PathStatusChanged} {
		fmt.Println(k)
	}
	// Output:
	// joined
	// failed
	// recovered
	// removed
	// status changed
}

// A PathEvent says which path, where, and when.
func ExamplePathEvent() {
	e := session.PathEvent{Kind: session.PathFailed, Path: 1, Time: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)}
	fmt.Printf("path %d %v at %s\n", e.Path, e.Kind, e.Time.Format(time.TimeOnly))
	// Output: path 1 failed at 12:00:00
}
