package session

import (
	"context"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// Stream frames as the session sends them (RFC 9000 §2, §3.1, §19.8), seen
// by the scripted peer of harness_test.go.

// streamData returns the data frames of stream id among fs, and how many
// FINs it got.
func streamData(fs []frame, id uint64) (data []dataFrame, fins int) {
	for _, f := range fs {
		switch f := f.(type) {
		case dataFrame:
			if f.ID == id {
				data = append(data, f)
			}
		case finFrame:
			if f.ID == id {
				fins++
			}
		}
	}
	return data, fins
}

// RFC 9000 §19.8: "Offset: A variable-length integer specifying the byte
// offset in the stream for the data in this STREAM frame." and §2.2: "The
// data at a given offset MUST NOT change if it is sent multiple times".
// Three writes of different sizes go out as STREAM frames whose offsets
// follow one another, each byte once, with the bytes written.
func TestHarnessStreamOffsetsContiguous(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil)
		st, err := tc.s.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		var written strings.Builder
		for k, n := range []int{3, 5000, 700} {
			p := strings.Repeat(string(rune('a'+k)), n)
			written.WriteString(p)
			if _, err := st.Write([]byte(p)); err != nil {
				t.Fatal(err)
			}
		}
		var got strings.Builder
		data, _ := streamData(tc.collect(100 * time.Millisecond)[0], st.ID())
		for _, d := range data {
			if d.Off != uint64(got.Len()) {
				t.Fatalf("a STREAM frame at offset %d after %d bytes: %v", d.Off, got.Len(), data)
			}
			got.WriteString(d.Data)
		}
		if got.String() != written.String() {
			t.Errorf("the STREAM frames carry %d bytes, want the %d written, in order", got.Len(), written.Len())
		}
		tc.ackAll(0)
		tc.wantIdle("every byte sent once, and acknowledged")
	})
}

// RFC 9000 §3.1: "After the application indicates that all stream data has
// been sent and a STREAM frame containing the FIN bit is sent, the sending
// part of the stream enters the "Data Sent" state." and §4.5: "Once a final
// size for a stream is known, it cannot change." Close sends one FIN, after
// the last byte; a second Close sends nothing, and a Write after it fails.
func TestHarnessFinSentOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil)
		st := tc.openWritten("the body")
		st.Close()
		st.Close()
		if _, err := st.Write([]byte("more")); err == nil {
			t.Error("Write after Close succeeded")
		}
		tc.wantRecord("the data", 0, dataFrame{ID: st.ID(), Data: "the body"})
		tc.wantRecord("then the FIN", 0, finFrame{ID: st.ID()})
		tc.ackAll(0)
		tc.wantIdle("one FIN for two Closes")
	})
}

// RFC 9000 §3.1: "Sending the first STREAM or STREAM_DATA_BLOCKED frame
// causes a sending part of a stream to enter the "Send" state." A stream
// closed before any Write still tells the peer it exists and has ended: a
// STREAM frame with no data and the FIN.
func TestHarnessEmptyStreamSendsFin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil)
		st, err := tc.s.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		tc.wantIdle("an opened stream with nothing written sends nothing")
		st.Close()
		wantFrameType[segmentFrame](tc, "Close: a segment", 0)
		tc.wantFrame("a STREAM frame with only the FIN", 0, finFrame{ID: st.ID()})
		tc.ackAll(0)
		tc.wantIdle("nothing more")
	})
}

// RFC 9000 §2.1: "The least significant bit (0x01) of the stream ID
// identifies the initiator of the stream. Client-initiated streams have
// even-numbered stream IDs (with the bit set to 0), and server-initiated
// streams have odd-numbered stream IDs (with the bit set to 1)." and "The
// stream space for each type begins at the minimum value (0x00 through
// 0x03, respectively); successive streams of each type are created with
// numerically increasing stream IDs." The IDs of the STREAM frames each
// side sends for its first two streams of each type.
func TestHarnessStreamIDsOnTheWire(t *testing.T) {
	for _, side := range harnessSides {
		t.Run(side.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tc := side.new(t, nil)
				var low uint64 = 1 // the Listen side is the server
				if side.name == "dial" {
					low = 0
				}
				want := []uint64{low, low + 4, low | 2, (low | 2) + 4}
				var ids []uint64
				for k := range 4 {
					var w io.WriteCloser
					if k < 2 {
						st, err := tc.s.OpenStream()
						if err != nil {
							t.Fatal(err)
						}
						w = st
					} else {
						st, err := tc.s.OpenUniStream()
						if err != nil {
							t.Fatal(err)
						}
						w = st
					}
					if _, err := fmt.Fprintf(w, "stream %d", k); err != nil {
						t.Fatal(err)
					}
					w.Close()
				}
				for _, f := range without(tc.collect(100 * time.Millisecond)[0]) {
					if d, ok := f.(dataFrame); ok {
						ids = append(ids, d.ID)
					}
				}
				if fmt.Sprint(ids) != fmt.Sprint(want) {
					t.Errorf("STREAM frames for streams %v, want %v", ids, want)
				}
			})
		})
	}
}

// RFC 9000 §13.3: "Application data sent in STREAM frames is retransmitted
// in new STREAM frames unless the endpoint has sent a RESET_STREAM for that
// stream. Once an endpoint sends a RESET_STREAM frame, no further STREAM
// frames are needed." A write larger than the peer's initial window waits
// for credit; CancelWrite sends the reset, and when the peer then opens its
// window, none of the rest goes out.
func TestHarnessNoStreamDataAfterReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		params := peerParams
		params.MaxData = InitialWindow
		tc := newTestSessionParams(t, nil, params)
		st, err := tc.s.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		go st.Write(make([]byte, 200000))
		data, _ := streamData(tc.collect(time.Second)[0], st.ID())
		var end uint64
		for _, d := range data {
			end = max(end, d.Off+uint64(len(d.Data)))
		}
		if end == 0 || end >= 200000 {
			t.Fatalf("with the handshake's credit: sent up to byte %d, want some of the write, within it", end)
		}
		st.CancelWrite(3)
		tc.wantRecord("CancelWrite(3): RESET_STREAM", 0, resetFrame{ID: st.ID(), Code: 3})
		tc.ackAll(0)
		tc.writeFrames(0, ackFrame{Cum: 0, MaxData: 1 << 20})
		for _, f := range without(tc.collect(time.Second)[0]) {
			t.Errorf("after the reset and a window of 1 MiB: %v", f)
		}
		tc.wantIdle("nothing more for a reset stream")
	})
}

// RFC 9000 §3.1: "From any state that is one of "Ready", "Send", or "Data
// Sent", an application can signal that it wishes to abandon transmission
// of stream data" ... "the endpoint sends a RESET_STREAM frame, which causes
// the stream to enter the "Reset Sent" state." From "Reset Sent" there is
// no second reset: a second CancelWrite, with another code, sends nothing.
func TestHarnessCancelWriteTwiceOneReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil)
		st := tc.openWritten("x")
		tc.wantRecord("the data", 0, dataFrame{ID: st.ID(), Data: "x"})
		st.CancelWrite(1)
		st.CancelWrite(2)
		tc.wantRecord("one RESET_STREAM, with the first code", 0, resetFrame{ID: st.ID(), Code: 1})
		tc.ackAll(0)
		for _, f := range without(tc.collect(time.Second)[0]) {
			t.Errorf("after the first reset: %v", f)
		}
		tc.wantIdle("one reset")
	})
}

// RFC 9000 §3.1, as above: a stream in "Data Sent" (its FIN sent, not yet
// acknowledged) can still be reset, and CancelWrite sends RESET_STREAM.
func TestHarnessCancelWriteInDataSent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil)
		st, err := tc.s.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		st.Write([]byte("all of it"))
		st.Close()
		tc.wantRecord("the data", 0, dataFrame{ID: st.ID(), Data: "all of it"})
		tc.wantRecord("the FIN", 0, finFrame{ID: st.ID()})
		st.CancelWrite(4)
		tc.wantRecord("Data Sent, unacknowledged: CancelWrite sends RESET_STREAM", 0, resetFrame{ID: st.ID(), Code: 4})
		tc.ackAll(0)
		tc.wantIdle("one reset")
	})
}

// RFC 9000 §3.1: "Once all stream data has been successfully acknowledged,
// the sending part of the stream enters the "Data Recvd" state, which is a
// terminal state." A CancelWrite after the peer acknowledged every byte and
// the FIN sends nothing.
func TestHarnessCancelWriteAfterDataRecvd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil)
		st, err := tc.s.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		st.Write([]byte("all of it"))
		st.Close()
		tc.wantRecord("the data", 0, dataFrame{ID: st.ID(), Data: "all of it"})
		tc.wantRecord("the FIN", 0, finFrame{ID: st.ID()})
		tc.ackAll(0)
		tc.advance(50 * time.Millisecond)
		st.CancelWrite(4)
		tc.wantIdle("Data Recvd is terminal: no RESET_STREAM")
	})
}

// RFC 9000 §3.5: "An endpoint that receives a STOP_SENDING frame MUST send
// a RESET_STREAM frame if the stream is in the "Ready" or "Send" state."
// Not in "Data Recvd": a STOP_SENDING that arrives after every byte and the
// FIN were acknowledged is answered by nothing but the Ack of its segment.
func TestHarnessStopSendingAfterDataRecvd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil)
		tc.writeFrames(0, dataFrame{ID: 0, Data: "request"}, finFrame{ID: 0})
		st, err := tc.s.AcceptStream(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		st.Write([]byte("response"))
		st.Close()
		tc.wantRecord("the response", 0, dataFrame{ID: 0, Data: "response"})
		tc.wantRecord("its FIN", 0, finFrame{ID: 0})
		tc.ackAll(0)
		tc.advance(50 * time.Millisecond)
		tc.drain(0)
		tc.writeFrames(0, stopFrame{ID: 0, Code: 6})
		tc.wantAck("the STOP_SENDING's segment is acknowledged", 0, 2)
		tc.wantIdle("no RESET_STREAM for a stream in Data Recvd")
	})
}

// Issue 30, what to build, item 4: "A 1,200-byte Write is one frame." At
// a8db118 it became two segments, "because the 4-byte record header no
// longer fits"; with 1,200-byte segments it was still two STREAM frames
// (1,196 and 4 bytes) in two segments. The peer sees one segment carrying
// one STREAM frame with all 1,200 bytes.
func TestHarnessWriteOf1200BytesIsOneFrame(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil)
		defer tc.close()
		body := strings.Repeat("x", 1200)
		st := tc.openWritten(body)
		var frames []frame
		for {
			f, _ := tc.readFrame(0)
			if f == nil {
				break
			}
			switch f.(type) {
			case segmentFrame, dataFrame:
				frames = append(frames, f)
			}
		}
		if len(frames) != 2 {
			t.Fatalf("the peer saw %v, want one segment and one STREAM frame", frames)
		}
		if g, ok := frames[0].(segmentFrame); !ok || g.Len > uint64(DefaultSegmentSize) {
			t.Errorf("first %v, want a segment of at most %d bytes", frames[0], DefaultSegmentSize)
		}
		if want := (dataFrame{ID: st.ID(), Data: body}); !reflect.DeepEqual(frames[1], want) {
			t.Errorf("then %v, want all 1,200 bytes in one STREAM frame", frames[1])
		}
	})
}
