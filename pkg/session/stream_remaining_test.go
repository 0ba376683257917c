package session

import (
	"testing"
	"time"
)

// Issue 22, item 4, the stream-aware scheduler: "each stream's next data
// goes to the path with the earliest estimated completion for that stream",
// which needs the stream's bytes still to send. ConnInfo.StreamRemaining is
// the next segment's stream's written, not yet framed bytes: 10 segments
// written, one framed into the next segment, leaves 9 (less the record
// header the framer took from the first segment's room).
func TestConnInfoStreamRemaining(t *testing.T) {
	sp := newScriptedPeer(t, nil)
	defer sp.close()
	st := openPrio(t, sp.s, 3, false)
	write(t, st, 10)
	s := sp.s
	s.mu.Lock()
	s.snd.segLimit = 4 << 20
	s.fillLocked(int(s.snd.segSize))
	ci := s.connInfoLocked(time.Now())
	s.mu.Unlock()
	if !ci.HasStream || ci.StreamID != st.id {
		t.Fatalf("ConnInfo names stream %v (%d), want %d", ci.HasStream, ci.StreamID, st.id)
	}
	written := uint64(10 * DefaultSegmentSize)
	if lo, hi := written-2*uint64(DefaultSegmentSize), written-uint64(DefaultSegmentSize)/2; ci.StreamRemaining < lo || ci.StreamRemaining > hi {
		t.Errorf("StreamRemaining = %d, want in [%d, %d]: 10 segments written, about one framed", ci.StreamRemaining, lo, hi)
	}
}
