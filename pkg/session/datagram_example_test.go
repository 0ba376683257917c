package session_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/mpqsched/mpqsched/pkg/certs"
	"github.com/mpqsched/mpqsched/pkg/emu"
	"github.com/mpqsched/mpqsched/pkg/session"
)

// Application datagrams: the client sends one, the server echoes it. A
// payload above MaxDatagramSize is refused with quic-go's error type.
// Datagrams are unreliable: a real application copes with losing some.
func ExampleSession_SendDatagram() {
	link := emu.LinkConfig{RateBps: 10e6, Delay: 5 * time.Millisecond}
	topo, err := emu.NewTopology(1, emu.PathSpec{Up: link, Down: link})
	if err != nil {
		log.Fatal(err)
	}
	defer topo.Close()
	tlsPair, err := certs.SelfSigned("example.test")
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	// Server: echo every datagram until the session ends.
	ln, err := session.Listen(topo.Server, tlsPair.Server, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ln.Close()
	go func() {
		s, err := ln.Accept(ctx)
		if err != nil {
			return
		}
		for {
			b, err := s.ReceiveDatagram(ctx)
			if err != nil {
				return // the session ended
			}
			s.SendDatagram(append([]byte("echo: "), b...))
		}
	}()

	cli, err := session.Dial(ctx, topo.Clients[0], topo.Server.LocalAddr(), tlsPair.Client, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cli.Close()
	var tooLarge *quic.DatagramTooLargeError
	err = cli.SendDatagram(make([]byte, cli.MaxDatagramSize()+1))
	fmt.Println("too large:", errors.As(err, &tooLarge))

	if err := cli.SendDatagram([]byte("hello")); err != nil {
		log.Fatal(err)
	}
	wait, cancel := context.WithTimeout(ctx, 5*time.Second) // a datagram may be lost
	defer cancel()
	b, err := cli.ReceiveDatagram(wait)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(b))
	// Output:
	// too large: true
	// echo: hello
}
