package session

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/wire"
)

// Liveness and repair: what the session sends to keep a path alive, and
// what it sends again when a path stops delivering.

// RFC 9000 §10.1.2: "An endpoint might need to send ack-eliciting packets
// to avoid an idle timeout if it is expecting response data but does not
// have or is unable to send application data." A Dial side's paths send
// quic-go keep-alives (Config.QUIC nil: every 15 s, within quic-go's 30 s
// idle timeout), which carry no session frame: over 40 s of quiet the peer
// gets packets, no frame, and the path stays up.
func TestHarnessDialKeepAliveSendsNoFrames(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestClient(t, nil)
		before := tc.packetsFromSession(0)
		tc.advance(40 * time.Second)
		if fs := tc.drain(0); len(fs) > 0 {
			t.Errorf("40 s of quiet: the session sent %v, want no frame", fs)
		}
		if n := tc.packetsFromSession(0) - before; n < 2 {
			t.Errorf("40 s of quiet: %d packets, want the keep-alives (every 15 s)", n)
		}
		if err := tc.s.Err(); err != nil {
			t.Errorf("the session ended: %v", err)
		}
		if tc.paths[0].conn.Context().Err() != nil {
			t.Error("the path's QUIC connection idled out")
		}
	})
}

// RFC 9000 §13.3: "An endpoint SHOULD stop sending MAX_STREAM_DATA frames
// when the receiving part of the stream enters a "Size Known" or "Reset
// Recvd" state." The peer sends a stream's last 60,000 bytes with its FIN;
// the application reads them all, far more than the quarter window after
// which credit goes back (TestHarnessStreamCreditNotReturnedEarly), and the
// session sends no MAX_STREAM_DATA for it.
func TestHarnessNoMaxStreamDataAfterFin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const window = 64 << 10
		tc := newTestSession(t, &Config{StreamWindow: window, MaxStreamWindow: window})
		data := strings.Repeat("f", 60000)
		tc.writeFrames(0, dataFrame{ID: 0, Data: data}, finFrame{ID: 0})
		tc.advance(50 * time.Millisecond)
		tc.drain(0)
		st, err := tc.s.AcceptStream(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if got := tc.readAll(st, len(data)); !bytes.Equal(got, []byte(data)) {
			t.Fatal("read other bytes")
		}
		for _, f := range without(tc.collect(time.Second)[0]) {
			if m, ok := f.(maxDataFrame); ok {
				t.Errorf("%v for a stream whose final size is known", m)
			}
		}
	})
}

// peerAcks acknowledges, as a genuine receiver does, the segments it has
// seen: a cumulative part and ranges above the gaps (RFC 9000 §19.3.1's
// ACK Ranges).
type peerAcks struct{ seen map[uint64]bool }

func (a *peerAcks) add(fs []frame) {
	for _, f := range fs {
		if g, ok := f.(segmentFrame); ok {
			a.seen[g.Seq] = true
		}
	}
}

func (a *peerAcks) ack() ackFrame {
	var seqs []uint64
	for s := range a.seen {
		seqs = append(seqs, s)
	}
	slices.Sort(seqs)
	f := ackFrame{}
	for _, s := range seqs {
		switch {
		case s == f.Cum && f.Ranges == nil:
			f.Cum++
		case len(f.Ranges) > 0 && f.Ranges[len(f.Ranges)-1].End == s:
			f.Ranges[len(f.Ranges)-1].End++
		case len(f.Ranges) < wire.MaxAckRanges:
			f.Ranges = append(f.Ranges, wire.Range{Start: s, End: s + 1})
		}
	}
	return f
}

// RFC 9000 §13.3: "Application data sent in STREAM frames is retransmitted
// in new STREAM frames unless the endpoint has sent a RESET_STREAM for that
// stream." and RFC 9002 §6: loss is detected from acknowledgements. Over
// two paths a 900,000-byte response is under way when one path goes dark
// for good; the peer acknowledges, on the live path, what arrived. Every
// byte of the stream reaches the peer, the lost ones again on the live
// path.
func TestHarnessDeadPathDataSentAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const live, dead = 0, 1
		tc := newTestSession(t, nil, harnessLink(10*time.Millisecond), harnessLink(10*time.Millisecond))
		st, err := tc.s.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		const n = 900000 // within the peer's 1 MiB stream window
		go func() { st.Write(bytes.Repeat([]byte("z"), n)); st.Close() }()
		acks := peerAcks{seen: map[uint64]bool{}}
		var got rangeset
		fin := false
		var onDead int
		for step := range 300 {
			if step == 2 {
				tc.paths[dead].link.SetDown(true)
			}
			fs := tc.collect(20 * time.Millisecond)
			acks.add(fs[live])
			acks.add(fs[dead])
			for p, pfs := range fs {
				data, fins := streamData(pfs, st.ID())
				fin = fin || fins > 0
				for _, d := range data {
					lo, hi := d.Off, d.Off+uint64(len(d.Data))
					if p == dead {
						onDead += len(d.Data)
					}
					got.add(lo, hi)
				}
			}
			tc.writeFrames(live, acks.ack())
			if fin && covers(got, 0, n) {
				break
			}
		}
		if !fin || !covers(got, 0, n) {
			t.Fatalf("after 6 s the peer has the stream's bytes %v (fin %v), want 0-%d and the FIN", got, fin, n)
		}
		_, down := tc.paths[dead].link.Stats() // the session is the server: b to a
		if onDead == 0 || down.DroppedOutage == 0 {
			t.Fatalf("%d stream bytes reached the peer on the second path, %d packets lost on it: the test tests nothing", onDead, down.DroppedOutage)
		}
		t.Logf("%d stream bytes on the second path before it went dark, %d packets lost there", onDead, down.DroppedOutage)
		if err := tc.s.Err(); err != nil {
			t.Errorf("the session ended: %v", err)
		}
	})
}

// covers reports whether s holds all of [lo, hi).
func covers(s rangeset, lo, hi uint64) bool {
	return s.gaps(lo, hi, func(uint64, uint64) error { return errGap }) == nil
}

var errGap = errors.New("gap")

// RFC 9000 §13.3: "Cancellation of stream transmission, as carried in a
// RESET_STREAM frame, is sent until acknowledged or until all stream data
// is acknowledged by the peer". The reset goes out on the fast path, which
// goes dark before it arrives; the peer acknowledges what reaches it on the
// other path, and the reset reaches it there.
func TestHarnessLostResetSentAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const slow, fast = 0, 1
		tc := newTestSession(t, nil, harnessLink(20*time.Millisecond), harnessLink(5*time.Millisecond))
		st, err := tc.s.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		st.Write([]byte("abandoned"))
		tc.wantRecord("the data, on the fast path", fast, dataFrame{ID: st.ID(), Data: "abandoned"})
		tc.ackAll(fast)
		tc.advance(20 * time.Millisecond)
		tc.drain(fast)
		st.CancelWrite(8)
		tc.paths[fast].link.SetDown(true) // before the reset can arrive
		acks := peerAcks{seen: map[uint64]bool{}}
		resets := 0
		for range 150 {
			fs := tc.collect(20 * time.Millisecond)
			acks.add(fs[slow])
			for _, f := range fs[slow] {
				if r, ok := f.(resetFrame); ok && r == (resetFrame{ID: st.ID(), Code: 8}) {
					resets++
				}
			}
			tc.writeFrames(slow, acks.ack())
			if resets > 0 {
				break
			}
		}
		if resets == 0 {
			t.Fatal("the reset lost on the dark path never reached the peer on the other path")
		}
		if _, down := tc.paths[fast].link.Stats(); down.DroppedOutage == 0 { // the session is the server: b to a
			t.Fatal("nothing the session sent was lost on the fast path: the test tests nothing")
		}
	})
}

// RFC 9002 §6.2.4: "A probe packet MAY carry retransmitted unacknowledged
// data when new data is unavailable, when flow control does not permit new
// data to be sent, or to opportunistically reduce loss recovery delay."
// §6.2: "A PTO timer expiration event does not indicate packet loss". As
// TestHarnessDeadPathDataSentAgain, but with the time each byte is sent
// again: the stream's bytes lost on the dark path go again on the live one
// at the dark path's first probe timeout, while that path is still live,
// not failed, as copies (copyAtPTOLocked): 130 ms after the dark here.
// Without the copies they went only once the path had failed, 165 ms
// after the dark, with PathFailures already 1.
func TestHarnessDarkPathDataCopiedAtPTO(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		u := newDarkPathUpload(t, false)
		var got rangeset
		var liveMax uint64 // the highest stream offset seen on the live path
		for range 400 {
			fs := u.step()
			data, _ := streamData(fs[darkLive], u.st.ID())
			for _, d := range data {
				lo, hi := d.Off, d.Off+uint64(len(d.Data))
				// The framer takes a stream's bytes in order, so new data on
				// the live path comes at rising offsets: bytes below what it
				// already carried, not yet received, were framed for the
				// dark path and are sent again.
				if !u.darkAt.IsZero() && lo < liveMax && !covers(got, lo, hi) {
					after := time.Since(u.darkAt)
					fails := u.tc.s.Stats().PathFailures
					t.Logf("bytes %d-%d sent again on the live path %v after the dark, path failures %d", lo, hi, after, fails)
					if fails != 0 {
						t.Errorf("the bytes went again only after the path failed (%d failures)", fails)
					}
					if after > 150*time.Millisecond {
						t.Errorf("the bytes went again %v after the dark, want within 150 ms (a probe timeout of the dark path)", after)
					}
					return
				}
				liveMax = max(liveMax, hi)
			}
			for p := range fs {
				d, _ := streamData(fs[p], u.st.ID())
				for _, x := range d {
					got.add(x.Off, x.Off+uint64(len(x.Data)))
				}
			}
			u.ack()
		}
		t.Fatal("no byte lost on the dark path was sent again in 2 s")
	})
}

// TestHarnessPinnedDataNotCopiedAtPTO: a stream pinned to a path
// (Stream.SetPathPreference with pin) sends "only on that path while it is
// live". The copies made at a path's probe timeout (copyAtPTOLocked) are
// sent while the path is still live, so the pinned stream's bytes stay off
// the other path until the dark one fails; the scripted peer checks every
// frame the live path carries.
func TestHarnessPinnedDataNotCopiedAtPTO(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		u := newDarkPathUpload(t, true)
		deadID := u.tc.s.Paths()[darkDead]
		sawPTO := false
		for range 400 {
			fs := u.step()
			fails := u.tc.s.Stats().PathFailures
			u.tc.s.mu.Lock()
			for _, p := range u.tc.s.slots {
				if p != nil && p.id == deadID && !p.ptoCopyAt.IsZero() {
					sawPTO = true // copyAtPTOLocked ran for it
				}
			}
			u.tc.s.mu.Unlock()
			if data, _ := streamData(fs[darkLive], u.st.ID()); len(data) > 0 && fails == 0 {
				t.Fatalf("the pinned stream's bytes %d-%d went on the other path %v after the dark, while its path was live",
					data[0].Off, data[0].Off+uint64(len(data[0].Data)), time.Since(u.darkAt))
			}
			if fails > 0 {
				t.Logf("the dark path failed %v after the dark; none of the pinned stream's bytes went on the other path before", time.Since(u.darkAt))
				if !sawPTO {
					t.Error("the dark path failed before its first probe timeout: the test checks nothing")
				}
				return
			}
			u.ack()
		}
		t.Fatal("the dark path never failed in 2 s")
	})
}

// The paths of darkPathUpload: darkDead goes dark, darkLive stays.
const darkLive, darkDead = 0, 1

// darkPathUpload is the run of the dark-path tests: a 900,000-byte upload
// on one stream over two 10 ms paths to a scripted peer, path darkDead
// dark from the 8th step of 5 ms on, and every segment the peer sees on
// either path acknowledged on darkLive.
type darkPathUpload struct {
	tc     *testSession
	st     *Stream
	acks   peerAcks
	steps  int
	darkAt time.Time // when darkDead went dark (zero: not yet)
}

// newDarkPathUpload starts the upload, its stream pinned to darkDead if pin.
func newDarkPathUpload(t *testing.T, pin bool) *darkPathUpload {
	tc := newTestSession(t, nil, harnessLink(10*time.Millisecond), harnessLink(10*time.Millisecond))
	st, err := tc.s.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	if pin {
		st.SetPathPreference(tc.s.Paths()[darkDead], true)
	}
	go func() { st.Write(bytes.Repeat([]byte("z"), 900000)); st.Close() }()
	return &darkPathUpload{tc: tc, st: st, acks: peerAcks{seen: map[uint64]bool{}}}
}

// step darkens darkDead at the 8th call, collects the frames each path
// carries for 5 ms and notes their segments for the next Ack.
func (u *darkPathUpload) step() [][]frame {
	if u.steps == 8 {
		u.tc.paths[darkDead].link.SetDown(true)
		u.darkAt = time.Now()
	}
	u.steps++
	fs := u.tc.collect(5 * time.Millisecond)
	u.acks.add(fs[darkLive])
	u.acks.add(fs[darkDead])
	return fs
}

// ack acknowledges on darkLive every segment seen so far.
func (u *darkPathUpload) ack() { u.tc.writeFrames(darkLive, u.acks.ack()) }
