package session

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/quic-go/quic-go/quicvarint"

	"github.com/mpqsched/mpqsched/pkg/wire"
)

// Frames as the scripted peer of harness_test.go sees them: every session
// frame the session under test sends, on its data stream or in a QUIC
// datagram, decoded into one of the value types below, and the frames a
// test writes as the peer. Tests compare them with ==-like equality
// (reflect.DeepEqual), as x/net/quic's debugFrames.
//
// All wire knowledge sits behind frameCodec: the harness and the tests see
// only frames. The codec is wire version 4's (wireV4): a segment of whole
// frames (pkg/wire/frame.go), decoded as it arrives.

// frame is one decoded session frame.
type frame interface{ String() string }

// Frames on a path's data stream (wire.TypeSegment) ...

// segmentFrame is a segment; the frames it carries follow it, as frames of
// their own, on the same path, in the segment's order.
type segmentFrame struct {
	Seq    uint64 // connection-level sequence number
	Offset uint64 // connection byte offset of its first byte
	Len    uint64 // payload bytes
}

// rawSegment is a segment the peer writes as it is: from wireV4.cut, to
// send segments out of order, twice or on another path.
type rawSegment struct {
	Seq, Offset uint64
	Payload     []byte
}

// dgSegment is a segment the peer sends alone in a QUIC datagram, as a
// sender with Config.DatagramData does (dgdata.go).
type dgSegment rawSegment

// ... and the frames in segments (pkg/wire/frame.go).

// dataFrame is a STREAM frame's data (its FIN, if any, follows as a
// finFrame).
type dataFrame struct {
	ID   uint64 // stream ID
	Off  uint64 // stream offset of Data[0]
	Data string
}

type finFrame struct{ ID uint64 }            // a STREAM frame's FIN (at the stream's end)
type resetFrame struct{ ID, Code uint64 }    // RESET_STREAM (its final size: where the stream's data stands)
type maxDataFrame struct{ ID, Limit uint64 } // MAX_STREAM_DATA
type stopFrame struct{ ID, Code uint64 }     // STOP_SENDING
type maxStreamsFrame struct {                // MAX_STREAMS
	Uni   bool
	Count uint64
}
type connMaxDataFrame struct{ Max uint64 } // MAX_DATA (RFC 9000 §19.9): the connection's credit
type pathStatusFrame struct {              // PATH_STATUS (RFC 10069's PATH_STATUS_BACKUP / AVAILABLE)
	Path, Seq uint64
	Backup    bool
}

// Frames carried in QUIC datagrams.

// ackFrame is a connection-level Ack and the connection credit it carries
// (protocol version 5: stream bytes, RFC 9000's MAX_DATA).
type ackFrame struct {
	Cum, MaxData uint64
	Ranges       []wire.Range // nil when empty
}

type ackReqFrame struct{}              // wire.TypeAckReq
type pingFrame struct{}                // wire.TypePing
type silentFrame struct{ Path uint64 } // wire.TypeSilent
type reportFrame struct{ wire.Report } // wire.TypeReport
type appDatagramFrame struct {         // wire.TypeAppDatagram
	Seq  uint64
	Data string
}

// closeFrame is the path connection's CONNECTION_CLOSE with an application
// error, as on the wire (quic-go's ApplicationError at the peer): the
// session's own code, and for an application's close codeApplication with
// the application's code in the reason phrase (closeerr.go). It is the last
// frame of a path.
type closeFrame struct {
	Code   uint64
	Reason string
}

func (f segmentFrame) String() string {
	return fmt.Sprintf("Segment{seq %d, off %d, len %d}", f.Seq, f.Offset, f.Len)
}
func (f dgSegment) String() string { return "Datagram" + rawSegment(f).String() }

func (f rawSegment) String() string {
	return fmt.Sprintf("RawSegment{seq %d, off %d, len %d}", f.Seq, f.Offset, len(f.Payload))
}
func (f dataFrame) String() string {
	d := f.Data
	if len(d) > 16 {
		d = d[:16] + "…"
	}
	return fmt.Sprintf("Data{id %d, off %d, len %d, %q}", f.ID, f.Off, len(f.Data), d)
}
func (f finFrame) String() string         { return fmt.Sprintf("Fin{id %d}", f.ID) }
func (f resetFrame) String() string       { return fmt.Sprintf("Reset{id %d, code %d}", f.ID, f.Code) }
func (f maxDataFrame) String() string     { return fmt.Sprintf("MaxData{id %d, limit %d}", f.ID, f.Limit) }
func (f connMaxDataFrame) String() string { return fmt.Sprintf("MaxConnData{%d}", f.Max) }
func (f stopFrame) String() string        { return fmt.Sprintf("StopSending{id %d, code %d}", f.ID, f.Code) }
func (f maxStreamsFrame) String() string {
	return fmt.Sprintf("MaxStreams{uni %v, count %d}", f.Uni, f.Count)
}
func (f pathStatusFrame) String() string {
	return fmt.Sprintf("PathStatus{path %d, seq %d, backup %v}", f.Path, f.Seq, f.Backup)
}
func (f ackFrame) String() string {
	return fmt.Sprintf("Ack{cum %d, max data %d, ranges %v}", f.Cum, f.MaxData, f.Ranges)
}
func (ackReqFrame) String() string   { return "AckReq" }
func (pingFrame) String() string     { return "Ping" }
func (f silentFrame) String() string { return fmt.Sprintf("Silent{path %d}", f.Path) }
func (f reportFrame) String() string { return fmt.Sprintf("Report%+v", f.Report) }
func (f appDatagramFrame) String() string {
	return fmt.Sprintf("AppDatagram{seq %d, %q}", f.Seq, f.Data)
}
func (f closeFrame) String() string { return fmt.Sprintf("Close{code %d, %q}", f.Code, f.Reason) }

// frameCodec is everything the harness knows about the session's wire
// format after the handshake. One codec serves the whole session (all
// paths). The harness calls it from the peer's reader goroutines and the
// test goroutine, one call at a time.
type frameCodec interface {
	// streamRead decodes bytes the session wrote on path's data stream,
	// in order, in pieces of any size.
	streamRead(path int, p []byte) ([]frame, error)
	// datagramRead decodes one QUIC datagram the session sent on path: one
	// frame, or a segment (Config.DatagramData) and the frames it carries.
	datagramRead(path int, b []byte) ([]frame, error)
	// encode turns frames the peer writes into bytes for its data stream
	// on one path and QUIC datagrams.
	encode(fs []frame) (stream []byte, datagrams [][]byte, err error)
}

// wireV4 is the codec of wire version 4: segments of whole frames on each
// path's data stream, each decoded on arrival; Acks, reports and
// application datagrams in QUIC datagrams.
type wireV4 struct {
	partial map[int][]byte // receive side: per path, a segment not yet complete
	sink    streamFrames
	// Send side: the peer's own segments.
	seq, off uint64            // the peer's next sequence number and segment offset
	sent     map[uint64]uint64 // stream offset the peer wrote up to, by stream ID
}

var _ frameCodec = (*wireV4)(nil)

func newWireV4() *wireV4 {
	return &wireV4{partial: map[int][]byte{}, sent: map[uint64]uint64{}}
}

func (c *wireV4) streamRead(path int, p []byte) ([]frame, error) {
	b := append(c.partial[path], p...)
	var out []frame
	for {
		seg, n, err := wire.ParseSegment(b)
		if err != nil {
			return out, err
		}
		if n == 0 {
			break
		}
		b = b[n:]
		out = append(out, segmentFrame{Seq: seg.Seq, Offset: seg.Offset, Len: uint64(len(seg.Payload))})
		c.sink.out = nil
		if err := wire.ParseFrames(seg.Payload, &c.sink); err != nil {
			return out, err
		}
		out = append(out, c.sink.out...)
	}
	c.partial[path] = append([]byte(nil), b...)
	return out, nil
}

// streamFrames turns a segment's frames into harness frames.
type streamFrames struct{ out []frame }

func (r *streamFrames) add(f frame) error { r.out = append(r.out, f); return nil }

func (r *streamFrames) StreamFrame(id, off uint64, p []byte, fin bool) error {
	if len(p) > 0 {
		r.add(dataFrame{ID: id, Off: off, Data: string(p)})
	}
	if fin {
		r.add(finFrame{id})
	}
	return nil
}
func (r *streamFrames) ResetStream(id, code, _ uint64) error { return r.add(resetFrame{id, code}) }
func (r *streamFrames) MaxStreamData(id, limit uint64) error { return r.add(maxDataFrame{id, limit}) }
func (r *streamFrames) StopSending(id, code uint64) error    { return r.add(stopFrame{id, code}) }
func (r *streamFrames) MaxData(n uint64) error               { return r.add(connMaxDataFrame{n}) }
func (r *streamFrames) MaxStreams(n uint64, uni bool) error  { return r.add(maxStreamsFrame{uni, n}) }
func (r *streamFrames) PathStatus(path, seq uint64, backup bool) error {
	return r.add(pathStatusFrame{path, seq, backup})
}

func (c *wireV4) datagramRead(path int, b []byte) ([]frame, error) {
	if len(b) > 0 && b[0] == wire.TypeSegment { // Config.DatagramData: one segment, alone in the datagram
		seg, n, err := wire.ParseSegment(b)
		if err != nil {
			return nil, err
		}
		if n != len(b) {
			return nil, fmt.Errorf("segment datagram of %d bytes holds a segment of %d", len(b), n)
		}
		c.sink.out = nil
		if err := wire.ParseFrames(seg.Payload, &c.sink); err != nil {
			return nil, err
		}
		return append([]frame{segmentFrame{Seq: seg.Seq, Offset: seg.Offset, Len: uint64(len(seg.Payload))}}, c.sink.out...), nil
	}
	f, err := c.datagramFrame(b)
	if err != nil {
		return nil, err
	}
	return []frame{f}, nil
}

// datagramFrame decodes a datagram of one frame.
func (c *wireV4) datagramFrame(b []byte) (frame, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("empty datagram")
	}
	switch b[0] {
	case wire.TypeAck:
		var a wire.Ack
		if err := wire.ParseAck(b, &a); err != nil {
			return nil, err
		}
		f := ackFrame{Cum: a.Cum, MaxData: a.MaxData}
		if len(a.Ranges) > 0 {
			f.Ranges = a.Ranges
		}
		return f, nil
	case wire.TypeAckReq, wire.TypePing:
		if len(b) != 1 {
			return nil, fmt.Errorf("datagram %#x with a payload", b[0])
		}
		if b[0] == wire.TypePing {
			return pingFrame{}, nil
		}
		return ackReqFrame{}, nil
	case wire.TypeSilent:
		id, n, err := quicvarint.Parse(b[1:])
		if err != nil || 1+n != len(b) {
			return nil, fmt.Errorf("malformed Silent %x", b)
		}
		return silentFrame{id}, nil
	case wire.TypeReport:
		var r reportFrame
		if err := wire.ParseReport(b, &r.Report); err != nil {
			return nil, err
		}
		return r, nil
	case wire.TypeAppDatagram:
		seq, p, err := wire.ParseAppDatagram(b)
		if err != nil {
			return nil, err
		}
		return appDatagramFrame{seq, string(p)}, nil
	}
	return nil, fmt.Errorf("unknown datagram type %#x", b[0])
}

// encode packs the stream and control frames of fs into the peer's next
// segment (more if they exceed wire.MaxSegmentPayload; a frame is never
// split), after the raw segments among fs; datagram frames become
// datagrams. A dataFrame's Off must be where the stream's data stands (0
// for "next").
func (c *wireV4) encode(fs []frame) (stream []byte, datagrams [][]byte, err error) {
	var frames [][]byte
	for _, f := range fs {
		bs, ok, err := c.wireFrames(f)
		if err != nil {
			return nil, nil, err
		} else if ok {
			frames = append(frames, bs...)
			continue
		}
		switch f := f.(type) {
		case rawSegment:
			stream = wire.AppendSegmentHeader(stream, f.Seq, f.Offset, len(f.Payload))
			stream = append(stream, f.Payload...)
		case dgSegment:
			datagrams = append(datagrams, append(wire.AppendSegmentHeader(nil, f.Seq, f.Offset, len(f.Payload)), f.Payload...))
		case ackFrame:
			datagrams = append(datagrams, wire.AppendAck(nil, &wire.Ack{Cum: f.Cum, MaxData: f.MaxData, Ranges: f.Ranges}))
		case ackReqFrame:
			datagrams = append(datagrams, []byte{wire.TypeAckReq})
		case pingFrame:
			datagrams = append(datagrams, []byte{wire.TypePing})
		case silentFrame:
			datagrams = append(datagrams, quicvarint.Append([]byte{wire.TypeSilent}, f.Path))
		case reportFrame:
			datagrams = append(datagrams, wire.AppendReport(nil, &f.Report))
		case appDatagramFrame:
			datagrams = append(datagrams, wire.AppendAppDatagram(nil, f.Seq, []byte(f.Data)))
		default:
			return nil, nil, fmt.Errorf("the peer cannot write %v", f)
		}
	}
	for _, g := range c.segments(frames) {
		stream = wire.AppendSegmentHeader(stream, g.Seq, g.Offset, len(g.Payload))
		stream = append(stream, g.Payload...)
	}
	return stream, datagrams, nil
}

// wireFrames encodes f if it is a stream or control frame (ok): one wire
// frame, or for a dataFrame longer than a segment several STREAM frames.
func (c *wireV4) wireFrames(f frame) (_ [][]byte, ok bool, err error) {
	switch f := f.(type) {
	case dataFrame:
		if f.Off != 0 && f.Off != c.sent[f.ID] {
			return nil, false, fmt.Errorf("%v: the stream's data stands at %d", f, c.sent[f.ID])
		}
		var out [][]byte
		for d := f.Data; len(d) > 0; {
			n := min(len(d), wire.MaxSegmentPayload-32)
			out = append(out, append(wire.AppendStreamFrameHeader(nil, f.ID, c.sent[f.ID], n, false), d[:n]...))
			c.sent[f.ID] += uint64(n)
			d = d[n:]
		}
		return out, true, nil
	case finFrame:
		return [][]byte{wire.AppendStreamFrameHeader(nil, f.ID, c.sent[f.ID], 0, true)}, true, nil
	case resetFrame:
		return [][]byte{wire.AppendResetStream(nil, f.ID, f.Code, c.sent[f.ID])}, true, nil
	case maxDataFrame:
		return [][]byte{wire.AppendMaxStreamData(nil, f.ID, f.Limit)}, true, nil
	case connMaxDataFrame:
		return [][]byte{wire.AppendMaxData(nil, f.Max)}, true, nil
	case stopFrame:
		return [][]byte{wire.AppendStopSending(nil, f.ID, f.Code)}, true, nil
	case maxStreamsFrame:
		return [][]byte{wire.AppendMaxStreams(nil, f.Count, f.Uni)}, true, nil
	case pathStatusFrame:
		return [][]byte{wire.AppendPathStatus(nil, f.Path, f.Seq, f.Backup)}, true, nil
	}
	return nil, false, nil
}

// segments packs frames (each whole; at most wire.MaxSegmentPayload bytes)
// into the peer's next segments.
func (c *wireV4) segments(frames [][]byte) []rawSegment {
	var out []rawSegment
	var p []byte
	flush := func() {
		if len(p) > 0 {
			out = append(out, rawSegment{Seq: c.seq, Offset: c.off, Payload: p})
			c.seq++
			c.off += uint64(len(p))
			p = nil
		}
	}
	for _, f := range frames {
		if len(p)+len(f) > wire.MaxSegmentPayload {
			flush()
		}
		p = append(p, f...)
	}
	flush()
	return out
}

// cut encodes each stream or control frame of fs into the peer's next
// segment (more than one if it is long) without sending it; the test sends
// them with writeFrames, in any order, on any path, or never.
func (c *wireV4) cut(fs ...frame) ([]rawSegment, error) {
	var out []rawSegment
	for _, f := range fs {
		bs, ok, err := c.wireFrames(f)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("%v is not a stream or control frame", f)
		}
		out = append(out, c.segments(bs)...)
	}
	return out, nil
}

// The harness's codec decodes what it encodes: stream and control frames
// (fed a byte at a time, as a stream may deliver them) and datagrams.
func TestHarnessCodecRoundTrip(t *testing.T) {
	records := []frame{
		dataFrame{ID: 0, Data: "hello"},
		finFrame{ID: 0},
		resetFrame{ID: 4, Code: 3},
		maxDataFrame{ID: 8, Limit: 1 << 20},
		stopFrame{ID: 8, Code: 2},
		maxStreamsFrame{Uni: false, Count: 9},
		maxStreamsFrame{Uni: true, Count: 3},
		pathStatusFrame{Path: 1, Seq: 2, Backup: true},
		dataFrame{ID: 0, Off: 5, Data: "world"},
	}
	dgrams := []frame{
		ackFrame{Cum: 3, Ranges: []wire.Range{{Start: 5, End: 6}}},
		ackFrame{Cum: 7},
		ackReqFrame{},
		pingFrame{},
		silentFrame{Path: 2},
		reportFrame{wire.Report{IntervalMicros: 100, PathBytes: [8]uint64{1, 2}}},
		appDatagramFrame{Seq: 7, Data: "x"},
	}
	enc, dec := newWireV4(), newWireV4()
	stream, ds, err := enc.encode(append(append([]frame(nil), records...), dgrams...))
	if err != nil {
		t.Fatal(err)
	}
	var got []frame
	for i := range stream {
		fs, err := dec.streamRead(0, stream[i:i+1])
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fs...)
	}
	want := append([]frame{segmentFrame{Seq: 0, Offset: 0, Len: uint64(len(stream) - wire.SegmentHeaderLen(0, 0, len(stream)))}}, records...)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("stream:\ngot  %v\nwant %v", got, want)
	}
	if len(ds) != len(dgrams) {
		t.Fatalf("%d datagrams for %d frames", len(ds), len(dgrams))
	}
	for i, d := range ds {
		f, err := dec.datagramRead(0, d)
		if err != nil || len(f) != 1 || !reflect.DeepEqual(f[0], dgrams[i]) {
			t.Errorf("datagram %d: got %v, %v; want %v", i, f, err, dgrams[i])
		}
	}
}
