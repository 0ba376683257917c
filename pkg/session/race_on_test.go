//go:build race

package session

// raceEnabled: the race detector is on (its per-goroutine clock limits long
// single-goroutine loops such as 100,000 sequential streams).
const raceEnabled = true
