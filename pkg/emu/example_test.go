package emu_test

import (
	"fmt"
	"net"
	"time"

	"github.com/mpqsched/mpqsched/pkg/emu"
)

// Two paths to one server: a fast Wi-Fi-like one and a slower cellular one
// that hands off between 5 s and 8 s. Run this inside synctest.Test to get
// virtual time.
func ExampleNewTopology() {
	wifi := emu.LinkConfig{RateBps: 50e6, Delay: 5 * time.Millisecond}
	lte := emu.LinkConfig{RateBps: 10e6, Delay: 30 * time.Millisecond, Loss: 0.001}
	lte.Schedule = emu.Handoff(5*time.Second, 8*time.Second, lte, time.Second)
	topo, err := emu.NewTopology(1, emu.PathSpec{Up: wifi, Down: wifi}, emu.PathSpec{Up: lte, Down: lte})
	if err != nil {
		panic(err)
	}
	defer topo.Close()

	// Any net.PacketConn user works, e.g. quic.Transport{Conn: topo.Clients[0]}.
	topo.Clients[0].WriteTo([]byte("hello"), net.UDPAddrFromAddrPort(topo.ServerAddr))
	buf := make([]byte, 1500)
	n, from, _ := topo.Server.ReadFrom(buf)
	fmt.Printf("%s from %v\n", buf[:n], from)
	// Output: hello from 10.0.1.2:5000
}
