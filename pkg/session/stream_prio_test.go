package session

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/internal/alloctest"
	"github.com/mpqsched/mpqsched/pkg/wire"
	"github.com/mpqsched/mpqsched/sched"
)

// framedRec is one record the session framed: its stream and data length
// (fin: the stream's end).
type framedRec struct {
	id  uint64
	n   int
	fin bool
}

// framedSegment is one segment the session cut: its size and the stream it
// names as its data's (segment.stream).
type framedSegment struct {
	stream *Stream
	size   int
}

// frameAll has the session frame everything it can (with a 4 MiB window
// from the peer) and cut it into segments, as the scheduler's SendNext
// would; it returns the stream records in the order framed, and the
// segments.
func frameAll(t *testing.T, s *Session) ([]framedRec, []framedSegment) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	sn := &s.snd
	sn.segLimit = 4 << 20
	var stream []byte
	var segs []framedSegment
	for {
		s.fillLocked(int(sn.segSize))
		g := sn.cut()
		if g == nil {
			break
		}
		segs = append(segs, framedSegment{g.stream, int(g.size)})
		stream = appendPayload(stream, g)
	}
	return parseRecords(t, stream), segs
}

// parseRecords splits the frames of the segments cut into their stream
// frames (control frames are skipped): one entry per STREAM frame's data,
// and one for its FIN.
func parseRecords(t *testing.T, b []byte) []framedRec {
	t.Helper()
	var log frameLog
	if err := wire.ParseFrames(b, &log); err != nil {
		t.Fatal(err)
	}
	var recs []framedRec
	for _, f := range log.recs {
		switch f.typ {
		case frData:
			recs = append(recs, framedRec{id: f.id, n: int(f.n)})
		case frFin:
			recs = append(recs, framedRec{id: f.id, fin: true})
		}
	}
	return recs
}

// order renders records as "id×count" runs, e.g. "9×3 1×3 fin9".
func order(recs []framedRec) string {
	var b strings.Builder
	for i := 0; i < len(recs); {
		r := recs[i]
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		if r.fin {
			fmt.Fprintf(&b, "fin%d", r.id)
			i++
			continue
		}
		j := i
		for j < len(recs) && !recs[j].fin && recs[j].id == r.id {
			j++
		}
		fmt.Fprintf(&b, "%d×%d", r.id, j-i)
		i = j
	}
	return b.String()
}

// openPrio opens a stream on the scripted peer's session with a priority.
func openPrio(t *testing.T, s *Session, urgency uint8, incremental bool) *Stream {
	t.Helper()
	st, err := s.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	st.SetPriority(urgency, incremental)
	return st
}

// write writes n segments' worth of data to st.
func write(t *testing.T, st *Stream, segs int) {
	t.Helper()
	// A STREAM frame's data and header fill a segment (fillLocked): a
	// segment's worth of data less the largest header is one frame each.
	// Frames end where segments end, so the last frame of a stream's data
	// leaves room in its segment that the next stream's first frame takes:
	// a stream framed after another's end takes one frame more (the "×4"
	// of three segments' worth), and a turn can be a short frame.
	if _, err := st.Write(make([]byte, segs*(DefaultSegmentSize-maxFrameHeader))); err != nil {
		t.Fatal(err)
	}
}

// RFC 9218 §4.1: "The default value is 3"; §4.2: "The default value of the
// incremental parameter is false (0)."
func TestStreamPriorityDefaults(t *testing.T) {
	sp := newScriptedPeer(t, nil)
	defer sp.close()
	st, err := sp.s.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	// Urgency 3 is RFC 9218's default; incremental keeps quic-go's
	// round-robin among streams that set no priority.
	if u, inc := st.Priority(); u != 3 || !inc {
		t.Errorf("new stream: priority (%d, %v), want (3, true)", u, inc)
	}
	// "The urgency (u) parameter takes an integer between 0 and 7": larger
	// values are clamped to the least urgent level.
	st.SetPriority(200, false)
	if u, inc := st.Priority(); u != 7 || inc {
		t.Errorf("SetPriority(200, false): priority (%d, %v), want (7, false)", u, inc)
	}
	// The HTTP/3 code reaches it through an interface assertion.
	var _ interface{ SetPriority(uint8, bool) } = st
	var _ interface{ SetPriority(uint8, bool) } = (*SendStream)(st)
}

// RFC 9218 §10: "It is RECOMMENDED that, when possible, servers respect the
// urgency parameter (Section 4.1), sending higher-urgency responses before
// lower-urgency responses." Streams written least urgent first are framed
// most urgent first, every record of a level before the next level's.
func TestFramerUrgencyOrder(t *testing.T) {
	sp := newScriptedPeer(t, nil)
	defer sp.close()
	a := openPrio(t, sp.s, 5, false) // ID 1
	b := openPrio(t, sp.s, 3, false) // ID 5
	c := openPrio(t, sp.s, 0, true)  // ID 9
	for _, st := range []*Stream{a, b, c} {
		write(t, st, 3)
	}
	c.Close()
	recs, _ := frameAll(t, sp.s)
	if got, want := order(recs), "9×3 fin9 5×4 1×4"; got != want {
		t.Errorf("framed %q, want %q (urgency 0, then 3, then 5)", got, want)
	}
}

// RFC 9218 §10: "Non-incremental responses of the same urgency SHOULD be
// served by prioritizing bandwidth allocation in ascending order of the
// stream ID, which corresponds to the order in which clients make
// requests." (The issue's "§4 ... in order of their stream ID" is this
// sentence of §10; §4.2 says "Serving non-incremental responses with the
// same urgency one by one, in the order in which those requests were
// generated, is considered to be the best strategy.") Streams that became
// ready in the order 9, 1, 5 are framed one at a time, 1, 5, 9, each to
// its end.
func TestFramerNonIncrementalByID(t *testing.T) {
	sp := newScriptedPeer(t, nil)
	defer sp.close()
	s1, s5, s9 := openPrio(t, sp.s, 3, false), openPrio(t, sp.s, 3, false), openPrio(t, sp.s, 3, false)
	write(t, s9, 3)
	write(t, s1, 3)
	write(t, s5, 3)
	s1.Close()
	recs, _ := frameAll(t, sp.s)
	if got, want := order(recs), "1×3 fin1 5×4 9×4"; got != want {
		t.Errorf("framed %q, want %q (one stream at a time, ascending IDs)", got, want)
	}
}

// RFC 9218 §10: "Incremental responses of the same urgency SHOULD be served
// by sharing bandwidth among them." Incremental streams take one record
// (at most a segment of data) each in turn, in the order they became ready.
func TestFramerIncrementalRoundRobin(t *testing.T) {
	sp := newScriptedPeer(t, nil)
	defer sp.close()
	s1, s5, s9 := openPrio(t, sp.s, 2, true), openPrio(t, sp.s, 2, true), openPrio(t, sp.s, 2, true)
	write(t, s9, 2)
	write(t, s1, 3)
	write(t, s5, 2)
	recs, _ := frameAll(t, sp.s)
	if got, want := order(recs), "9×1 1×1 5×1 9×1 1×1 5×1 1×3"; got != want {
		t.Errorf("framed %q, want %q (round-robin)", got, want)
	}
}

// RFC 9218 §10: "There can be scenarios where a server will need to
// schedule multiple incremental and non-incremental responses at the same
// urgency level. ... It is RECOMMENDED that servers avoid such starvation
// where possible. The method for doing so is an implementation decision."
// Here: at one urgency, the non-incremental stream at the front and the
// incremental streams take turns record by record, and a more urgent
// stream still goes before both.
func TestFramerMixedSameUrgency(t *testing.T) {
	sp := newScriptedPeer(t, nil)
	defer sp.close()
	big := openPrio(t, sp.s, 3, false)  // ID 1: a large non-incremental response
	s5 := openPrio(t, sp.s, 3, true)    // ID 5
	s9 := openPrio(t, sp.s, 3, true)    // ID 9
	late := openPrio(t, sp.s, 3, false) // ID 13: waits for ID 1
	write(t, big, 4)
	write(t, s5, 2)
	write(t, s9, 1)
	write(t, late, 1)
	recs, _ := frameAll(t, sp.s)
	if got, want := order(recs), "1×1 5×1 1×1 9×1 1×1 5×1 1×3 13×2"; got != want {
		t.Errorf("framed %q, want %q (turns between the non-incremental head and the incremental streams)", got, want)
	}
}

// A priority change moves a stream that waits in the ready queue: the
// framer takes the stream made urgent first (RFC 9218 §6: "After a client
// sends a request, it may be beneficial to change the priority of the
// response").
func TestFramerReprioritize(t *testing.T) {
	sp := newScriptedPeer(t, nil)
	defer sp.close()
	s1 := openPrio(t, sp.s, 3, false)
	s5 := openPrio(t, sp.s, 7, true)
	s9 := openPrio(t, sp.s, 7, false)
	write(t, s1, 2)
	write(t, s5, 2)
	write(t, s9, 1)
	s5.SetPriority(0, false)
	s1.SetPriority(3, true) // same urgency, now incremental: still before 7
	recs, _ := frameAll(t, sp.s)
	if got, want := order(recs), "5×2 1×3 9×2"; got != want {
		t.Errorf("framed %q, want %q", got, want)
	}
}

// "The data's stream" that the scheduler sees is the stream of the first
// record that begins in the segment; a segment in which no record begins
// names the record it continues.
func TestSegmentNamesFirstNewRecord(t *testing.T) {
	sp := newScriptedPeer(t, nil)
	defer sp.close()
	small := openPrio(t, sp.s, 0, false) // ID 1
	bulk := openPrio(t, sp.s, 3, false)  // ID 5
	if _, err := small.Write(make([]byte, 100)); err != nil {
		t.Fatal(err)
	}
	write(t, bulk, 3)
	_, segs := frameAll(t, sp.s)
	if len(segs) < 4 {
		t.Fatalf("%d segments, want ≥ 4", len(segs))
	}
	// Segment 0: the small record, then the start of bulk's first record.
	// Segment 1 continues bulk's first record and holds the start of its
	// second: bulk. So does every later one.
	for k, g := range segs {
		want := bulk
		if k == 0 {
			want = small
		}
		if g.stream != want {
			t.Errorf("segment %d names stream %v, want %d", k, g.stream, want.id)
		}
	}
}

// ConnInfo, as the session builds it before Decide, carries the next
// segment's stream, its urgency, incremental flag, deadline hint and path
// preference; a segment of control records only carries none.
func TestConnInfoStreamFields(t *testing.T) {
	sp := newScriptedPeer(t, nil)
	defer sp.close()
	st := openPrio(t, sp.s, 1, true)
	dl := time.Date(2026, 11, 25, 17, 0, 0, 0, time.UTC)
	st.SetDeadlineHint(dl)
	st.SetPathPreference(7, true)
	write(t, st, 2)
	s := sp.s
	s.mu.Lock()
	s.snd.segLimit = 4 << 20
	s.fillLocked(int(s.snd.segSize))
	ci := s.connInfoLocked(dl)
	s.mu.Unlock()
	want := sched.ConnInfo{HasStream: true, StreamID: st.id, Urgency: 1, Incremental: true, Deadline: dl, PreferredPath: 7, Preference: sched.PinPath}
	got := sched.ConnInfo{HasStream: ci.HasStream, StreamID: ci.StreamID, Urgency: ci.Urgency, Incremental: ci.Incremental, Deadline: ci.Deadline, PreferredPath: ci.PreferredPath, Preference: ci.Preference}
	if got != want {
		t.Errorf("ConnInfo stream fields %+v, want %+v", got, want)
	}
	st.ClearPathPreference()
	st.SetDeadlineHint(time.Time{})
	s.mu.Lock()
	ci = s.connInfoLocked(dl)
	s.mu.Unlock()
	if ci.Preference != sched.NoPreference || !ci.Deadline.IsZero() {
		t.Errorf("after clearing: preference %v deadline %v, want none", ci.Preference, ci.Deadline)
	}

	// Only control records: no stream.
	sp2 := newScriptedPeer(t, nil)
	defer sp2.close()
	s = sp2.s
	s.mu.Lock()
	s.streams.peer[bidi].maxDue = true
	s.fillLocked(int(s.snd.segSize))
	ci = s.connInfoLocked(dl)
	s.mu.Unlock()
	if ci.HasStream {
		t.Errorf("control records only: HasStream, stream %d", ci.StreamID)
	}
}

// Picking from the urgency levels and rotating does not allocate once the
// arrays have their size, whatever the mix of levels and kinds; nor does
// marking records and cutting them.
func TestReadyQueueAllocs(t *testing.T) {
	var q readyQueue
	for i := range 12 {
		st := &Stream{id: uint64(4 * i)}
		st.prio.urgency, st.prio.incremental = uint8(i%3), i%2 == 0
		q.Push(st)
	}
	if a := alloctest.Mallocs(1000, func() { q.Front(); q.done(true) }); a != 0 && !raceEnabled {
		t.Errorf("rotation: %d allocations in 1000, want 0", a)
	}
	if a := alloctest.Mallocs(1000, func() { q.Front(); q.Push(q.done(false)) }); a != 0 && !raceEnabled {
		t.Errorf("leave and come back: %d allocations in 1000, want 0", a)
	}
	var m recordMarks
	a, b := &Stream{id: 1}, &Stream{id: 5}
	var off uint64
	if n := alloctest.Mallocs(1000, func() {
		m.add(off, a)
		m.add(off+100, b)
		off += 1200
		m.take(off)
	}); n != 0 && !raceEnabled {
		t.Errorf("marks: %d allocations in 1000, want 0", n)
	}
}

// The ready queue keeps its invariants under any sequence of pushes, picks
// and priority changes: every queued stream is picked eventually, none
// twice at once, and Len counts them.
func TestReadyQueueModel(t *testing.T) {
	var q readyQueue
	streams := make([]*Stream, 40)
	in := map[*Stream]bool{}
	for i := range streams {
		streams[i] = &Stream{id: uint64(4 * i)}
	}
	x := uint32(1)
	rnd := func(n int) int { x ^= x << 13; x ^= x >> 17; x ^= x << 5; return int(x % uint32(n)) }
	for step := range 20000 {
		st := streams[rnd(len(streams))]
		switch rnd(4) {
		case 0:
			if !in[st] {
				st.prio.urgency, st.prio.incremental = uint8(rnd(8)), rnd(2) == 0
				q.Push(st)
				in[st] = true
			}
		case 1:
			if in[st] {
				q.remove(st)
				st.prio.urgency = uint8(rnd(8))
				q.Push(st)
			}
		default:
			if q.Len() == 0 {
				continue
			}
			f := q.Front()
			if !in[f] {
				t.Fatalf("step %d: Front %d is not queued", step, f.id)
			}
			// Front picks the most urgent level.
			for o := range in {
				if o.prio.urgency < f.prio.urgency {
					t.Fatalf("step %d: picked urgency %d while %d waits at %d", step, f.prio.urgency, o.id, o.prio.urgency)
				}
			}
			again := rnd(3) > 0
			if got := q.done(again); got != f {
				t.Fatalf("step %d: done returned %d, Front %d", step, got.id, f.id)
			}
			if !again {
				delete(in, f)
			}
		}
		if q.Len() != len(in) {
			t.Fatalf("step %d: Len %d, want %d", step, q.Len(), len(in))
		}
	}
}
