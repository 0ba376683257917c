package wire

import (
	"bytes"
	"errors"
	"testing"

	"github.com/quic-go/quic-go/quicvarint"
)

func TestAppDatagramRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		seq     uint64
		payload []byte
	}{
		{0, nil},
		{63, []byte("x")},
		{64, []byte("hello, multipath")},
		{1 << 30, bytes.Repeat([]byte{7}, 1200)},
		{quicvarint.Max, []byte{1, 2}},
	} {
		b := AppendAppDatagram(nil, tc.seq, tc.payload)
		if got, want := len(b), AppDatagramHeaderLen(tc.seq)+len(tc.payload); got != want {
			t.Errorf("seq %d: encoded %d bytes, AppDatagramHeaderLen says %d", tc.seq, got, want)
		}
		if h := AppDatagramHeaderLen(tc.seq); h > MaxAppDatagramHeaderLen {
			t.Errorf("seq %d: header %d bytes above MaxAppDatagramHeaderLen %d", tc.seq, h, MaxAppDatagramHeaderLen)
		}
		seq, p, err := ParseAppDatagram(b)
		if err != nil {
			t.Fatalf("seq %d: %v", tc.seq, err)
		}
		if seq != tc.seq || !bytes.Equal(p, tc.payload) {
			t.Errorf("got seq %d payload %q, want %d %q", seq, p, tc.seq, tc.payload)
		}
	}
}

// A truncated sequence number, a missing type byte and another type are
// malformed; everything after the sequence number is payload.
func TestAppDatagramMalformed(t *testing.T) {
	for _, b := range [][]byte{
		nil,
		{TypeAppDatagram},
		{TypeAppDatagram, 0x40}, // a 2-byte varint cut after 1 byte
		{TypeAppDatagram, 0xc0, 0, 0, 0, 0, 0, 0}, // an 8-byte varint cut after 7 bytes
		{TypeAck, 0},
	} {
		if _, _, err := ParseAppDatagram(b); !errors.Is(err, ErrMalformed) {
			t.Errorf("%x: err = %v, want ErrMalformed", b, err)
		}
	}
}

// FuzzParseAppDatagram: decoding never panics, and whatever decodes encodes
// back to the same bytes when its varint was minimal.
func FuzzParseAppDatagram(f *testing.F) {
	f.Add(AppendAppDatagram(nil, 5, []byte("abc")))
	f.Add([]byte{TypeAppDatagram, 0x40})
	f.Add([]byte{TypeAppDatagram})
	f.Fuzz(func(t *testing.T, b []byte) {
		seq, p, err := ParseAppDatagram(b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v is not ErrMalformed", err)
			}
			return
		}
		if len(p) > len(b)-2 {
			t.Fatalf("payload of %d bytes from a %d-byte datagram", len(p), len(b))
		}
		if AppDatagramHeaderLen(seq)+len(p) == len(b) && !bytes.Equal(AppendAppDatagram(nil, seq, p), b) {
			t.Fatalf("%x decoded to seq %d payload %x, which encodes differently", b, seq, p)
		}
	})
}

// A path probe and its answer encode to PathProbeLen bytes and decode back;
// another length or type is malformed.
func TestPathProbeRoundTrip(t *testing.T) {
	for _, answer := range []bool{false, true} {
		p := PathProbe{Answer: answer}
		for i := range p.SessionID {
			p.SessionID[i] = byte(i)
		}
		p.Nonce[0], p.MAC[15] = 7, 9
		b := AppendPathProbe(nil, &p)
		if len(b) != PathProbeLen || b[0]&0xc0 != 0 {
			t.Fatalf("%x: %d bytes, first byte %#x: want %d bytes and the first two bits clear (not QUIC)", b, len(b), b[0], PathProbeLen)
		}
		var q PathProbe
		if err := ParsePathProbe(b, &q); err != nil || q != p {
			t.Fatalf("decoded %+v, %v; want %+v", q, err, p)
		}
		for _, bad := range [][]byte{b[:len(b)-1], append(b, 0), append([]byte{TypeAck}, b[1:]...)} {
			if err := ParsePathProbe(bad, &q); !errors.Is(err, ErrMalformed) {
				t.Errorf("%x: err = %v, want ErrMalformed", bad, err)
			}
		}
	}
}

// FuzzParsePathProbe: decoding never panics, and whatever decodes encodes
// back to the same bytes.
func FuzzParsePathProbe(f *testing.F) {
	f.Add(AppendPathProbe(nil, &PathProbe{}))
	f.Add(AppendPathProbe(nil, &PathProbe{Answer: true}))
	f.Add([]byte{TypePathProbe})
	f.Fuzz(func(t *testing.T, b []byte) {
		var p PathProbe
		if err := ParsePathProbe(b, &p); err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v is not ErrMalformed", err)
			}
			return
		}
		if !bytes.Equal(AppendPathProbe(nil, &p), b) {
			t.Fatalf("%x decoded to %+v, which encodes differently", b, p)
		}
	})
}
