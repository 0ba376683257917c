// Package nfq speaks the small part of the Linux nfnetlink_queue protocol
// (NFQUEUE) that a delay emulator needs: bind a queue, ask for packet
// metadata only, receive queued packets and send verdicts.
//
// The package is split by concern: msg.go encodes and decodes netlink
// messages (pure functions over byte slices, fuzzed), conn.go owns the
// NETLINK_NETFILTER socket. Only the standard library is used.
//
// Wire format reference: include/uapi/linux/netlink.h,
// include/uapi/linux/netfilter/nfnetlink.h and nfnetlink_queue.h. Netlink
// headers are in host byte order (little-endian on every architecture this
// project runs on); nfnetlink payload fields are big-endian.
package nfq

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Netlink and nfnetlink_queue constants (from the kernel UAPI headers).
const (
	nlmsgHdrLen  = 16 // sizeof(struct nlmsghdr), bytes
	nfgenHdrLen  = 4  // sizeof(struct nfgenmsg), bytes
	nlattrHdrLen = 4  // sizeof(struct nlattr), bytes

	nlmsgError  = 2      // NLMSG_ERROR
	nlmsgDone   = 3      // NLMSG_DONE
	nlmFRequest = 0x1    // NLM_F_REQUEST
	nlmFAck     = 0x4    // NLM_F_ACK
	nlaTypeMask = 0x3fff // strips NLA_F_NESTED and NLA_F_NET_BYTEORDER

	subsysQueue = 3 // NFNL_SUBSYS_QUEUE

	msgPacket  = 0 // NFQNL_MSG_PACKET: kernel → user, one queued packet
	msgVerdict = 1 // NFQNL_MSG_VERDICT: user → kernel
	msgConfig  = 2 // NFQNL_MSG_CONFIG: user → kernel

	attrCfgCmd    = 1 // NFQA_CFG_CMD
	attrCfgParams = 2 // NFQA_CFG_PARAMS
	attrCfgMaxLen = 3 // NFQA_CFG_QUEUE_MAXLEN

	attrPacketHdr  = 1  // NFQA_PACKET_HDR
	attrVerdictHdr = 2  // NFQA_VERDICT_HDR
	attrIfIndexIn  = 5  // NFQA_IFINDEX_INDEV
	attrPayload    = 10 // NFQA_PAYLOAD

	cfgCmdBind   = 1 // NFQNL_CFG_CMD_BIND
	cfgCmdUnbind = 2 // NFQNL_CFG_CMD_UNBIND

	afInet = 2 // AF_INET
)

// CopyMode says how much of each queued packet the kernel copies to user
// space (NFQNL_COPY_*).
type CopyMode uint8

// Copy modes.
const (
	CopyNone   CopyMode = 0 // nothing, not even metadata
	CopyMeta   CopyMode = 1 // metadata only (packet id, hook, interfaces)
	CopyPacket CopyMode = 2 // metadata plus up to copy-range bytes of payload
)

// Verdict is a netfilter verdict (NF_*).
type Verdict uint32

// Verdicts.
const (
	Drop   Verdict = 0 // NF_DROP: free the packet
	Accept Verdict = 1 // NF_ACCEPT: let the packet continue through the stack
)

// Packet is one packet the kernel queued. Only metadata is decoded.
type Packet struct {
	Queue      uint16 // queue number the packet was queued on
	ID         uint32 // kernel packet id; pass it back in the verdict
	HWProtocol uint16 // link-layer protocol (ETH_P_*), e.g. 0x0800 for IPv4
	Hook       uint8  // netfilter hook the packet was queued from
	InIfIndex  uint32 // input interface index; 0 if absent
	PayloadLen int    // bytes of payload copied to user space (0 with CopyMeta)
}

// Errors returned by the decoders.
var (
	ErrTruncated = errors.New("nfq: truncated netlink message")
	ErrMalformed = errors.New("nfq: malformed netlink message")
)

// Kernel reports an NLMSG_ERROR with a non-zero errno from the kernel.
type KernelError struct {
	Errno int32 // positive errno value (the kernel sends it negated)
	Seq   uint32
}

func (e *KernelError) Error() string {
	return fmt.Sprintf("nfq: kernel error errno %d (seq %d)", e.Errno, e.Seq)
}

// align4 rounds n up to the netlink alignment of 4 bytes.
func align4(n int) int { return (n + 3) &^ 3 }

// builder appends one netlink message; finish patches its length.
type builder struct {
	b     []byte
	start int
}

func newMsg(buf []byte, typ, flags uint16, seq uint32, queue uint16) builder {
	start := len(buf)
	buf = binary.LittleEndian.AppendUint32(buf, 0) // length, patched in finish
	buf = binary.LittleEndian.AppendUint16(buf, typ)
	buf = binary.LittleEndian.AppendUint16(buf, flags)
	buf = binary.LittleEndian.AppendUint32(buf, seq)
	buf = binary.LittleEndian.AppendUint32(buf, 0) // port id: 0 = the kernel
	buf = append(buf, 0 /* AF_UNSPEC */, 0 /* NFNETLINK_V0 */)
	buf = binary.BigEndian.AppendUint16(buf, queue)
	return builder{b: buf, start: start}
}

func (m *builder) attr(typ uint16, data []byte) {
	m.b = binary.LittleEndian.AppendUint16(m.b, uint16(nlattrHdrLen+len(data)))
	m.b = binary.LittleEndian.AppendUint16(m.b, typ)
	m.b = append(m.b, data...)
	for len(m.b)%4 != 0 {
		m.b = append(m.b, 0)
	}
}

func (m *builder) finish() []byte {
	binary.LittleEndian.PutUint32(m.b[m.start:], uint32(len(m.b)-m.start))
	return m.b
}

// AppendConfigCmd appends an NFQNL_MSG_CONFIG carrying a bind (bind=true) or
// unbind command for queue, requesting an acknowledgement.
func AppendConfigCmd(buf []byte, seq uint32, queue uint16, bind bool) []byte {
	cmd := uint8(cfgCmdUnbind)
	if bind {
		cmd = cfgCmdBind
	}
	m := newMsg(buf, subsysQueue<<8|msgConfig, nlmFRequest|nlmFAck, seq, queue)
	m.attr(attrCfgCmd, []byte{cmd, 0, 0, afInet}) // struct nfqnl_msg_config_cmd, pf big-endian
	return m.finish()
}

// AppendConfigParams appends an NFQNL_MSG_CONFIG setting the copy mode and
// copy range (bytes of payload) and, if maxLen > 0, the queue length in
// packets, requesting an acknowledgement.
func AppendConfigParams(buf []byte, seq uint32, queue uint16, mode CopyMode, copyRange uint32, maxLen uint32) []byte {
	m := newMsg(buf, subsysQueue<<8|msgConfig, nlmFRequest|nlmFAck, seq, queue)
	p := binary.BigEndian.AppendUint32(nil, copyRange) // struct nfqnl_msg_config_params (packed, 5 bytes)
	p = append(p, byte(mode))
	m.attr(attrCfgParams, p)
	if maxLen > 0 {
		m.attr(attrCfgMaxLen, binary.BigEndian.AppendUint32(nil, maxLen))
	}
	return m.finish()
}

// AppendVerdict appends an NFQNL_MSG_VERDICT for packet id on queue. Several
// verdicts may be appended to one buffer and sent in one write.
func AppendVerdict(buf []byte, seq uint32, queue uint16, id uint32, v Verdict) []byte {
	m := newMsg(buf, subsysQueue<<8|msgVerdict, nlmFRequest, seq, queue)
	var vh [8]byte // struct nfqnl_msg_verdict_hdr
	binary.BigEndian.PutUint32(vh[0:], uint32(v))
	binary.BigEndian.PutUint32(vh[4:], id)
	m.attr(attrVerdictHdr, vh[:])
	return m.finish()
}

// Message is one decoded netlink message from the kernel: a queued packet,
// an acknowledgement or error, or something this package ignores.
type Message struct {
	Type   uint16  // nlmsg_type
	Seq    uint32  // nlmsg_seq
	Packet *Packet // set for NFQNL_MSG_PACKET
	IsAck  bool    // NLMSG_ERROR with errno 0
	Err    error   // *KernelError for NLMSG_ERROR with a non-zero errno
}

// Parse decodes every netlink message in b (one datagram read from the
// socket). Malformed input yields an error, never a panic.
func Parse(b []byte) ([]Message, error) {
	var out []Message
	for len(b) > 0 {
		if len(b) < nlmsgHdrLen {
			return out, ErrTruncated
		}
		l := int(binary.LittleEndian.Uint32(b[0:]))
		if l < nlmsgHdrLen || l > len(b) {
			return out, fmt.Errorf("%w: message length %d of %d bytes", ErrMalformed, l, len(b))
		}
		msg, err := parseOne(b[:l])
		if err != nil {
			return out, err
		}
		out = append(out, msg)
		next := align4(l)
		if next >= len(b) {
			break
		}
		b = b[next:]
	}
	return out, nil
}

func parseOne(b []byte) (Message, error) {
	m := Message{
		Type: binary.LittleEndian.Uint16(b[4:]),
		Seq:  binary.LittleEndian.Uint32(b[8:]),
	}
	body := b[nlmsgHdrLen:]
	switch {
	case m.Type == nlmsgError:
		if len(body) < 4 {
			return m, fmt.Errorf("%w: short NLMSG_ERROR", ErrMalformed)
		}
		errno := int32(binary.LittleEndian.Uint32(body))
		if errno == 0 {
			m.IsAck = true
		} else {
			m.Err = &KernelError{Errno: -errno, Seq: m.Seq}
		}
		return m, nil
	case m.Type == nlmsgDone || m.Type < 0x10: // other control messages
		return m, nil
	case m.Type == subsysQueue<<8|msgPacket:
		p, err := parsePacket(body)
		if err != nil {
			return m, err
		}
		m.Packet = p
		return m, nil
	}
	return m, nil
}

func parsePacket(body []byte) (*Packet, error) {
	if len(body) < nfgenHdrLen {
		return nil, fmt.Errorf("%w: short nfgenmsg", ErrMalformed)
	}
	p := &Packet{Queue: binary.BigEndian.Uint16(body[2:])}
	attrs := body[nfgenHdrLen:]
	haveHdr := false
	for len(attrs) >= nlattrHdrLen {
		al := int(binary.LittleEndian.Uint16(attrs[0:]))
		at := binary.LittleEndian.Uint16(attrs[2:]) & nlaTypeMask
		if al < nlattrHdrLen || al > len(attrs) {
			return nil, fmt.Errorf("%w: attribute length %d of %d bytes", ErrMalformed, al, len(attrs))
		}
		data := attrs[nlattrHdrLen:al]
		switch at {
		case attrPacketHdr: // struct nfqnl_msg_packet_hdr (packed, 7 bytes)
			if len(data) < 7 {
				return nil, fmt.Errorf("%w: short packet header", ErrMalformed)
			}
			p.ID = binary.BigEndian.Uint32(data[0:])
			p.HWProtocol = binary.BigEndian.Uint16(data[4:])
			p.Hook = data[6]
			haveHdr = true
		case attrIfIndexIn:
			if len(data) < 4 {
				return nil, fmt.Errorf("%w: short ifindex", ErrMalformed)
			}
			p.InIfIndex = binary.BigEndian.Uint32(data)
		case attrPayload:
			p.PayloadLen = len(data)
		}
		next := align4(al)
		if next >= len(attrs) {
			break
		}
		attrs = attrs[next:]
	}
	if !haveHdr {
		return nil, fmt.Errorf("%w: packet without NFQA_PACKET_HDR", ErrMalformed)
	}
	return p, nil
}
