package cc

import "testing"

func TestRenoAcked(t *testing.T) {
	// RFC 5681 §3.1: "cwnd += SMSS*SMSS/cwnd" per ACK of one full segment;
	// counted in bytes (RFC 3465), acked bytes add acked·SMSS/cwnd.
	for _, r := range []Reno{{}, {Friendly: true}} {
		paths := []Path{path(10000, 10), path(50000, 200)}
		// 1000·1000/10000 = 100 bytes; 1500·1000/10000 = 150 bytes.
		wantClose(t, r.Name()+" one segment", r.Acked(0, 1000, paths), 100)
		wantClose(t, r.Name()+" 1.5 segments", r.Acked(0, 1500, paths), 150)
		// The other path does not matter: 1000·1000/50000 = 20 bytes.
		wantClose(t, r.Name()+" path 1", r.Acked(1, 1000, paths), 20)
		// A path with no RTT sample still grows as Reno.
		paths[1].RTT = 0
		wantClose(t, r.Name()+" no RTT", r.Acked(1, 1000, paths), 20)
	}
}

func TestRenoLost(t *testing.T) {
	// RFC 5681 §3.1, eq. 4: "ssthresh = max (FlightSize / 2, 2*SMSS)".
	r := Reno{Friendly: true}
	paths := []Path{path(10000, 10), path(3000, 10)}
	wantClose(t, "halve 10000", r.Lost(0, paths), 5000)
	// 3000/2 = 1500 < 2·1000: the floor.
	wantClose(t, "floor", r.Lost(1, paths), 2000)
}

func TestRenoNames(t *testing.T) {
	if got := (Reno{}).Name(); got != NameNone {
		t.Errorf("Reno{}.Name() = %q, want %q", got, NameNone)
	}
	if got := (Reno{Friendly: true}).Name(); got != NameRenoFriendly {
		t.Errorf("Reno{Friendly}.Name() = %q, want %q", got, NameRenoFriendly)
	}
}
