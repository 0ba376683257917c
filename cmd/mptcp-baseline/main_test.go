package main

import (
	"encoding/binary"
	"io"
	"net"
	"slices"
	"syscall"
	"testing"

	"github.com/mpqsched/mpqsched/pkg/metrics"
)

func TestSockaddrString(t *testing.T) {
	b := make([]byte, 128)
	binary.NativeEndian.PutUint16(b, syscall.AF_INET)
	copy(b[4:8], []byte{10, 10, 2, 2})
	if got := sockaddrString(b); got != "10.10.2.2" {
		t.Errorf("got %q, want 10.10.2.2", got)
	}
	if got := sockaddrString(make([]byte, 128)); got != "" {
		t.Errorf("AF_UNSPEC: got %q", got)
	}
}

// account puts each server subflow's bytes on the path of its client
// address and counts everything beyond one copy of the file as redundant.
func TestAccount(t *testing.T) {
	g := getter{pathAddrs: []string{"10.10.1.2", "10.10.2.2"}}
	res := metrics.Result{Bytes: 1000}
	theirs := []Subflow{
		{Remote: "10.10.2.2", BytesSent: 400, BytesRetrans: 10, TotalRetrans: 1},
		{Remote: "10.10.1.2", BytesSent: 700, BytesRetrans: 30, TotalRetrans: 3},
	}
	mine := []Subflow{{RcvOOOPack: 5}, {RcvOOOPack: 2}}
	g.account(&res, theirs, mine)
	if !slices.Equal(res.PerPathBytes, []uint64{700, 400}) {
		t.Errorf("per path %v, want [700 400]", res.PerPathBytes)
	}
	if res.SentBytes != 1100 || res.RedundantBytes != 100 || res.RetransPackets != 4 {
		t.Errorf("sent %d redundant %d retrans %d, want 1100 100 4", res.SentBytes, res.RedundantBytes, res.RetransPackets)
	}
	if res.Extra["subflow_rcv_ooopack"] != 7 || res.Extra["tcp_retrans_bytes"] != 40 {
		t.Errorf("extra %v", res.Extra)
	}
}

// plainTCP reads a plain TCP connection's own counters: the sender's
// bytes_sent covers what it wrote, the receiver's bytes_received what it
// read, and the addresses are the connection's.
func TestPlainTCP(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	const n = 100000
	got := make(chan Subflow, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- Subflow{}
			return
		}
		defer c.Close()
		io.CopyN(io.Discard, c, n)
		s, _ := plainTCP(c.(*net.TCPConn))
		got <- s
	}()
	c, err := net.Dial("tcp4", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(make([]byte, n)); err != nil {
		t.Fatal(err)
	}
	recv := <-got
	sent, err := plainTCP(c.(*net.TCPConn))
	if err != nil {
		t.Fatal(err)
	}
	if sent.BytesSent < n || sent.Local != "127.0.0.1" || sent.Remote != "127.0.0.1" {
		t.Errorf("sender %+v, want bytes_sent >= %d between 127.0.0.1 and 127.0.0.1", sent, n)
	}
	if recv.BytesReceived < n {
		t.Errorf("receiver %+v, want bytes_received >= %d", recv, n)
	}
}
