package session

import "time"

// MinReportInterval is the shortest report period Config.ReportPerMinRTT
// gives, however short a path's RTT: a floor on the reports a receiver
// sends (one per MinReportInterval at most, about 30 bytes each).
const MinReportInterval = time.Millisecond

// reportIntervalLocked is the receiver reports' period at this moment:
// Config.ReportInterval, or with Config.ReportPerMinRTT the smallest MinRTT
// over this end's live paths when that is shorter, floored at
// MinReportInterval. EdAR's decision interval is that minimum as the
// sender measures it, and the paper's receiver observes its reward features
// once per interval (§IV.B.3: "At each TI, the receiver observes the
// average goodput G_t of the entire MPTCP connection, average throughput of
// each subflow"; "TI_t = min_i r_{t−1}^i"). With a fixed 20 ms period a
// path of 8 ms RTT left most intervals without a report, so without a
// reward (docs/edar-generalisation.md). Session.mu is held.
func (s *Session) reportIntervalLocked() time.Duration {
	iv := s.cfg.ReportInterval
	if !s.cfg.ReportPerMinRTT || iv <= 0 {
		return iv
	}
	for _, p := range s.slots {
		if p == nil || p.outLocked() {
			continue
		}
		if r := p.minRTTLocked(); r > 0 && r < iv {
			iv = r
		}
	}
	return max(iv, MinReportInterval)
}
