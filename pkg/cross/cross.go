// Package cross generates cross traffic over the in-process emulator
// (pkg/emu): flows that compete with a multipath session for the links it
// uses, as in the RFC 6356 and OLIA experiments. Each flow runs between the
// two endpoints of an emu.Topology.AddFlow pair and carries data from its
// server to its client (a download, like the session's transfers), so it
// competes on the Down direction of the links it crosses.
//
// Two kinds of flow:
//   - Bulk: one long-lived single-path quic-go connection that downloads
//     without pause from Spec.Start to Spec.Stop. Its congestion control is
//     quic-go's own (NewReno-like, with β = 0.7, pacing and undo of spurious
//     cutbacks); nothing is configured.
//   - OnOff: on and off periods of exponentially distributed lengths (means
//     Spec.MeanOn and Spec.MeanOff, drawn from a stream seeded by the flow's
//     seed), starting with an on period at Spec.Start. With
//     Spec.CBRRateBps = 0 each on period is a quic-go transfer on one
//     persistent connection: a new unidirectional stream written for the
//     length of the period and then reset, so the connection's congestion
//     state carries over between periods, as a persistent HTTP connection's
//     would. With CBRRateBps > 0 each on period is an unresponsive UDP
//     constant-bit-rate source at that rate (1200-byte payloads), which does
//     not back off when the link is congested.
//
// Every flow records its goodput over time, bytes delivered to its client
// per Spec.Step interval, so that a fairness report can set it beside the
// session's. Times are relative to the emulated Network's start.
package cross

import (
	"fmt"
	"time"
)

// Kind is the type of a cross-traffic flow.
type Kind string

// The kinds of flow.
const (
	Bulk  Kind = "bulk"  // a long-lived quic-go download
	OnOff Kind = "onoff" // exponential on and off periods
)

// DefaultStep is the goodput sample interval when Spec.Step is 0.
const DefaultStep = 100 * time.Millisecond

// CBRPayload is the UDP payload of an on/off CBR source, bytes.
const CBRPayload = 1200

// Spec describes one flow. Times are relative to the Network start.
type Spec struct {
	Kind       Kind          // Bulk or OnOff
	Start      time.Duration // when the flow starts (dials, or starts sending)
	Stop       time.Duration // when it stops sending; 0 = until Flow.Stop
	MeanOn     time.Duration // OnOff: mean length of an on period (> 0)
	MeanOff    time.Duration // OnOff: mean length of an off period (> 0)
	CBRRateBps float64       // OnOff: > 0 makes on periods UDP CBR at this rate, bits/s of payload + emu.Overhead; 0 = quic-go transfers
	Step       time.Duration // goodput sample interval; 0 = DefaultStep
}

// Validate reports the first invalid field of s, naming it.
func (s Spec) Validate() error {
	bad := func(field string, v any, why string) error {
		return fmt.Errorf("cross: Spec.%s = %v: %s", field, v, why)
	}
	switch {
	case s.Kind != Bulk && s.Kind != OnOff:
		return bad("Kind", s.Kind, `must be "bulk" or "onoff"`)
	case s.Start < 0:
		return bad("Start", s.Start, "must be >= 0")
	case s.Stop != 0 && s.Stop <= s.Start:
		return bad("Stop", s.Stop, "must be after Start (or 0: until Flow.Stop)")
	case s.Step < 0:
		return bad("Step", s.Step, "must be >= 0 (0 = DefaultStep)")
	case s.Kind == Bulk && (s.MeanOn != 0 || s.MeanOff != 0 || s.CBRRateBps != 0):
		return bad("Kind", s.Kind, "a bulk flow takes no MeanOn, MeanOff or CBRRateBps")
	case s.Kind == OnOff && s.MeanOn <= 0:
		return bad("MeanOn", s.MeanOn, "must be > 0")
	case s.Kind == OnOff && s.MeanOff <= 0:
		return bad("MeanOff", s.MeanOff, "must be > 0")
	case !(s.CBRRateBps >= 0 && s.CBRRateBps < 1e15):
		return bad("CBRRateBps", s.CBRRateBps, "must be >= 0 and finite")
	}
	return nil
}

func (s Spec) step() time.Duration {
	if s.Step > 0 {
		return s.Step
	}
	return DefaultStep
}
