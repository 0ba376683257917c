package wire

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"
)

func TestHandshakeRoundTrip(t *testing.T) {
	j := &Join{SessionID: [16]byte{1}, Nonce: [16]byte{2}, MAC: [32]byte{3}}
	a := &Accept{SessionID: [16]byte{4}, PathID: 300, Params: Params{MaxStreams: 7, StreamWindow: 1 << 20, MaxUniStreams: 3, MaxData: 1 << 22}}
	h := Hello{Params: Params{MaxStreams: 256, StreamWindow: 512 << 10, MaxUniStreams: 100, MaxData: 16 << 20}}
	je := &Join{SessionID: [16]byte{5}, Nonce: [16]byte{6}, MAC: [32]byte{7}, Early: true}
	for _, f := range []any{h, j, je, a} {
		b := AppendHandshake(nil, f)
		got, err := ReadHandshake(bufio.NewReader(bytes.NewReader(b)))
		if err != nil {
			t.Fatalf("%T: %v", f, err)
		}
		if !reflect.DeepEqual(got, f) {
			t.Errorf("got %+v, want %+v", got, f)
		}
		// Every strict prefix is a malformed (truncated) frame.
		for n := 0; n < len(b); n++ {
			if _, err := ReadHandshake(bufio.NewReader(bytes.NewReader(b[:n]))); !errors.Is(err, ErrMalformed) {
				t.Errorf("%T prefix %d: err = %v, want ErrMalformed", f, n, err)
			}
		}
	}
}

func TestSegmentRoundTrip(t *testing.T) {
	payload := []byte("hello, multipath")
	b := append(AppendSegmentHeader(nil, 1<<40, 77, len(payload)), payload...)
	if len(b) != SegmentHeaderLen(1<<40, 77, len(payload))+len(payload) {
		t.Errorf("SegmentHeaderLen disagrees with AppendSegmentHeader")
	}
	r := bufio.NewReader(bytes.NewReader(b))
	s, err := ReadSegment(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Seq != 1<<40 || s.Offset != 77 || string(s.Payload) != string(payload) {
		t.Errorf("got %+v", s)
	}
	if _, err := ReadSegment(r, nil); err != io.EOF {
		t.Errorf("at a frame boundary: err = %v, want io.EOF", err)
	}
	if _, err := ReadSegment(bufio.NewReader(bytes.NewReader(b[:len(b)-1])), nil); !errors.Is(err, ErrMalformed) {
		t.Errorf("truncated: err = %v, want ErrMalformed", err)
	}
}

func TestAckRoundTrip(t *testing.T) {
	in := &Ack{Cum: 10, MaxData: 1 << 22, Ranges: []Range{{12, 15}, {20, 21}}}
	var out Ack
	if err := ParseAck(AppendAck(nil, in), &out); err != nil {
		t.Fatal(err)
	}
	if out.Cum != in.Cum || out.MaxData != in.MaxData || len(out.Ranges) != 2 || out.Ranges[0] != in.Ranges[0] || out.Ranges[1] != in.Ranges[1] {
		t.Errorf("got %+v, want %+v", out, in)
	}
	// A range touching Cum (gap 0) would be part of the cumulative ack.
	bad := AppendAck(nil, &Ack{Cum: 10, Ranges: []Range{{10, 12}}})
	if err := ParseAck(bad, &out); !errors.Is(err, ErrMalformed) {
		t.Errorf("range at Cum: err = %v, want ErrMalformed", err)
	}
}

func TestReportRoundTrip(t *testing.T) {
	in := &Report{IntervalMicros: 100000, GoodputBytes: 5, PathBytes: [8]uint64{1, 2, 3}, OutOfOrder: 4, ReorderBytes: 6, HoLMicros: 7, DuplicateBytes: 8}
	var out Report
	if err := ParseReport(AppendReport(nil, in), &out); err != nil {
		t.Fatal(err)
	}
	if out != *in {
		t.Errorf("got %+v, want %+v", out, *in)
	}
}

func FuzzReadHandshake(f *testing.F) {
	f.Add(AppendHandshake(nil, Hello{}))
	f.Add(AppendHandshake(nil, &Join{}))
	f.Add(AppendHandshake(nil, &Accept{PathID: 3}))
	f.Add(AppendHandshake(nil, Hello{Params: Params{MaxStreams: 1, StreamWindow: 2, MaxUniStreams: 1 << 62}}))
	f.Add(AppendHandshake(nil, &Join{Early: true}))
	f.Fuzz(func(t *testing.T, b []byte) {
		ReadHandshake(bufio.NewReader(bytes.NewReader(b)))
	})
}

func FuzzReadSegment(f *testing.F) {
	f.Add(append(AppendSegmentHeader(nil, 1, 2, 3), 1, 2, 3))
	f.Add([]byte{TypeSegment, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bufio.NewReader(bytes.NewReader(b))
		for {
			s, err := ReadSegment(r, nil)
			if err != nil {
				return
			}
			if len(s.Payload) == 0 || len(s.Payload) > MaxSegmentPayload {
				t.Fatalf("accepted a payload of %d bytes", len(s.Payload))
			}
		}
	})
}

func FuzzParseAck(f *testing.F) {
	f.Add(AppendAck(nil, &Ack{Cum: 3, MaxData: 9, Ranges: []Range{{5, 7}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		var a Ack
		if ParseAck(b, &a) != nil {
			return
		}
		prev := a.Cum
		for _, r := range a.Ranges {
			if r.Start <= prev || r.End <= r.Start {
				t.Fatalf("accepted bad ranges %+v after cum %d", a.Ranges, a.Cum)
			}
			prev = r.End
		}
	})
}

func FuzzParseReport(f *testing.F) {
	f.Add(AppendReport(nil, &Report{GoodputBytes: 1}))
	f.Fuzz(func(t *testing.T, b []byte) {
		var r Report
		ParseReport(b, &r)
	})
}

// TestParseSegment: ParseSegment decodes what ReadSegment decodes, asks for
// more bytes on every strict prefix of a frame, and refuses what ReadSegment
// refuses.
func TestParseSegment(t *testing.T) {
	payload := []byte("hello, multipath")
	frame := append(AppendSegmentHeader(nil, 1<<40, 77, len(payload)), payload...)
	b := append(append([]byte{}, frame...), frame...) // two frames back to back
	s, n, err := ParseSegment(b)
	if err != nil || n != len(frame) {
		t.Fatalf("got length %d, %v; want %d, nil", n, err, len(frame))
	}
	if s.Seq != 1<<40 || s.Offset != 77 || string(s.Payload) != string(payload) {
		t.Errorf("got %+v", s)
	}
	if cap(s.Payload) != len(payload) {
		t.Errorf("payload capacity %d reaches past the frame", cap(s.Payload))
	}
	for k := 0; k < len(frame); k++ {
		if _, n, err := ParseSegment(frame[:k]); n != 0 || err != nil {
			t.Errorf("prefix %d: got length %d, %v; want 0, nil (incomplete)", k, n, err)
		}
	}
	for _, bad := range [][]byte{
		{TypeAck},
		AppendSegmentHeader(nil, 1, 2, 0),
		AppendSegmentHeader(nil, 1, 2, MaxSegmentPayload+1),
	} {
		if _, _, err := ParseSegment(bad); !errors.Is(err, ErrMalformed) {
			t.Errorf("%x: err = %v, want ErrMalformed", bad, err)
		}
		if _, err := ReadSegment(bufio.NewReader(bytes.NewReader(bad)), nil); !errors.Is(err, ErrMalformed) {
			t.Errorf("%x: ReadSegment err = %v, want ErrMalformed", bad, err)
		}
	}
}

// FuzzParseSegment: ParseSegment and ReadSegment agree on every input.
func FuzzParseSegment(f *testing.F) {
	f.Add(append(AppendSegmentHeader(nil, 1, 2, 3), 1, 2, 3))
	f.Add([]byte{TypeSegment, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bufio.NewReader(bytes.NewReader(b))
		for len(b) > 0 {
			p, n, perr := ParseSegment(b)
			s, rerr := ReadSegment(r, nil)
			switch {
			case perr != nil:
				if !errors.Is(rerr, ErrMalformed) {
					t.Fatalf("ParseSegment: %v; ReadSegment: %v", perr, rerr)
				}
				return
			case n == 0:
				if !errors.Is(rerr, ErrMalformed) { // truncated
					t.Fatalf("ParseSegment wants more; ReadSegment: %v", rerr)
				}
				return
			case rerr != nil || p.Seq != s.Seq || p.Offset != s.Offset || !bytes.Equal(p.Payload, s.Payload):
				t.Fatalf("ParseSegment %+v; ReadSegment %+v, %v", p, s, rerr)
			}
			b = b[n:]
		}
	})
}
