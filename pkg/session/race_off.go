//go:build !race

package session

// raceEnabled: the race detector is off (see race_on.go).
const raceEnabled = false
