package session_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log"
	"time"

	"github.com/mpqsched/mpqsched/pkg/certs"
	"github.com/mpqsched/mpqsched/pkg/emu"
	"github.com/mpqsched/mpqsched/pkg/session"
	_ "github.com/mpqsched/mpqsched/sched/blest" // registers "blest"
)

// A two-path download with the BLEST scheduler over the in-process emulator
// (Wi-Fi-like 20 Mbit/s, 10 ms RTT and LTE-like 10 Mbit/s, 40 ms RTT). With
// real networks, pass *net.UDPConn endpoints bound to each interface instead.
func Example() {
	wifi := emu.LinkConfig{RateBps: 20e6, Delay: 5 * time.Millisecond}
	lte := emu.LinkConfig{RateBps: 10e6, Delay: 20 * time.Millisecond}
	topo, err := emu.NewTopology(1, emu.PathSpec{Up: wifi, Down: wifi}, emu.PathSpec{Up: lte, Down: lte})
	if err != nil {
		log.Fatal(err)
	}
	defer topo.Close()
	tlsPair, err := certs.SelfSigned("example.test") // the client pins this certificate
	if err != nil {
		log.Fatal(err)
	}
	cfg := &session.Config{Scheduler: "blest"}
	ctx := context.Background()

	// Server: accept a session and send 1 MB on the first stream it opens.
	ln, err := session.Listen(topo.Server, tlsPair.Server, cfg)
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

	// Client: dial on the first path, join the second, request and read.
	cli, err := session.Dial(ctx, topo.Clients[0], topo.Server.LocalAddr(), tlsPair.Client, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer cli.Close()
	if _, err := cli.AddPath(ctx, topo.Clients[1], topo.Server.LocalAddr(), session.PathOptions{}); err != nil {
		log.Fatal(err)
	}
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
	fmt.Printf("received %d bytes over %d paths, intact: %v\n", n, len(cli.Paths()), [32]byte(h.Sum(nil)) == sha256.Sum256(data))
	// Output: received 1048576 bytes over 2 paths, intact: true
}
