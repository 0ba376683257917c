//go:build linux

package nfq

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"
)

const (
	netlinkNetfilter = 12 // NETLINK_NETFILTER
	solNetlink       = 270
	netlinkNoENOBUFS = 5 // NETLINK_NO_ENOBUFS
	soRcvbufForce    = 33
)

// Conn is a NETLINK_NETFILTER socket bound to one NFQUEUE queue. Recv and
// SendVerdicts may be called from different goroutines.
type Conn struct {
	fd    int
	queue uint16
	f     *os.File        // fd wrapped for Go's poller, set once configured
	rc    syscall.RawConn // f's raw connection: reads and writes park in the poller, not in a blocking syscall

	mu  sync.Mutex // serialises writes and seq
	seq uint32
	buf []byte
}

// Options configure Open.
type Options struct {
	Mode      CopyMode // how much of each packet to copy; CopyMeta for a delay emulator
	CopyRange uint32   // payload bytes to copy with CopyPacket
	MaxLen    uint32   // kernel queue length, packets; 0 keeps the kernel default (1024)
	RcvBuf    int      // socket receive buffer, bytes; 0 means 8 MiB
}

// Open creates a netlink socket in the calling thread's network namespace
// and binds it to queue. It needs CAP_NET_ADMIN.
func Open(queue uint16, o Options) (*Conn, error) {
	fd, err := syscall.Socket(syscall.AF_NETLINK, syscall.SOCK_RAW|syscall.SOCK_CLOEXEC, netlinkNetfilter)
	if err != nil {
		return nil, fmt.Errorf("nfq: socket: %w", err)
	}
	c := &Conn{fd: fd, queue: queue}
	if err := syscall.Bind(fd, &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK}); err != nil {
		c.Close()
		return nil, fmt.Errorf("nfq: bind: %w", err)
	}
	rcv := o.RcvBuf
	if rcv == 0 {
		rcv = 8 << 20
	}
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, soRcvbufForce, rcv); err != nil {
		_ = syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcv)
	}
	_ = syscall.SetsockoptInt(fd, solNetlink, netlinkNoENOBUFS, 1)

	if err := c.request(func(b []byte, seq uint32) []byte { return AppendConfigCmd(b, seq, queue, true) }); err != nil {
		c.Close()
		return nil, fmt.Errorf("nfq: bind queue %d: %w", queue, err)
	}
	if err := c.request(func(b []byte, seq uint32) []byte {
		return AppendConfigParams(b, seq, queue, o.Mode, o.CopyRange, o.MaxLen)
	}); err != nil {
		c.Close()
		return nil, fmt.Errorf("nfq: configure queue %d: %w", queue, err)
	}
	// From here on the socket is non-blocking and served by the runtime
	// poller, so a goroutine waiting for packets holds no thread and timers
	// of other goroutines fire on time.
	if err := syscall.SetNonblock(fd, true); err != nil {
		c.Close()
		return nil, err
	}
	c.f = os.NewFile(uintptr(fd), "nfqueue")
	rc, err := c.f.SyscallConn()
	if err != nil {
		c.Close()
		return nil, err
	}
	c.rc = rc
	return c, nil
}

// request sends one message built by build and waits for its
// acknowledgement. Queued packets that arrive meanwhile are rejected with
// errPending: Open runs before any packet can be queued to this socket.
func (c *Conn) request(build func([]byte, uint32) []byte) error {
	c.mu.Lock()
	c.seq++
	seq := c.seq
	msg := build(nil, seq)
	c.mu.Unlock()
	if err := syscall.Sendto(c.fd, msg, 0, &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK}); err != nil {
		return err
	}
	buf := make([]byte, 8192)
	deadline := time.Now().Add(2 * time.Second)
	tv := syscall.NsecToTimeval(int64(2 * time.Second))
	_ = syscall.SetsockoptTimeval(c.fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv)
	defer func() {
		var zero syscall.Timeval
		_ = syscall.SetsockoptTimeval(c.fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &zero)
	}()
	for time.Now().Before(deadline) {
		n, _, err := syscall.Recvfrom(c.fd, buf, 0)
		if err != nil {
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			return err
		}
		msgs, err := Parse(buf[:n])
		if err != nil {
			return err
		}
		for _, m := range msgs {
			if m.Seq != seq {
				continue
			}
			if m.Err != nil {
				return m.Err
			}
			if m.IsAck {
				return nil
			}
		}
	}
	return errors.New("no acknowledgement from the kernel")
}

// Recv blocks until the kernel delivers one datagram and returns the packets
// in it, appended to dst. Kernel errors for earlier verdicts are returned as
// *KernelError.
func (c *Conn) Recv(dst []Packet, buf []byte) ([]Packet, error) {
	for {
		var n int
		var rerr error
		err := c.rc.Read(func(fd uintptr) bool {
			n, _, rerr = syscall.Recvfrom(int(fd), buf, 0)
			return rerr != syscall.EAGAIN
		})
		if err == nil {
			err = rerr
		}
		if err != nil {
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			return dst, err
		}
		msgs, err := Parse(buf[:n])
		for _, m := range msgs {
			if m.Packet != nil {
				dst = append(dst, *m.Packet)
			} else if m.Err != nil && err == nil {
				err = m.Err
			}
		}
		return dst, err
	}
}

// maxBatch bounds the verdicts sent in one write, so a write stays well
// under the socket send buffer.
const maxBatch = 512

// SendVerdicts sends verdict v for every id in ids, batching up to maxBatch
// verdicts per write.
func (c *Conn) SendVerdicts(ids []uint32, v Verdict) error {
	for len(ids) > maxBatch {
		if err := c.sendVerdicts(ids[:maxBatch], v); err != nil {
			return err
		}
		ids = ids[maxBatch:]
	}
	return c.sendVerdicts(ids, v)
}

func (c *Conn) sendVerdicts(ids []uint32, v Verdict) error {
	if len(ids) == 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.buf[:0]
	for _, id := range ids {
		c.seq++
		b = AppendVerdict(b, c.seq, c.queue, id, v)
	}
	c.buf = b
	return c.send(b)
}

// send writes one datagram to the kernel through the poller.
func (c *Conn) send(b []byte) error {
	var serr error
	err := c.rc.Write(func(fd uintptr) bool {
		serr = syscall.Sendto(int(fd), b, 0, &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK})
		return serr != syscall.EAGAIN && serr != syscall.EINTR
	})
	if err != nil {
		return err
	}
	return serr
}

// Unbind asks the kernel to stop queueing to this socket. Packets still in
// the queue are dropped by the kernel when the socket closes.
func (c *Conn) Unbind() error {
	c.mu.Lock()
	c.seq++
	msg := AppendConfigCmd(nil, c.seq, c.queue, false)
	c.mu.Unlock()
	return c.send(msg)
}

// Close closes the socket. A Recv blocked in another goroutine returns an
// error.
func (c *Conn) Close() error {
	if c.f != nil {
		return c.f.Close()
	}
	return syscall.Close(c.fd)
}
