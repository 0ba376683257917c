package session

import (
	"errors"
	"net"
	"os"
	"syscall"
	"testing"
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
