package wire

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"testing"
)

func TestHandshakeRoundTrip(t *testing.T) {
	j := &Join{SessionID: [16]byte{1}, Nonce: [16]byte{2}, MAC: [32]byte{3}}
	a := &Accept{SessionID: [16]byte{4}, PathID: 300, Params: Params{MaxStreams: 7, StreamWindow: 1 << 20, MaxUniStreams: 3}}
	h := Hello{Params: Params{MaxStreams: 256, StreamWindow: 512 << 10, MaxUniStreams: 100}}
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
	in := &Ack{Cum: 10, Limit: 1 << 22, Ranges: []Range{{12, 15}, {20, 21}}}
	var out Ack
	if err := ParseAck(AppendAck(nil, in), &out); err != nil {
		t.Fatal(err)
	}
	if out.Cum != in.Cum || out.Limit != in.Limit || len(out.Ranges) != 2 || out.Ranges[0] != in.Ranges[0] || out.Ranges[1] != in.Ranges[1] {
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

type recSink struct {
	data map[uint64][]byte
	fin  map[uint64]bool
	ctl  []string // control records, formatted
}

func (s *recSink) StreamData(id uint64, p []byte) error {
	s.data[id] = append(s.data[id], p...)
	return nil
}
func (s *recSink) StreamFin(id uint64) error { s.fin[id] = true; return nil }
func (s *recSink) StreamReset(id uint64, c uint64) error {
	s.ctl = append(s.ctl, fmt.Sprint("reset ", id, " ", c))
	return nil
}
func (s *recSink) StreamMaxData(id uint64, l uint64) error {
	s.ctl = append(s.ctl, fmt.Sprint("maxdata ", id, " ", l))
	return nil
}
func (s *recSink) StreamStopSending(id uint64, c uint64) error {
	s.ctl = append(s.ctl, fmt.Sprint("stop ", id, " ", c))
	return nil
}
func (s *recSink) PathStatus(p, seq uint64, backup bool) error {
	s.ctl = append(s.ctl, fmt.Sprint("status ", p, " ", seq, " ", backup))
	return nil
}
func (s *recSink) MaxStreams(n uint64) error {
	s.ctl = append(s.ctl, fmt.Sprint("maxstreams ", n))
	return nil
}
func (s *recSink) MaxUniStreams(n uint64) error {
	s.ctl = append(s.ctl, fmt.Sprint("maxunistreams ", n))
	return nil
}

// Records split at every possible boundary decode the same.
func TestRecordParserPiecewise(t *testing.T) {
	var b []byte
	b = append(AppendRecordHeader(b, RecData, 4, 5), "hello"...)
	b = append(AppendRecordHeader(b, RecData, 1<<20, 3), "abc"...)
	b = AppendRecordHeader(b, RecFin, 4, 0)
	b = AppendRecordHeader(b, RecReset, 6, 77)
	b = AppendRecordHeader(b, RecMaxData, 8, 1<<30)
	b = AppendRecordHeader(b, RecStopSending, 10, 3)
	b = AppendRecordHeader(b, RecMaxStreams, 300, 0)
	b = AppendRecordHeader(b, RecPathStatus, 2, 5<<1|1)
	b = AppendRecordHeader(b, RecMaxUniStreams, 1<<40, 0)
	want := "[reset 6 77 maxdata 8 1073741824 stop 10 3 maxstreams 300 status 2 5 true maxunistreams 1099511627776]"
	for _, typ := range []byte{RecData, RecFin, RecReset, RecMaxData, RecStopSending, RecMaxStreams, RecPathStatus, RecMaxUniStreams} {
		if got, want := RecordHeaderLen(typ, 300, 1<<20), len(AppendRecordHeader(nil, typ, 300, 1<<20)); got != want || got > MaxRecordHeaderLen {
			t.Errorf("RecordHeaderLen(%#x) = %d, encoded %d (max %d)", typ, got, want, MaxRecordHeaderLen)
		}
	}
	for split := 0; split <= len(b); split++ {
		s := &recSink{data: map[uint64][]byte{}, fin: map[uint64]bool{}}
		var p RecordParser
		if err := p.Feed(b[:split], s); err != nil {
			t.Fatal(err)
		}
		if err := p.Feed(b[split:], s); err != nil {
			t.Fatal(err)
		}
		if string(s.data[4]) != "hello" || string(s.data[1<<20]) != "abc" || !s.fin[4] {
			t.Fatalf("split %d: got %q %q fin %v", split, s.data[4], s.data[1<<20], s.fin[4])
		}
		if got := fmt.Sprint(s.ctl); got != want {
			t.Fatalf("split %d: control records %s, want %s", split, got, want)
		}
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
	f.Add(AppendAck(nil, &Ack{Cum: 3, Limit: 9, Ranges: []Range{{5, 7}}}))
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

func FuzzRecordParser(f *testing.F) {
	f.Add(append(AppendRecordHeader(nil, RecData, 4, 2), 'h', 'i'))
	f.Add(AppendRecordHeader(nil, RecFin, 4, 0))
	f.Add(AppendRecordHeader(nil, RecReset, 4, 9))
	f.Add(AppendRecordHeader(nil, RecMaxData, 4, 1<<20))
	f.Add(AppendRecordHeader(nil, RecStopSending, 4, 2))
	f.Add(AppendRecordHeader(nil, RecMaxStreams, 100, 0))
	f.Add(AppendRecordHeader(nil, RecPathStatus, 1, 3))
	f.Add(AppendRecordHeader(nil, RecMaxUniStreams, 1<<20, 0))
	f.Add(append(AppendRecordHeader(nil, RecData, 2, 1), 'u')) // a client's unidirectional stream
	f.Add([]byte{RecMaxUniStreams + 1, 0})                     // the first unknown type
	f.Fuzz(func(t *testing.T, b []byte) {
		s := &recSink{data: map[uint64][]byte{}, fin: map[uint64]bool{}}
		var p RecordParser
		p.Feed(b, s)
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
