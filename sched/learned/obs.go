package learned

import (
	"time"

	"github.com/mpqsched/mpqsched/sched"
	"github.com/mpqsched/mpqsched/sched/edar"
)

// Observation is what a Policy sees at a TI boundary: the snapshots the
// transport handed the scheduler, the receiver's reports of the TI that
// ended, and, if asked for, EdAR's state. It is a fixed-size value.
type Observation struct {
	Start time.Time                // the connection's first Decide (the episode's t = 0)
	Step  uint64                   // TIs before this one (0 at the first Decide)
	Conn  sched.ConnInfo           // the connection snapshot; Conn.Now is the boundary
	N     int                      // paths described, 0..MaxSlots
	Paths [MaxSlots]sched.PathInfo // Paths[:N]: the first N paths of the snapshot, in its order
	TI    time.Duration            // length of the TI that ended (0 at the first Decide)
	Prev  Action                   // the action of the TI that ended (zero at the first Decide)
	// Report merges the receiver reports received during the TI that ended
	// (edar.MergeReport); Reports counts them. Data sent in a TI is
	// reported about one RTT later, so these mostly describe the TI before.
	Report  sched.ReceiverReport
	Reports int // reports merged into Report
	// Reward is EdAR's reward of Report (Config.Reward), zero if Reports
	// is 0.
	Reward edar.RewardTerms
	// Edar is EdAR's state s_t (sched/edar's normalised features with k = 5
	// TIs of history), if Config.EdarState; a_{t−1} is Prev.Copy, and
	// redundant at the first Decide, as in sched/edar.
	Edar edar.State
}

// Features of a path slot in PathFeatures, raw and in SI units: every one
// is a sched.PathInfo field (seconds for durations, bytes, counts).
const (
	PathID                   = iota // sched.PathInfo.ID
	PathSmoothedRTT                 // SmoothedRTT, s (0 before the first sample)
	PathMinRTT                      // MinRTT, s
	PathLatestRTT                   // LatestRTT, s
	PathRTTVar                      // RTTVar, s
	PathCongestionWindow            // CongestionWindow, bytes
	PathBytesInFlight               // BytesInFlight, bytes
	PathBytesQueued                 // BytesQueued, bytes
	PathMSS                         // MSS, bytes
	PathPacketsSent                 // PacketsSent, packets since the path opened
	PathPacketsLost                 // PacketsLost, packets since the path opened
	PathPacketsRetransmitted        // PacketsRetransmitted, packets
	PathBytesSent                   // BytesSent, bytes since the path opened
	PathBytesAcked                  // BytesAcked, bytes since the path opened
	PathDeliveryRate                // DeliveryRate, bytes/s
	PathLossRate                    // LossRate, fraction in [0, 1]
	PathPTOCount                    // PTOCount, consecutive probe timeouts
	PathSegmentsInFlight            // SegmentsInFlight, segments
	PathBackup                      // Backup, 0 or 1
	PathPotentiallyFailed           // PotentiallyFailed, 0 or 1
	NumPathFeatures                 // features per path slot
)

// Features of the connection in ConnFeatures: the episode's clock, the
// TI, and every sched.ConnInfo field (seconds, bytes, counts).
const (
	ConnTime             = iota // Conn.Now − Start, s
	ConnTI                      // the TI that ended, s
	ConnSendBufferBytes         // SendBufferBytes, bytes
	ConnPeerWindow              // PeerWindow, bytes
	ConnInFlightBytes           // InFlightBytes, bytes
	ConnUnackedSegments         // UnackedSegments, segments
	ConnRetransmitQueued        // RetransmitQueued, segments
	ConnNextSeq                 // NextSeq, segment sequence number
	ConnSegmentSize             // SegmentSize, bytes
	ConnHasStream               // HasStream, 0 or 1
	ConnStreamID                // StreamID
	ConnUrgency                 // Urgency, 0..7
	ConnIncremental             // Incremental, 0 or 1
	ConnHasDeadline             // 1 if Deadline is set
	ConnDeadlineIn              // Deadline − Now, s (negative: past; 0 without a deadline)
	ConnStreamRemaining         // StreamRemaining, bytes
	ConnPreferredSlot           // slot of PreferredPath, −1 if absent or not described
	ConnPreference              // Preference: 0 none, 1 prefer, 2 pin
	NumConnFeatures             // connection features
)

// Features of the receiver's reports in ReportFeatures (the TI that ended).
const (
	RepCount          = iota // reports merged
	RepInterval              // Interval, s (summed)
	RepGoodputBytes          // GoodputBytes, bytes delivered in order
	RepOutOfOrder            // OutOfOrder, segments
	RepReorderBytes          // ReorderBytes, bytes held at the last report
	RepHoLBlocked            // HoLBlocked, s
	RepDuplicateBytes        // DuplicateBytes, bytes
	RepVg                    // the reward's V_g
	RepVw                    // the reward's V_w
	RepVo                    // the reward's V_o
	RepReward                // r = V_g − α·V_w − β·V_o
	NumReportFeatures        // report features (then one per path slot: bytes received on that path)
)

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// PathFeatures writes slot i's features (NumPathFeatures values) to dst;
// a slot ≥ N is all zero.
func (o *Observation) PathFeatures(i int, dst []float64) {
	clear(dst[:NumPathFeatures])
	if i >= o.N {
		return
	}
	p := &o.Paths[i]
	dst[PathID] = float64(p.ID)
	dst[PathSmoothedRTT] = p.SmoothedRTT.Seconds()
	dst[PathMinRTT] = p.MinRTT.Seconds()
	dst[PathLatestRTT] = p.LatestRTT.Seconds()
	dst[PathRTTVar] = p.RTTVar.Seconds()
	dst[PathCongestionWindow] = float64(p.CongestionWindow)
	dst[PathBytesInFlight] = float64(p.BytesInFlight)
	dst[PathBytesQueued] = float64(p.BytesQueued)
	dst[PathMSS] = float64(p.MSS)
	dst[PathPacketsSent] = float64(p.PacketsSent)
	dst[PathPacketsLost] = float64(p.PacketsLost)
	dst[PathPacketsRetransmitted] = float64(p.PacketsRetransmitted)
	dst[PathBytesSent] = float64(p.BytesSent)
	dst[PathBytesAcked] = float64(p.BytesAcked)
	dst[PathDeliveryRate] = p.DeliveryRate
	dst[PathLossRate] = p.LossRate
	dst[PathPTOCount] = float64(p.PTOCount)
	dst[PathSegmentsInFlight] = float64(p.SegmentsInFlight)
	dst[PathBackup] = b2f(p.Backup)
	dst[PathPotentiallyFailed] = b2f(p.PotentiallyFailed)
}

// ConnFeatures writes the connection features (NumConnFeatures values).
func (o *Observation) ConnFeatures(dst []float64) {
	c := &o.Conn
	dst[ConnTime] = c.Now.Sub(o.Start).Seconds()
	dst[ConnTI] = o.TI.Seconds()
	dst[ConnSendBufferBytes] = float64(c.SendBufferBytes)
	dst[ConnPeerWindow] = float64(c.PeerWindow)
	dst[ConnInFlightBytes] = float64(c.InFlightBytes)
	dst[ConnUnackedSegments] = float64(c.UnackedSegments)
	dst[ConnRetransmitQueued] = float64(c.RetransmitQueued)
	dst[ConnNextSeq] = float64(c.NextSeq)
	dst[ConnSegmentSize] = float64(c.SegmentSize)
	dst[ConnHasStream] = b2f(c.HasStream)
	dst[ConnStreamID] = float64(c.StreamID)
	dst[ConnUrgency] = float64(c.Urgency)
	dst[ConnIncremental] = b2f(c.Incremental)
	dst[ConnHasDeadline] = b2f(!c.Deadline.IsZero())
	dst[ConnDeadlineIn] = 0
	if !c.Deadline.IsZero() {
		dst[ConnDeadlineIn] = c.Deadline.Sub(c.Now).Seconds()
	}
	dst[ConnStreamRemaining] = float64(c.StreamRemaining)
	dst[ConnPreferredSlot] = -1
	if c.Preference != sched.NoPreference {
		for i := 0; i < o.N; i++ {
			if o.Paths[i].ID == c.PreferredPath {
				dst[ConnPreferredSlot] = float64(i)
			}
		}
	}
	dst[ConnPreference] = float64(c.Preference)
}

// ReportFeatures writes the report features (NumReportFeatures values, then
// slots more: bytes received on the path of each slot, by its ID; IDs ≥ 8
// are not in the report and read 0).
func (o *Observation) ReportFeatures(dst []float64, slots int) {
	r := &o.Report
	dst[RepCount] = float64(o.Reports)
	dst[RepInterval] = r.Interval.Seconds()
	dst[RepGoodputBytes] = float64(r.GoodputBytes)
	dst[RepOutOfOrder] = float64(r.OutOfOrder)
	dst[RepReorderBytes] = float64(r.ReorderBytes)
	dst[RepHoLBlocked] = r.HoLBlocked.Seconds()
	dst[RepDuplicateBytes] = float64(r.DuplicateBytes)
	dst[RepVg], dst[RepVw], dst[RepVo], dst[RepReward] = o.Reward.Vg, o.Reward.Vw, o.Reward.Vo, o.Reward.R
	for i := 0; i < slots; i++ {
		v := 0.0
		if i < o.N {
			if id := o.Paths[i].ID; int(id) < len(r.PathBytes) {
				v = float64(r.PathBytes[id])
			}
		}
		dst[NumReportFeatures+i] = v
	}
}
