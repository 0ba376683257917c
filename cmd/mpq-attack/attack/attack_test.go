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
	// Burn a little CPU too: 0.6 s of this process's CPU time, not of the
	// wall clock, which other work on a loaded machine shares (the wall
	// clock version failed with 0.48 s of CPU in 1 s while other tests ran
	// on the 2 cores); at most 20 s.
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; time.Now().Before(deadline); i++ {
		b[0]++
		if i%(1<<20) == 0 {
			if q, err := ReadProc(0); err == nil && q.CPU-p.CPU >= 0.6 {
				break
			}
		}
	}
	u := s.Stop()
	if u.PeakRSS < p.RSS+48<<20 || u.Samples < 2 || u.CPUSeconds < 0.5 || u.PeakGoroutines < 1 {
		t.Errorf("usage %+v after touching 64 MiB and 0.6 s of CPU (RSS before %d)", u, p.RSS)
	}
	_ = b[len(b)-1]
}
