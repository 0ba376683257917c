package session_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log"
	"net"
	"time"

	"github.com/mpqsched/mpqsched/pkg/certs"
	"github.com/mpqsched/mpqsched/pkg/session"
	_ "github.com/mpqsched/mpqsched/sched/minrtt" // registers "minrtt", the default
)

// A two-path download over real UDP sockets on 127.0.0.1, with real TLS
// verification: the client trusts only the server's certificate and checks
// its name (no InsecureSkipVerify anywhere). On real networks, bind each
// client socket to one interface's address (Wi-Fi, LTE) instead; the
// server's address stays the same for every path.
func Example_udp() {
	pair, err := certs.SelfSigned("localhost") // pair.Client pins pair.Server's certificate for "localhost"
	if err != nil {
		log.Fatal(err)
	}
	listen := func() *net.UDPConn {
		pc, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			log.Fatal(err)
		}
		return pc
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // bounds the handshakes
	defer cancel()

	// Server: one socket for every path; it sends 1 MiB on the first stream.
	ln, err := session.Listen(listen(), pair.Server, nil) // the Listener owns the socket
	if err != nil {
		log.Fatal(err)
	}
	defer ln.Close()
	data := make([]byte, 1<<20)
	go func() {
		s, err := ln.Accept(ctx)
		if err != nil {
			return
		}
		st, err := s.AcceptStream(ctx)
		if err != nil {
			return
		}
		io.CopyN(io.Discard, st, 4) // the request
		st.Write(data)
		st.Close()
		s.Close() // waits until the client acknowledged everything
	}()

	// A client that pins another certificate is refused by its own TLS
	// verification.
	stranger, err := certs.SelfSigned("localhost")
	if err != nil {
		log.Fatal(err)
	}
	_, err = session.Dial(ctx, listen(), ln.Addr(), stranger.Client, nil)
	fmt.Println("unpinned certificate refused:", err != nil)

	// Client: the first path carries the handshake, the second joins.
	cli, err := session.Dial(ctx, listen(), ln.Addr(), pair.Client, nil) // owns its socket
	if err != nil {
		log.Fatal(err)
	}
	defer cli.Close()
	if _, err := cli.AddPath(ctx, listen(), ln.Addr(), session.PathOptions{}); err != nil {
		log.Fatal(err)
	}
	paths := len(cli.Paths()) // before the server ends the session
	st, err := cli.OpenStream()
	if err != nil {
		log.Fatal(err)
	}
	st.Write([]byte("GET\n"))
	h := sha256.New()
	n, err := io.Copy(h, st)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("received %d bytes over %d paths, intact: %v\n", n, paths, [32]byte(h.Sum(nil)) == sha256.Sum256(data))
	// Output:
	// unpinned certificate refused: true
	// received 1048576 bytes over 2 paths, intact: true
}
