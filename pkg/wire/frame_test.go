package wire

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/quic-go/quic-go/quicvarint"
)

// frameLog records what ParseFrames hands over, as text, and re-encodes it.
type frameLog struct {
	got []string
	enc []byte
}

func (l *frameLog) StreamFrame(id, off uint64, data []byte, fin bool) error {
	l.got = append(l.got, fmt.Sprintf("STREAM %d %d %q %v", id, off, data, fin))
	l.enc = append(AppendStreamFrameHeader(l.enc, id, off, len(data), fin), data...)
	return nil
}
func (l *frameLog) ResetStream(id, code, size uint64) error {
	l.got = append(l.got, fmt.Sprintf("RESET_STREAM %d %d %d", id, code, size))
	l.enc = AppendResetStream(l.enc, id, code, size)
	return nil
}
func (l *frameLog) StopSending(id, code uint64) error {
	l.got = append(l.got, fmt.Sprintf("STOP_SENDING %d %d", id, code))
	l.enc = AppendStopSending(l.enc, id, code)
	return nil
}
func (l *frameLog) MaxData(max uint64) error {
	l.got = append(l.got, fmt.Sprintf("MAX_DATA %d", max))
	l.enc = AppendMaxData(l.enc, max)
	return nil
}
func (l *frameLog) MaxStreamData(id, max uint64) error {
	l.got = append(l.got, fmt.Sprintf("MAX_STREAM_DATA %d %d", id, max))
	l.enc = AppendMaxStreamData(l.enc, id, max)
	return nil
}
func (l *frameLog) MaxStreams(n uint64, uni bool) error {
	l.got = append(l.got, fmt.Sprintf("MAX_STREAMS %d %v", n, uni))
	l.enc = AppendMaxStreams(l.enc, n, uni)
	return nil
}
func (l *frameLog) PathStatus(path, seq uint64, backup bool) error {
	l.got = append(l.got, fmt.Sprintf("PATH_STATUS %d %d %v", path, seq, backup))
	l.enc = AppendPathStatus(l.enc, path, seq, backup)
	return nil
}

// Each frame decodes to what was encoded, several in one segment.
func TestFramesRoundTrip(t *testing.T) {
	var b []byte
	b = append(AppendStreamFrameHeader(b, 0, 0, 3, false), "GET"...)
	b = append(AppendStreamFrameHeader(b, 4, 1200, 2, true), "ok"...)
	b = AppendStreamFrameHeader(b, 8, 77, 0, true) // RFC 9000 §19.8: a STREAM frame may carry only the FIN
	b = AppendResetStream(b, 3, 0x10c, 4096)
	b = AppendStopSending(b, 2, 0x21)
	b = AppendMaxData(b, 1<<30)
	b = AppendMaxStreamData(b, 4, 1<<20)
	b = AppendMaxStreams(b, 100, false)
	b = AppendMaxStreams(b, 7, true)
	b = AppendPathStatus(b, 1, 9, true)
	b = append(b, FramePadding, FramePadding) // RFC 9000 §19.1: "PADDING frames (type=0x00) have no semantic value"
	var l frameLog
	if err := ParseFrames(b, &l); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`STREAM 0 0 "GET" false`, `STREAM 4 1200 "ok" true`, `STREAM 8 77 "" true`,
		"RESET_STREAM 3 268 4096", "STOP_SENDING 2 33", "MAX_DATA 1073741824", "MAX_STREAM_DATA 4 1048576",
		"MAX_STREAMS 100 false", "MAX_STREAMS 7 true", "PATH_STATUS 1 9 true",
	}
	if fmt.Sprint(l.got) != fmt.Sprint(want) {
		t.Errorf("got %q\nwant %q", l.got, want)
	}
	if !bytes.Equal(l.enc, b[:len(b)-2]) {
		t.Errorf("re-encoded %x, want %x", l.enc, b)
	}
	if n := StreamFrameHeaderLen(4, 1200, 2); n != len(AppendStreamFrameHeader(nil, 4, 1200, 2, true)) {
		t.Errorf("StreamFrameHeaderLen = %d, want %d", n, len(AppendStreamFrameHeader(nil, 4, 1200, 2, true)))
	}
}

// Malformed segments are ErrMalformed, never a panic.
func TestFramesMalformed(t *testing.T) {
	stream := func(t byte, fields ...uint64) []byte { return appendVarints([]byte{t}, fields...) }
	for name, b := range map[string][]byte{
		"empty segment":     nil,
		"unknown type":      {0x3f},
		"truncated id":      {FrameStream | frameLen},
		"length past end":   append(stream(FrameStream|frameLen, 0, 5), "abc"...),
		"empty without fin": stream(FrameStream|frameLen, 0, 0),
		// RFC 9000 §19.8: "The largest offset delivered on a stream ...
		// cannot exceed 2^62-1".
		"past 2^62-1":     append(stream(FrameStream|frameOff|frameLen, 0, quicvarint.Max, 1), 'x'),
		"truncated reset": stream(FrameResetStream, 1, 2),
		"path status 2":   stream(FramePathStatus, 1, 1, 2),
		"truncated max":   {FrameMaxData},
		// RFC 9000 §19.11: a MAX_STREAMS value "greater than 2^60" is a
		// FRAME_ENCODING_ERROR.
		"max streams over 2^60":     stream(FrameMaxStreams, MaxStreamsCount+1),
		"max uni streams over 2^60": stream(FrameMaxUniStreams, MaxStreamsCount+1),
	} {
		if err := ParseFrames(b, &frameLog{}); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s (%x): err = %v, want ErrMalformed", name, b, err)
		}
	}
}

// A STREAM frame without the length bit runs to the segment's end (RFC
// 9000 §19.8: "If the LEN bit is not set, the Length field is absent and
// the Stream Data field extends to the end of the packet").
func TestStreamFrameToEnd(t *testing.T) {
	b := append(appendVarints([]byte{FrameStream | frameOff | frameFin}, 4, 10), "tail"...)
	var l frameLog
	if err := ParseFrames(b, &l); err != nil || len(l.got) != 1 || l.got[0] != `STREAM 4 10 "tail" true` {
		t.Errorf("got %q, %v", l.got, err)
	}
}

// FuzzFrames: any input decodes or fails with ErrMalformed, and what
// decodes re-encodes to a segment that decodes to the same frames.
func FuzzFrames(f *testing.F) {
	f.Add(append(AppendStreamFrameHeader(nil, 4, 1200, 2, true), "ok"...))
	f.Add(AppendResetStream(AppendMaxData(nil, 9), 3, 1, 2))
	f.Add(AppendPathStatus(AppendMaxStreams(nil, 5, true), 1, 2, false))
	f.Fuzz(func(t *testing.T, b []byte) {
		var l frameLog
		err := ParseFrames(b, &l)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("%x: %v is not ErrMalformed", b, err)
			}
			return
		}
		if len(l.got) == 0 {
			return // PADDING alone: nothing to re-encode (an empty segment is malformed)
		}
		var l2 frameLog
		if err := ParseFrames(l.enc, &l2); err != nil || fmt.Sprint(l2.got) != fmt.Sprint(l.got) {
			t.Fatalf("%x decoded to %q; re-encoded %x decoded to %q, %v", b, l.got, l.enc, l2.got, err)
		}
	})
}

// spanLog is a frameLog that also records each frame's span (FrameEnder).
type spanLog struct {
	frameLog
	spans [][2]int
}

func (l *spanLog) FrameEnd(start, end int) { l.spans = append(l.spans, [2]int{start, end}) }

// FrameEnd reports every frame's span, PADDING included, in order and
// back to back: each span re-parses alone to its frame.
func TestFrameEndSpans(t *testing.T) {
	var b []byte
	b = append(AppendStreamFrameHeader(b, 0, 0, 3, false), "GET"...)
	b = append(b, FramePadding, FramePadding)
	b = AppendMaxData(b, 1<<20)
	b = append(AppendStreamFrameHeader(b, 4, 1200, 2, true), "ok"...)
	var l spanLog
	if err := ParseFrames(b, &l); err != nil {
		t.Fatal(err)
	}
	if len(l.spans) != 5 {
		t.Fatalf("%d spans %v, want 5 (STREAM, 2 PADDING, MAX_DATA, STREAM)", len(l.spans), l.spans)
	}
	at := 0
	for k, sp := range l.spans {
		if sp[0] != at || sp[1] <= sp[0] {
			t.Fatalf("span %d is %v, want one starting at %d", k, sp, at)
		}
		at = sp[1]
		if b[sp[0]] == FramePadding {
			continue
		}
		var one frameLog
		if err := ParseFrames(b[sp[0]:sp[1]], &one); err != nil || len(one.got) != 1 || one.got[0] != l.got[len(one.got)-1+countBefore(l.spans[:k], b)] {
			t.Errorf("span %d (%v) alone parses to %v, %v", k, sp, one.got, err)
		}
	}
	if at != len(b) {
		t.Errorf("spans end at %d of %d bytes", at, len(b))
	}
}

// countBefore counts the non-PADDING frames among spans.
func countBefore(spans [][2]int, b []byte) int {
	n := 0
	for _, sp := range spans {
		if b[sp[0]] != FramePadding {
			n++
		}
	}
	return n
}
