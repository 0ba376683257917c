package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

// Kernel MPTCP socket options (include/uapi/linux/mptcp.h).
const (
	solMPTCP          = 284 // SOL_MPTCP
	mptcpTCPInfo      = 2   // MPTCP_TCPINFO: struct mptcp_subflow_data + one struct tcp_info per subflow
	mptcpSubflowAddrs = 3   // MPTCP_SUBFLOW_ADDRS: struct mptcp_subflow_data + one struct mptcp_subflow_addrs per subflow

	subflowDataLen = 16  // sizeof(struct mptcp_subflow_data), bytes
	tcpInfoLen     = 232 // bytes of struct tcp_info we ask for (through tcpi_snd_wnd)
	addrsLen       = 256 // sizeof(struct mptcp_subflow_addrs): two sockaddr_storage
	maxSubflows    = 16
)

// Offsets in struct tcp_info (include/uapi/linux/tcp.h), bytes.
const (
	offTotalRetrans  = 100 // __u32 tcpi_total_retrans: segments retransmitted
	offBytesAcked    = 120 // __u64 tcpi_bytes_acked
	offBytesReceived = 128 // __u64 tcpi_bytes_received
	offBytesSent     = 200 // __u64 tcpi_bytes_sent: payload bytes sent, retransmissions included
	offBytesRetrans  = 208 // __u64 tcpi_bytes_retrans
	offRcvOOOPack    = 224 // __u32 tcpi_rcv_ooopack: out-of-order packets received on the subflow
)

// Subflow is one MPTCP subflow's counters, as read from the kernel.
type Subflow struct {
	Local         string `json:"local"`          // local address
	Remote        string `json:"remote"`         // remote address
	BytesSent     uint64 `json:"bytes_sent"`     // TCP payload bytes sent, retransmissions included
	BytesRetrans  uint64 `json:"bytes_retrans"`  // TCP payload bytes retransmitted
	BytesAcked    uint64 `json:"bytes_acked"`    // bytes acknowledged by the peer
	BytesReceived uint64 `json:"bytes_received"` // TCP payload bytes received
	TotalRetrans  uint32 `json:"total_retrans"`  // segments retransmitted
	RcvOOOPack    uint32 `json:"rcv_ooopack"`    // out-of-order packets received on this subflow
}

// subflows reads the per-subflow tcp_info and addresses of an MPTCP socket.
// It fails if the connection fell back to plain TCP.
func subflows(c *net.TCPConn) ([]Subflow, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	var infos, addrs []byte
	var n1, n2 int
	var e1, e2 error
	if err := rc.Control(func(fd uintptr) {
		infos, n1, e1 = getSubflowData(int(fd), mptcpTCPInfo, tcpInfoLen)
		addrs, n2, e2 = getSubflowData(int(fd), mptcpSubflowAddrs, addrsLen)
	}); err != nil {
		return nil, err
	}
	if e1 != nil {
		return nil, fmt.Errorf("MPTCP_TCPINFO: %w", e1)
	}
	var out []Subflow
	for i := 0; i < n1; i++ {
		s := fromTCPInfo(infos[subflowDataLen+i*tcpInfoLen:])
		if e2 == nil && i < n2 && n1 == n2 {
			a := addrs[subflowDataLen+i*addrsLen:]
			s.Local = sockaddrString(a[:128])
			s.Remote = sockaddrString(a[128:256])
		}
		out = append(out, s)
	}
	return out, nil
}

// fromTCPInfo reads the counters of a struct tcp_info (tcpInfoLen bytes).
func fromTCPInfo(ti []byte) Subflow {
	return Subflow{
		TotalRetrans:  binary.NativeEndian.Uint32(ti[offTotalRetrans:]),
		BytesAcked:    binary.NativeEndian.Uint64(ti[offBytesAcked:]),
		BytesReceived: binary.NativeEndian.Uint64(ti[offBytesReceived:]),
		BytesSent:     binary.NativeEndian.Uint64(ti[offBytesSent:]),
		BytesRetrans:  binary.NativeEndian.Uint64(ti[offBytesRetrans:]),
		RcvOOOPack:    binary.NativeEndian.Uint32(ti[offRcvOOOPack:]),
	}
}

// plainTCP reads the tcp_info counters of a plain TCP connection (one that
// is not MPTCP, as get -tcp makes) as a single subflow.
func plainTCP(c *net.TCPConn) (Subflow, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return Subflow{}, err
	}
	buf := make([]byte, tcpInfoLen)
	var e syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		l := uint32(len(buf))
		_, _, e = syscall.Syscall6(syscall.SYS_GETSOCKOPT, fd, syscall.IPPROTO_TCP, syscall.TCP_INFO,
			uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&l)), 0)
	}); err != nil {
		return Subflow{}, err
	}
	if e != 0 {
		return Subflow{}, fmt.Errorf("TCP_INFO: %w", e)
	}
	s := fromTCPInfo(buf)
	if a, ok := c.LocalAddr().(*net.TCPAddr); ok {
		s.Local = a.IP.String()
	}
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		s.Remote = a.IP.String()
	}
	return s, nil
}

// getSubflowData issues one SOL_MPTCP getsockopt whose answer is a struct
// mptcp_subflow_data header followed by elements of elemLen bytes.
func getSubflowData(fd, opt, elemLen int) ([]byte, int, error) {
	buf := make([]byte, subflowDataLen+maxSubflows*elemLen)
	binary.NativeEndian.PutUint32(buf[0:], subflowDataLen)   // size_subflow_data
	binary.NativeEndian.PutUint32(buf[12:], uint32(elemLen)) // size_user
	l := uint32(len(buf))
	_, _, e := syscall.Syscall6(syscall.SYS_GETSOCKOPT, uintptr(fd), solMPTCP, uintptr(opt),
		uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&l)), 0)
	if e != 0 {
		return nil, 0, e
	}
	n := int(binary.NativeEndian.Uint32(buf[4:])) // num_subflows
	if n > maxSubflows {
		n = maxSubflows
	}
	if sz := int(binary.NativeEndian.Uint32(buf[12:])); sz != elemLen {
		return nil, 0, fmt.Errorf("kernel element size %d, want %d", sz, elemLen)
	}
	return buf, n, nil
}

// sockaddrString formats a struct sockaddr_in or sockaddr_in6 (address only).
func sockaddrString(b []byte) string {
	switch binary.NativeEndian.Uint16(b) {
	case syscall.AF_INET:
		return netip.AddrFrom4([4]byte(b[4:8])).String()
	case syscall.AF_INET6:
		return netip.AddrFrom16([16]byte(b[8:24])).Unmap().String()
	}
	return ""
}

// mptcpOFOQueue reads MPTcpExtOFOQueue (packets put in the MPTCP-level
// out-of-order queue) from /proc/net/netstat of this network namespace.
func mptcpOFOQueue() (uint64, bool) {
	f, err := os.Open("/proc/net/netstat")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	var names []string
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || fields[0] != "MPTcpExt:" {
			continue
		}
		if names == nil {
			names = fields
			continue
		}
		for i, n := range names {
			if n == "OFOQueue" && i < len(fields) {
				v, err := strconv.ParseUint(fields[i], 10, 64)
				return v, err == nil
			}
		}
	}
	return 0, false
}
