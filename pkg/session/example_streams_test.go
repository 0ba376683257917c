package session_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"time"

	"github.com/mpqsched/mpqsched/pkg/certs"
	"github.com/mpqsched/mpqsched/pkg/emu"
	"github.com/mpqsched/mpqsched/pkg/session"
)

// pair dials a one-path session pair over the in-process emulator.
func pair() (cli, srv *session.Session, done func()) {
	link := emu.LinkConfig{RateBps: 50e6, Delay: time.Millisecond}
	topo, err := emu.NewTopology(1, emu.PathSpec{Up: link, Down: link})
	if err != nil {
		log.Fatal(err)
	}
	tlsPair, err := certs.SelfSigned("example.test")
	if err != nil {
		log.Fatal(err)
	}
	ln, err := session.Listen(topo.Server, tlsPair.Server, nil)
	if err != nil {
		log.Fatal(err)
	}
	cli, err = session.Dial(context.Background(), topo.Clients[0], topo.Server.LocalAddr(), tlsPair.Client, nil)
	if err != nil {
		log.Fatal(err)
	}
	if srv, err = ln.Accept(context.Background()); err != nil {
		log.Fatal(err)
	}
	return cli, srv, func() { cli.CloseWithError(0, ""); ln.Close(); topo.Close() }
}

// A unidirectional stream: the client sends, the server receives. Each
// type of stream has its own credit (Config.MaxStreams, MaxUniStreams).
func ExampleSession_OpenUniStream() {
	cli, srv, done := pair()
	defer done()
	ws, err := cli.OpenUniStream()
	if err != nil {
		log.Fatal(err)
	}
	ws.Write([]byte("log line\n"))
	ws.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rs, err := srv.AcceptUniStream(ctx)
	if err != nil {
		log.Fatal(err)
	}
	b, err := io.ReadAll(rs)
	fmt.Printf("stream %d: %q, %v\n", rs.ID(), b, err)
	// Output: stream 2: "log line\n", <nil>
}

// A stream's Context ends with its send side; its cause says why.
func ExampleStream_Context() {
	cli, _, done := pair()
	defer done()
	st, err := cli.OpenStream()
	if err != nil {
		log.Fatal(err)
	}
	ctx := st.Context()
	st.Close()
	<-ctx.Done()
	fmt.Println(errors.Is(context.Cause(ctx), session.ErrStreamClosed))
	// Output: true
}

// A Stream is a net.Conn, so code written for one runs over a session.
func ExampleStream_netConn() {
	cli, _, done := pair()
	defer done()
	st, err := cli.OpenStream()
	if err != nil {
		log.Fatal(err)
	}
	var c net.Conn = st
	c.SetDeadline(time.Now().Add(10 * time.Millisecond))
	_, err = c.Read(make([]byte, 1))
	var ne net.Error
	fmt.Println(c.RemoteAddr() != nil, errors.As(err, &ne) && ne.Timeout())
	// Output: true true
}
