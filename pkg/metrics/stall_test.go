package metrics

import (
	"bytes"
	"testing"
	"time"
)

func TestStallTimer(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	var s StallTimer
	s.Delivered(at(5000)) // before Begin: not a stall
	if got := s.Max(); got != 0 {
		t.Fatalf("before Begin: max %v, want 0", got)
	}
	s.Begin(at(0))
	s.Delivered(at(40))  // first byte after 40 ms
	s.Delivered(at(60))  // 20 ms
	s.Delivered(at(30))  // out of order clock: no interval, no step back
	s.Delivered(at(310)) // 250 ms: the longest
	s.Delivered(at(400)) // 90 ms
	s.End(at(500))       // 100 ms to the end
	if got, want := s.Max(), 250*time.Millisecond; got != want {
		t.Errorf("max %v, want %v", got, want)
	}
	s.Delivered(at(5000)) // after End: ignored
	if got, want := s.Max(), 250*time.Millisecond; got != want {
		t.Errorf("after End: max %v, want %v", got, want)
	}
}

func TestStallTimerEndLongest(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var s StallTimer
	s.Begin(t0)
	s.Delivered(t0.Add(10 * time.Millisecond))
	s.End(t0.Add(2 * time.Second)) // a download that failed after a long wait
	if got, want := s.Max(), 1990*time.Millisecond; got != want {
		t.Errorf("max %v, want %v", got, want)
	}
}

func TestStallWriter(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	var s StallTimer
	var buf bytes.Buffer
	w := StallWriter{W: &buf, T: &s, Now: func() time.Time { return now }}
	s.Begin(t0)
	now = t0.Add(70 * time.Millisecond)
	if n, err := w.Write([]byte("abc")); n != 3 || err != nil {
		t.Fatalf("write: %d %v", n, err)
	}
	now = t0.Add(900 * time.Millisecond)
	w.Write(nil) // no bytes: not a delivery
	now = t0.Add(100 * time.Millisecond)
	w.Write([]byte("d"))
	if got, want := s.Max(), 70*time.Millisecond; got != want {
		t.Errorf("max %v, want %v", got, want)
	}
	if buf.String() != "abcd" {
		t.Errorf("written %q, want abcd", buf.String())
	}
}
