package nfq

import (
	"encoding/binary"
	"errors"
	"testing"
)

// packetMsg builds an NFQNL_MSG_PACKET the way the kernel does
// (nfqnl_build_packet_message): nlmsghdr, nfgenmsg, then attributes.
func packetMsg(seq uint32, queue uint16, id uint32, withPayload bool) []byte {
	m := newMsg(nil, subsysQueue<<8|msgPacket, 0, seq, queue)
	var hdr [7]byte
	binary.BigEndian.PutUint32(hdr[0:], id)
	binary.BigEndian.PutUint16(hdr[4:], 0x0800)
	hdr[6] = 2 // NF_INET_FORWARD
	m.attr(attrPacketHdr, hdr[:])
	m.attr(attrIfIndexIn|0x4000, binary.BigEndian.AppendUint32(nil, 7)) // NLA_F_NET_BYTEORDER set
	if withPayload {
		m.attr(attrPayload, make([]byte, 21))
	}
	return m.finish()
}

func TestVerdictEncoding(t *testing.T) {
	got := AppendVerdict(nil, 9, 3, 0x01020304, Accept)
	want := []byte{
		32, 0, 0, 0, // nlmsg_len
		0x01, 0x03, // nlmsg_type = NFNL_SUBSYS_QUEUE<<8 | NFQNL_MSG_VERDICT
		0x01, 0x00, // NLM_F_REQUEST
		9, 0, 0, 0, // seq
		0, 0, 0, 0, // port id
		0, 0, 0, 3, // nfgenmsg: AF_UNSPEC, v0, res_id=3 (big-endian)
		12, 0, 2, 0, // nlattr: len 12, NFQA_VERDICT_HDR
		0, 0, 0, 1, // NF_ACCEPT, big-endian
		1, 2, 3, 4, // packet id, big-endian
	}
	if string(got) != string(want) {
		t.Fatalf("verdict bytes\n got %v\nwant %v", got, want)
	}
}

func TestConfigEncoding(t *testing.T) {
	b := AppendConfigCmd(nil, 1, 5, true)
	// nlmsghdr(16) + nfgenmsg(4) + attr(4+4)
	if len(b) != 28 || binary.LittleEndian.Uint32(b) != 28 {
		t.Fatalf("bind message length %d, header says %d; want 28", len(b), binary.LittleEndian.Uint32(b))
	}
	if flags := binary.LittleEndian.Uint16(b[6:]); flags != nlmFRequest|nlmFAck {
		t.Errorf("flags %#x, want request|ack", flags)
	}
	if got := b[20:28]; string(got) != string([]byte{8, 0, 1, 0, cfgCmdBind, 0, 0, afInet}) {
		t.Errorf("command attribute %v", got)
	}
	p := AppendConfigParams(nil, 2, 5, CopyMeta, 0, 4096)
	// params attr: 4+5 padded to 12; maxlen attr: 8
	if len(p) != 16+4+12+8 {
		t.Fatalf("params message length %d, want 40", len(p))
	}
	if p[28] != byte(CopyMeta) || p[29] != 0 || p[30] != 0 || p[31] != 0 {
		t.Errorf("copy mode byte or padding wrong: %v", p[24:32])
	}
	if got := binary.BigEndian.Uint32(p[36:]); got != 4096 {
		t.Errorf("maxlen %d, want 4096", got)
	}
}

func TestParsePackets(t *testing.T) {
	b := append(packetMsg(1, 4, 100, false), packetMsg(2, 4, 101, true)...)
	msgs, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 {
		t.Fatalf("got %d messages, want 2", len(msgs))
	}
	for i, wantID := range []uint32{100, 101} {
		p := msgs[i].Packet
		if p == nil {
			t.Fatalf("message %d: no packet", i)
		}
		if p.ID != wantID || p.Queue != 4 || p.HWProtocol != 0x0800 || p.Hook != 2 || p.InIfIndex != 7 {
			t.Errorf("message %d: got %+v", i, *p)
		}
	}
	if msgs[1].Packet.PayloadLen != 21 {
		t.Errorf("payload length %d, want 21", msgs[1].Packet.PayloadLen)
	}
}

func TestParseAckAndError(t *testing.T) {
	mk := func(errno int32) []byte {
		m := newMsg(nil, nlmsgError, 0, 77, 0)
		b := m.finish()[:nlmsgHdrLen] // NLMSG_ERROR has no nfgenmsg
		b = binary.LittleEndian.AppendUint32(b, uint32(errno))
		b = append(b, make([]byte, 16)...) // echoed request header
		binary.LittleEndian.PutUint32(b, uint32(len(b)))
		return b
	}
	msgs, err := Parse(mk(0))
	if err != nil || len(msgs) != 1 || !msgs[0].IsAck || msgs[0].Seq != 77 {
		t.Fatalf("ack: %+v %v", msgs, err)
	}
	msgs, err = Parse(mk(-1)) // -EPERM
	var ke *KernelError
	if err != nil || len(msgs) != 1 || !errors.As(msgs[0].Err, &ke) || ke.Errno != 1 {
		t.Fatalf("error: %+v %v", msgs, err)
	}
}

func TestParseMalformed(t *testing.T) {
	good := packetMsg(1, 0, 5, false)
	cases := map[string][]byte{
		"short header":     good[:10],
		"length too large": append([]byte{0xff, 0, 0, 0}, good[4:]...),
		"length too small": append([]byte{4, 0, 0, 0}, good[4:]...),
		"no nfgenmsg":      func() []byte { b := append([]byte(nil), good[:18]...); b[0] = 18; return b }(),
		"bad attr length":  func() []byte { b := append([]byte(nil), good...); b[20] = 200; return b }(),
		"no packet header": func() []byte {
			m := newMsg(nil, subsysQueue<<8|msgPacket, 0, 1, 0)
			return m.finish()
		}(),
	}
	for name, b := range cases {
		if _, err := Parse(b); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(packetMsg(1, 4, 100, true))
	f.Add(AppendVerdict(nil, 1, 2, 3, Accept))
	f.Add(AppendConfigParams(nil, 1, 2, CopyMeta, 0, 10))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		msgs, err := Parse(b)
		if err == nil {
			for _, m := range msgs {
				if m.Type == subsysQueue<<8|msgPacket && m.Packet == nil {
					t.Fatalf("packet message parsed without error but no packet")
				}
			}
		}
	})
}
