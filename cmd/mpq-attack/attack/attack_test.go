package attack

import (
	"errors"
	"net"
	"testing"
	"time"
)

// Targets off this host are refused.
func TestCheckLoopback(t *testing.T) {
	for _, c := range []struct {
		addr *net.UDPAddr
		ok   bool
	}{
		{&net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 4433}, true},
		{&net.UDPAddr{IP: net.IPv6loopback, Port: 4433}, true},
		{&net.UDPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 4433}, false},
		{&net.UDPAddr{IP: net.IPv4(8, 8, 8, 8), Port: 53}, false},
		{nil, false},
	} {
		if err := CheckLoopback(c.addr); (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrNotLoopback)) {
			t.Errorf("%v: %v, want ok %v", c.addr, err, c.ok)
		}
	}
}

// ReadProc reads this process's RSS, threads and CPU time; a Sampler sees
// an allocation of 64 MiB that is touched.
func TestSampler(t *testing.T) {
	p, err := ReadProc(0)
	if err != nil {
		t.Skip("no /proc: " + err.Error())
	}
	if p.RSS <= 0 || p.HWM < p.RSS || p.Threads < 1 || p.CPU < 0 {
		t.Fatalf("implausible reading %+v", p)
	}
	s := Sample(0, 10*time.Millisecond)
	b := make([]byte, 64<<20)
	for i := range b {
		b[i] = byte(i)
	}
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) { // burn a little CPU too
		b[0]++
	}
	u := s.Stop()
	if u.PeakRSS < p.RSS+48<<20 || u.Samples < 2 || u.CPUSeconds < 0.5 || u.PeakGoroutines < 1 {
		t.Errorf("usage %+v after touching 64 MiB and 1 s of CPU (RSS before %d)", u, p.RSS)
	}
	_ = b[len(b)-1]
}
