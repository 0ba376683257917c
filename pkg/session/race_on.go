//go:build race

package session

// raceEnabled: the race detector is on. Tests use it for long
// single-goroutine loops (the detector's per-goroutine clock limits them,
// e.g. 100,000 sequential streams); dialJoin uses it to keep clear of a data
// race inside quic-go v0.65 (join_early.go, raceSafeOpen).
const raceEnabled = true
