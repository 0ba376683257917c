package main

import (
	"encoding/binary"
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
