// Command twopaths is the README's session API program: a server and a
// client in one process, a two-path session over UDP on 127.0.0.1 with
// verified TLS, a 4 MiB download scheduled by BLEST, and what each path
// received.
//
//	go run ./examples/twopaths
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"time"

	"github.com/mpqsched/mpqsched/pkg/certs"
	"github.com/mpqsched/mpqsched/pkg/session"
	_ "github.com/mpqsched/mpqsched/sched/all" // registers every scheduler
)

func main() { run(os.Stdout, 4<<20) }

// run downloads size bytes over two paths and prints the outcome to w.
func run(w io.Writer, size int) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // bounds the handshakes
	defer cancel()
	pair := must(certs.SelfSigned("localhost")) // pair.Client trusts exactly pair.Server's certificate
	udp := func() *net.UDPConn { return must(net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})) }

	// Server: one socket for every path. The sender's scheduler decides
	// where a download's data goes.
	ln := must(session.Listen(udp(), pair.Server, &session.Config{Scheduler: "blest"}))
	defer ln.Close()
	go func() {
		s := must(ln.Accept(ctx))
		st := must(s.AcceptStream(ctx)) // the peer's streams, in ID order
		io.CopyN(io.Discard, st, 4)     // the request
		st.Write(make([]byte, size))
		st.Close()
		s.Close() // returns once the client has every byte
	}()

	// Client: the first path carries the handshakes, the second joins.
	cli := must(session.Dial(ctx, udp(), ln.Addr(), pair.Client, nil))
	defer cli.Close()
	must(cli.AddPath(ctx, udp(), ln.Addr(), session.PathOptions{}))
	st := must(cli.OpenStreamSync(ctx)) // an io.ReadWriteCloser
	must(st.Write([]byte("GET\n")))
	n := must(io.Copy(io.Discard, st)) // to io.EOF
	fmt.Fprintf(w, "received %d bytes\n", n)
	for _, p := range cli.Stats().Paths {
		fmt.Fprintf(w, "path %d: %d bytes received\n", p.ID, p.BytesReceived)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		log.Fatal(err)
	}
	return v
}
