package prs

import "github.com/mpqsched/mpqsched/sched"

// fig13 is Fig. 13 of the paper transcribed line by line for two subflows,
// independently of the package's N-path code, slips included: a tie in
// condition 2 (lines 19–25) and equal rates in condition 3 (line 31, "<")
// return no subflow. "there is free space in the congestion window if
// inflight_i < cwnd_i" is read as SendingAllowed (room for one segment), as
// the package does. It returns the chosen index or -1 (S_best ← NULL).
func fig13(paths []sched.PathInfo) int {
	if len(paths) == 1 { // line 1: only the fastest subflow is available
		return 0
	}
	f, s := 0, 1 // S_f has the smallest RTT, S_s the largest (Table 3)
	if paths[1].SmoothedRTT < paths[0].SmoothedRTT {
		f, s = 1, 0
	}
	pf, ps := &paths[f], &paths[s]
	freeF, freeS := pf.SendingAllowed(), ps.SendingAllowed()
	if !freeS && !freeF { // lines 10–12
		return -1
	}
	if freeS && freeF { // lines 14–25
		perfF := float64(pf.CongestionWindow-pf.BytesInFlight-pf.BytesQueued) / (pf.SmoothedRTT.Seconds() * float64(max(1, pf.PacketsLost)))
		perfS := float64(ps.CongestionWindow-ps.BytesInFlight-ps.BytesQueued) / (ps.SmoothedRTT.Seconds() * float64(max(1, ps.PacketsLost)))
		if perfF > perfS {
			return f
		}
		if perfS > perfF {
			return s
		}
	}
	if !freeS && freeF { // lines 28–38
		rateF := float64(pf.PacketsLost) / float64(pf.PacketsSent)
		rateS := float64(ps.PacketsLost) / float64(ps.PacketsSent)
		if rateF < rateS {
			return f
		}
		return -1
	}
	if freeS && !freeF { // lines 40–47
		if ps.SmoothedRTT.Seconds()/2 <= 2*pf.SmoothedRTT.Seconds() {
			return s
		}
		return -1
	}
	return -1 // line 49: a tie in condition 2 falls through
}
