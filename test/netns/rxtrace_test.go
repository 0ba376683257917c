package netns

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The path-recovery figures of TestOutageRecoveryVsMPTCP come from the
// client namespace's interface counters (rx_bytes of c1, c2, …), sampled
// every rxSampleEvery: the same instrument for kernel MPTCP and multipath
// QUIC, outside both, and blind to neither's bookkeeping. rx_bytes counts
// every frame the interface received, headers and retransmissions
// included; on a download the data dominates (the client's pings, ~40 B
// per 200 ms, and TCP probes are a few hundred bytes per second).
const rxSampleEvery = 10 * time.Millisecond

// rxTrace is a series of cumulative receive counters, one per device.
type rxTrace struct {
	t  []time.Time
	rx [][]uint64 // rx[k][i]: bytes received on device i by t[k]
}

// bytesAt is device i's counter at the last sample at or before at (0
// before the first sample or for a device out of range).
func (tr *rxTrace) bytesAt(i int, at time.Time) uint64 {
	var v uint64
	for k, t := range tr.t {
		if t.After(at) {
			break
		}
		if i >= 0 && i < len(tr.rx[k]) {
			v = tr.rx[k][i]
		}
	}
	return v
}

// rate is device i's mean receive rate over [from, to), bits/s; 0 for an
// empty interval. A counter that went back (a device recreated) counts as 0.
func (tr *rxTrace) rate(i int, from, to time.Time) float64 {
	if !to.After(from) {
		return 0
	}
	a, b := tr.bytesAt(i, from), tr.bytesAt(i, to)
	if b < a {
		return 0
	}
	return float64(b-a) * 8 / to.Sub(from).Seconds()
}

// firstWindow returns how long after back the first window of length w
// starts over which device i receives at least minBytes: windows start at
// back and at every sample after it, and must end by limit. ok is false if
// none does.
func (tr *rxTrace) firstWindow(i int, back, limit time.Time, w time.Duration, minBytes uint64) (time.Duration, bool) {
	starts := []time.Time{back}
	for _, t := range tr.t {
		if t.After(back) {
			starts = append(starts, t)
		}
	}
	for _, s := range starts {
		e := s.Add(w)
		if e.After(limit) {
			break
		}
		if a, b := tr.bytesAt(i, s), tr.bytesAt(i, e); b >= a && b-a >= minBytes {
			return s.Sub(back), true
		}
	}
	return 0, false
}

// firstBytes returns how long after from device i has received minBytes
// since from, at the first sample that shows it, up to limit. ok is false
// if it had not by then.
func (tr *rxTrace) firstBytes(i int, from, limit time.Time, minBytes uint64) (time.Duration, bool) {
	base := tr.bytesAt(i, from)
	for k, t := range tr.t {
		if !t.After(from) || i < 0 || i >= len(tr.rx[k]) {
			continue
		}
		if t.After(limit) {
			break
		}
		if v := tr.rx[k][i]; v >= base && v-base >= minBytes {
			return t.Sub(from), true
		}
	}
	return 0, false
}

// parseNetDev reads the rx_bytes of the named devices from a
// /proc/net/dev listing; a device not listed is an error.
func parseNetDev(r io.Reader, devs []string) ([]uint64, error) {
	found := map[string]uint64{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("rx_bytes of %s: %v", strings.TrimSpace(name), err)
		}
		found[strings.TrimSpace(name)] = v
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	out := make([]uint64, len(devs))
	for i, d := range devs {
		v, ok := found[d]
		if !ok {
			return nil, fmt.Errorf("no device %s in /proc/net/dev", d)
		}
		out[i] = v
	}
	return out, nil
}

// rxSampler samples the devs' counters of one network namespace, read
// through /proc/PID/net/dev of a process that sleeps in it.
type rxSampler struct {
	path string
	devs []string
	stop chan struct{}
	done chan struct{}

	mu  sync.Mutex
	tr  rxTrace
	err error
}

// startRxSampler starts a process that sleeps in namespace ns (killed at
// the test's end) and samples the devs of ns every rxSampleEvery until
// Stop.
func startRxSampler(t *testing.T, ns string, devs []string) *rxSampler {
	t.Helper()
	sl := exec.Command("ip", "netns", "exec", ns, "sleep", "3600")
	if err := sl.Start(); err != nil {
		t.Fatalf("sleeper in %s: %v", ns, err)
	}
	t.Cleanup(func() { _ = sl.Process.Kill(); _ = sl.Wait() })
	s := &rxSampler{path: fmt.Sprintf("/proc/%d/net/dev", sl.Process.Pid), devs: devs, stop: make(chan struct{}), done: make(chan struct{})}
	// `ip netns exec` enters the namespace before it execs sleep: wait
	// until the process sees the devices.
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := s.read(); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("reading %s: %v", s.path, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	go s.run()
	return s
}

func (s *rxSampler) read() ([]uint64, error) {
	f, err := os.Open(s.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseNetDev(f, s.devs)
}

func (s *rxSampler) run() {
	defer close(s.done)
	tk := time.NewTicker(rxSampleEvery)
	defer tk.Stop()
	for {
		v, err := s.read()
		now := time.Now()
		s.mu.Lock()
		if err != nil && s.err == nil {
			s.err = err
		}
		if err == nil {
			s.tr.t = append(s.tr.t, now)
			s.tr.rx = append(s.tr.rx, v)
		}
		s.mu.Unlock()
		select {
		case <-s.stop:
			return
		case <-tk.C:
		}
	}
}

// Stop ends the sampling and returns the samples and the first read error.
func (s *rxSampler) Stop() (*rxTrace, error) {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return &s.tr, s.err
}

// TestParseNetDev reads a /proc/net/dev listing.
func TestParseNetDev(t *testing.T) {
	const listing = `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:       0       0    0    0    0     0          0         0        0       0    0    0    0     0       0          0
    c1: 31415926   2000    0    0    0     0          0         0   123456    1000    0    0    0     0       0          0
    c2:12345678901 9    0    0    0     0          0         0   1 1    0    0    0     0       0          0
`
	got, err := parseNetDev(strings.NewReader(listing), []string{"c2", "c1"})
	if err != nil || len(got) != 2 || got[0] != 12345678901 || got[1] != 31415926 {
		t.Errorf("got %v %v, want [12345678901 31415926]", got, err)
	}
	if _, err := parseNetDev(strings.NewReader(listing), []string{"c3"}); err == nil {
		t.Error("a missing device: no error")
	}
	if _, err := parseNetDev(strings.NewReader("    c1: x 1 2\n"), []string{"c1"}); err == nil {
		t.Error("a bad counter: no error")
	}
}

// TestRxTraceWindows works the recovery figures by hand: device 0 receives
// 2.5 MB/s (20 Mbit/s) until 2 s, nothing until 12 s, 1 kB every 200 ms
// (pings) until 12.5 s, then 125 kB per 10 ms sample (100 Mbit/s).
func TestRxTraceWindows(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	var tr rxTrace
	var v uint64
	for n := 0; n <= 14000; n += 10 {
		switch {
		case n > 0 && n <= 2000:
			v += 25000
		case n > 12000 && n < 12500 && n%200 == 0:
			v += 1000
		case n >= 12500:
			v += 125000
		}
		tr.t = append(tr.t, ms(n))
		tr.rx = append(tr.rx, []uint64{v, 7})
	}
	if got := tr.rate(0, ms(0), ms(2000)); got < 19.99e6 || got > 20.01e6 {
		t.Errorf("pre-outage rate %.0f bit/s, want 20e6", got)
	}
	if got := tr.rate(0, ms(5000), ms(5000)); got != 0 {
		t.Errorf("empty interval: rate %v, want 0", got)
	}
	// 15 kB since the return: the pings bring 2 kB by 12.4 s, the sample
	// of 12.5 s the rest.
	back, limit := ms(12000), ms(14000)
	if got, ok := tr.firstBytes(0, back, limit, 15000); !ok || got != 500*time.Millisecond {
		t.Errorf("data back after %v %v, want 500ms", got, ok)
	}
	if got, ok := tr.firstBytes(0, back, ms(12490), 15000); ok {
		t.Errorf("15 kB found at %v, past the limit", got)
	}
	// The first 100 ms window with 15 kB: pings never make it; the one
	// from 12.40 s to 12.50 s holds the sample of 12.5 s (125 kB).
	if got, ok := tr.firstWindow(0, back, limit, 100*time.Millisecond, 15000); !ok || got != 400*time.Millisecond {
		t.Errorf("first window after %v %v, want 400ms", got, ok)
	}
	// Half the pre-outage rate (10 Mbit/s) over 200 ms is 250 kB: two samples
	// of 125 kB, the second at 12.51 s, so the window starting at 12.31 s.
	if got, ok := tr.firstWindow(0, back, limit, 200*time.Millisecond, 250000); !ok || got != 310*time.Millisecond {
		t.Errorf("recovery after %v %v, want 310ms", got, ok)
	}
	// Windows must end by limit.
	if got, ok := tr.firstWindow(0, back, ms(12400), 100*time.Millisecond, 15000); ok {
		t.Errorf("window past the limit found at %v", got)
	}
	// Device 1 never changes; device 5 does not exist.
	if _, ok := tr.firstWindow(1, back, limit, 100*time.Millisecond, 1); ok {
		t.Error("an idle device carries data")
	}
	if _, ok := tr.firstBytes(1, back, limit, 1); ok {
		t.Error("an idle device receives bytes")
	}
	if got := tr.rate(5, ms(0), ms(2000)); got != 0 {
		t.Errorf("missing device: rate %v, want 0", got)
	}
}

// TestParseNetstat reads TcpExt and Tcp counters from netstat/snmp-style
// pairs of lines, and skips lines that are not such a pair.
func TestParseNetstat(t *testing.T) {
	const listing = `TcpExt: SyncookiesSent TCPTimeouts TCPSackRecovery
TcpExt: 0 7 12
IpExt: InNoRoutes
IpExt: 3
Tcp: RtoAlgorithm RetransSegs
Tcp: 1 99
Udp: InDatagrams
`
	m := parseNetstat(listing)
	for k, want := range map[string]uint64{"TcpExtTCPTimeouts": 7, "TcpExtTCPSackRecovery": 12, "TcpRetransSegs": 99, "IpExtInNoRoutes": 3} {
		if m[k] != want {
			t.Errorf("%s = %d, want %d (all: %v)", k, m[k], want, m)
		}
	}
	if _, ok := m["UdpInDatagrams"]; ok {
		t.Error("a header without values was read")
	}
	a, b := map[string]uint64{"x": 2, "y": 5}, map[string]uint64{"x": 5, "y": 4, "z": 1}
	if got := tcpEvents(a, b, "x", "y", "z"); got != 4 {
		t.Errorf("tcpEvents = %d, want 3 (x) + 0 (y went back) + 1 (z)", got)
	}
}
