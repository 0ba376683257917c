package session

import (
	"errors"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/mpqsched/mpqsched/pkg/certs"
)

// The errors of a send through a vanished interface or route are an outage;
// anything else still ends the path.
func TestTransientSendErrors(t *testing.T) {
	wrap := func(e syscall.Errno) error {
		return &net.OpError{Op: "write", Net: "udp", Err: os.NewSyscallError("sendmsg", e)}
	}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{wrap(syscall.ENETUNREACH), true},
		{wrap(syscall.EHOSTUNREACH), true},
		{wrap(syscall.ENETDOWN), true},
		{wrap(syscall.EADDRNOTAVAIL), true},
		{wrap(syscall.EBADF), false},
		{wrap(syscall.EMSGSIZE), false},
		{errors.New("other"), false},
		{nil, false},
	} {
		if got := transientSendErr(tc.err); got != tc.want {
			t.Errorf("%v: %v, want %v", tc.err, got, tc.want)
		}
	}
	u, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	if _, ok := tolerateUnreachable(u).(unreachableTolerant); !ok {
		t.Error("a UDP socket is not wrapped")
	}
}

// Issue 31, item 6: "the server dropped the path for good on sendmsg:
// network is unreachable". The Listener's socket tolerates those errors
// as the client's do.
func TestListenerToleratesUnreachable(t *testing.T) {
	u, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	pair, err := certs.SelfSigned("localhost")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := Listen(u, pair.Server, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if _, ok := ln.tr.Conn.(unreachableTolerant); !ok {
		t.Fatalf("the Listener's socket is a %T, not tolerant of unreachable routes", ln.tr.Conn)
	}
}

// A swallowed send error is noted by destination, an IPv4-mapped address
// as the plain one; a nil sendErrs notes nothing.
func TestSendErrsNoted(t *testing.T) {
	var e sendErrs
	a := &net.UDPAddr{IP: net.IPv4(10, 10, 2, 2), Port: 4000}
	mapped := &net.UDPAddr{IP: net.ParseIP("::ffff:10.10.2.2"), Port: 4000}
	other := &net.UDPAddr{IP: net.IPv4(10, 10, 1, 2), Port: 4000}
	if !e.lastAt(a).IsZero() {
		t.Fatal("an error before any send")
	}
	e.note(mapped)
	if e.lastAt(a).IsZero() || !e.lastAt(other).IsZero() {
		t.Fatalf("lastAt(%v) = %v, lastAt(%v) = %v: want only the first noted", a, e.lastAt(a), other, e.lastAt(other))
	}
	var none *sendErrs
	none.note(a)
	if !none.lastAt(a).IsZero() {
		t.Fatal("a nil sendErrs noted an error")
	}
	e.note(&net.IPAddr{IP: net.IPv4(10, 10, 2, 2)}) // not UDP: ignored, no panic
}
