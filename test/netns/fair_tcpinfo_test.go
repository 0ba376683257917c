package netns

import (
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// The kernel's per-socket state of the TCP senders (what `ss -ti` shows),
// sampled through a sock_diag netlink socket opened inside a server
// namespace: congestion state, window and slow-start threshold every
// tcpInfoEvery. A netlink dump costs tens of microseconds, where running
// ss costs milliseconds of CPU per sample.

const tcpInfoEvery = 20 * time.Millisecond

// tcpSample is one sender socket's state at one instant.
type tcpSample struct {
	t        time.Time
	dst      [4]byte // the client's address
	caState  uint8   // tcpi_ca_state: 0 open, 1 disorder, 2 CWR, 3 recovery, 4 loss
	cwnd     uint32  // segments
	ssthresh uint32  // segments; ≥ 0x7fffffff before the first reduction
	unacked  uint32  // segments in flight
}

// tcpInfoSampler samples the sockets of one namespace whose local port is
// port.
type tcpInfoSampler struct {
	fd   int
	port uint16
	stop chan struct{}
	done chan struct{}

	mu      sync.Mutex
	samples []tcpSample
	err     error
}

// openNetlinkIn opens a NETLINK_SOCK_DIAG socket in the named namespace
// (/run/netns/ns). The socket stays in that namespace whatever thread
// uses it afterwards. The namespace switch runs on a thread of its own,
// which exits instead of returning to the pool if it cannot switch back.
func openNetlinkIn(ns string) (int, error) {
	type res struct {
		fd  int
		err error
	}
	ch := make(chan res, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			ch <- res{-1, err}
			return
		}
		defer orig.Close()
		target, err := os.Open("/run/netns/" + ns)
		if err != nil {
			runtime.UnlockOSThread()
			ch <- res{-1, err}
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			ch <- res{-1, fmt.Errorf("setns %s: %w", ns, err)}
			return
		}
		fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
		if unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread() // else the thread dies with this goroutine
		}
		ch <- res{fd, err}
	}()
	r := <-ch
	return r.fd, r.err
}

// startTCPInfo starts sampling namespace ns's TCP sockets on local port
// port.
func startTCPInfo(ns string, port uint16) (*tcpInfoSampler, error) {
	fd, err := openNetlinkIn(ns)
	if err != nil {
		return nil, err
	}
	tv := unix.NsecToTimeval(int64(time.Second))
	_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	s := &tcpInfoSampler{fd: fd, port: port, stop: make(chan struct{}), done: make(chan struct{})}
	go s.run()
	return s, nil
}

func (s *tcpInfoSampler) run() {
	defer close(s.done)
	defer unix.Close(s.fd)
	tk := time.NewTicker(tcpInfoEvery)
	defer tk.Stop()
	buf := make([]byte, 1<<16)
	for seq := uint32(1); ; seq++ {
		now := time.Now()
		got, err := s.dump(seq, buf, now)
		s.mu.Lock()
		if err != nil && s.err == nil {
			s.err = err
		}
		s.samples = append(s.samples, got...)
		s.mu.Unlock()
		select {
		case <-s.stop:
			return
		case <-tk.C:
		}
	}
}

// Stop ends the sampling and returns the samples and the first error.
func (s *tcpInfoSampler) Stop() ([]tcpSample, error) {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.samples, s.err
}

// Netlink and sock_diag constants (linux/netlink.h, linux/inet_diag.h).
const (
	nlmsgHdrLen     = 16
	inetDiagReqLen  = 56
	inetDiagMsgLen  = 72
	inetDiagInfo    = 2 // INET_DIAG_INFO: the struct tcp_info attribute
	tcpEstablished  = 1
	nlmsgDone       = 3
	nlmsgError      = 2
	tcpInfoMinBytes = 84 // through tcpi_snd_cwnd
)

// dump asks for every established IPv4 TCP socket with tcp_info and
// returns those on the sampler's port.
func (s *tcpInfoSampler) dump(seq uint32, buf []byte, now time.Time) ([]tcpSample, error) {
	req := make([]byte, nlmsgHdrLen+inetDiagReqLen)
	binary.LittleEndian.PutUint32(req[0:], uint32(len(req)))
	binary.LittleEndian.PutUint16(req[4:], unix.SOCK_DIAG_BY_FAMILY)
	binary.LittleEndian.PutUint16(req[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	binary.LittleEndian.PutUint32(req[8:], seq)
	r := req[nlmsgHdrLen:]
	r[0], r[1], r[2] = unix.AF_INET, unix.IPPROTO_TCP, 1<<(inetDiagInfo-1)
	binary.LittleEndian.PutUint32(r[4:], 1<<tcpEstablished)
	if err := unix.Sendto(s.fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return nil, err
	}
	var out []tcpSample
	for {
		n, _, err := unix.Recvfrom(s.fd, buf, 0)
		if err != nil {
			return out, err
		}
		msgs, done, err := parseDiag(buf[:n], s.port, now)
		out = append(out, msgs...)
		if err != nil || done {
			return out, err
		}
	}
}

// parseDiag decodes one netlink datagram of a sock_diag dump: the sockets
// whose local port is port, and whether the dump is done.
func parseDiag(b []byte, port uint16, now time.Time) ([]tcpSample, bool, error) {
	var out []tcpSample
	for len(b) >= nlmsgHdrLen {
		l := int(binary.LittleEndian.Uint32(b[0:]))
		typ := binary.LittleEndian.Uint16(b[4:])
		if l < nlmsgHdrLen || l > len(b) {
			return out, true, fmt.Errorf("netlink: message of %d bytes in %d", l, len(b))
		}
		m := b[nlmsgHdrLen:l]
		switch typ {
		case nlmsgDone:
			return out, true, nil
		case nlmsgError:
			return out, true, fmt.Errorf("netlink: error message")
		case unix.SOCK_DIAG_BY_FAMILY:
			if s, ok := parseDiagMsg(m, port); ok {
				s.t = now
				out = append(out, s)
			}
		}
		adv := (l + 3) &^ 3
		if adv >= len(b) {
			break
		}
		b = b[adv:]
	}
	return out, false, nil
}

// parseDiagMsg decodes one inet_diag_msg with its tcp_info attribute.
func parseDiagMsg(m []byte, port uint16) (tcpSample, bool) {
	var s tcpSample
	if len(m) < inetDiagMsgLen || binary.BigEndian.Uint16(m[4:6]) != port {
		return s, false
	}
	copy(s.dst[:], m[24:28])
	for a := m[inetDiagMsgLen:]; len(a) >= 4; {
		al := int(binary.LittleEndian.Uint16(a[0:]))
		at := binary.LittleEndian.Uint16(a[2:])
		if al < 4 || al > len(a) {
			break
		}
		if at == inetDiagInfo && al-4 >= tcpInfoMinBytes {
			ti := a[4:al]
			s.caState = ti[1]
			s.unacked = binary.LittleEndian.Uint32(ti[24:])
			s.ssthresh = binary.LittleEndian.Uint32(ti[76:])
			s.cwnd = binary.LittleEndian.Uint32(ti[80:])
			return s, true
		}
		adv := (al + 3) &^ 3
		if adv > len(a) {
			break
		}
		a = a[adv:]
	}
	return s, false
}

// tcpShares are a flow's kernel-side shares of the samples in a window:
// in slow start (cwnd below ssthresh), and in recovery or loss.
type tcpShares struct {
	samples   int
	slowStart float64
	recovery  float64
	cwnd      float64 // median window of a socket (a subflow for MPTCP), segments
	cuts      int     // entries into CWR, recovery or loss seen in the window (all sockets): window reductions, at the sampling's resolution
}

// sharesOf measures the samples of sockets whose client address is in
// 10.10.p.0/24 for p in paths, in [from, to).
func sharesOf(ss []tcpSample, paths []int, from, to time.Time) tcpShares {
	var r tcpShares
	var ssN, recN int
	var cw []float64
	prev := map[[4]byte]uint8{}
	for _, s := range ss {
		if s.t.Before(from) || !s.t.Before(to) || s.dst[0] != 10 || s.dst[1] != 10 {
			continue
		}
		in := false
		for _, p := range paths {
			if int(s.dst[2]) == p {
				in = true
			}
		}
		if !in {
			continue
		}
		r.samples++
		if s.cwnd < s.ssthresh {
			ssN++
		}
		if s.caState >= 3 {
			recN++
		}
		if p, ok := prev[s.dst]; ok && p < 2 && s.caState >= 2 {
			r.cuts++
		}
		prev[s.dst] = s.caState
		cw = append(cw, float64(s.cwnd))
	}
	if r.samples > 0 {
		r.slowStart = float64(ssN) / float64(r.samples)
		r.recovery = float64(recN) / float64(r.samples)
		r.cwnd = median(cw)
	}
	return r
}
