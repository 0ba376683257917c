package gym

import (
	"encoding/binary"
	"math"

	"github.com/mpqsched/mpqsched/sched/edar"
	"github.com/mpqsched/mpqsched/sched/learned"
)

// Flags of an 'O' frame.
const (
	FlagTerminated = 1 << 0 // the transfer completed: the episode is over
	FlagTruncated  = 1 << 1 // the episode was cut: time or step limit, a timed scenario's end, or a failed transfer
)

// HeaderBytes is the fixed header of an 'O' payload:
//
//	uint64  step (boundaries before this one)
//	uint8   flags (FlagTerminated, FlagTruncated)
//	uint8   n, the paths present (slots ≥ n are zero)
//	6 bytes reserved
//	float64 the virtual time, s since the episode's first decision, at which
//	        the action answering the previous 'O' was read (−1 in the first)
const HeaderBytes = 24

// Array is one array of an 'O' payload.
type Array struct {
	Offset int    `json:"offset"` // bytes from the start of the payload
	Shape  []int  `json:"shape"`  // dimensions, row-major
	DType  string `json:"dtype"`  // numpy's: "<f8" or "<f4"
}

// Layout is where the arrays of an 'O' payload are, and what their
// columns mean (docs/gym.md has the units).
type Layout struct {
	Size           int              `json:"size"`            // payload bytes
	Arrays         map[string]Array `json:"arrays"`          // by observation key
	PathFeatures   []string         `json:"path_features"`   // column names of "paths"
	ConnFeatures   []string         `json:"conn_features"`   // column names of "conn"
	ReportFeatures []string         `json:"report_features"` // column names of "report"
	slots          int
	edar           bool
}

// Feature names, in the order of sched/learned's constants.
var (
	pathNames = []string{"id", "srtt_s", "min_rtt_s", "latest_rtt_s", "rttvar_s", "cwnd_bytes",
		"bytes_in_flight", "bytes_queued", "mss_bytes", "packets_sent", "packets_lost",
		"packets_retransmitted", "bytes_sent", "bytes_acked", "delivery_rate_Bps", "loss_rate",
		"pto_count", "segments_in_flight", "backup", "potentially_failed"}
	connNames = []string{"time_s", "ti_s", "send_buffer_bytes", "peer_window_bytes", "in_flight_bytes",
		"unacked_segments", "retransmit_queued", "next_seq", "segment_size_bytes", "has_stream",
		"stream_id", "urgency", "incremental", "has_deadline", "deadline_in_s", "stream_remaining_bytes",
		"preferred_slot", "preference"}
	reportNames = []string{"reports", "interval_s", "goodput_bytes", "out_of_order", "reorder_bytes",
		"hol_blocked_s", "duplicate_bytes", "vg", "vw", "vo", "reward"}
)

// NewLayout is the 'O' layout for slots path slots, with EdAR's state if
// withEdar. Arrays, in order: "conn" f8[NumConnFeatures], "paths"
// f8[slots][NumPathFeatures], "report" f8[NumReportFeatures + slots] (the
// last slots values: bytes received per slot's path), and with EdAR's
// state "edar_conn" f4[3], "edar_sub" f4[slots][6][6].
func NewLayout(slots int, withEdar bool) Layout {
	l := Layout{Arrays: map[string]Array{}, PathFeatures: pathNames, ConnFeatures: connNames,
		slots: slots, edar: withEdar}
	off := HeaderBytes
	add := func(name, dtype string, size int, shape ...int) {
		n := 1
		for _, d := range shape {
			n *= d
		}
		l.Arrays[name] = Array{Offset: off, Shape: shape, DType: dtype}
		off += n * size
	}
	add("conn", "<f8", 8, learned.NumConnFeatures)
	add("paths", "<f8", 8, slots, learned.NumPathFeatures)
	add("report", "<f8", 8, learned.NumReportFeatures+slots)
	for i := 0; i < slots; i++ {
		l.ReportFeatures = append(l.ReportFeatures, "path_bytes_"+string(rune('0'+i)))
	}
	l.ReportFeatures = append(append([]string(nil), reportNames...), l.ReportFeatures...)
	if withEdar {
		add("edar_conn", "<f4", 4, edar.ConnFeatures)
		add("edar_sub", "<f4", 4, slots, edar.HistoryLen, edar.SubflowFeatures)
	}
	l.Size = off
	return l
}

// scratch holds one frame's float64 rows while encoding.
type scratch struct {
	row [learned.NumPathFeatures + learned.NumConnFeatures + learned.NumReportFeatures + learned.MaxSlots]float64
}

// encode appends the 'O' payload of o to dst. actionAt is the header's
// action time, s.
func (l *Layout) encode(dst []byte, sc *scratch, o *learned.Observation, flags byte, actionAt float64) []byte {
	var h [HeaderBytes]byte
	binary.LittleEndian.PutUint64(h[0:], o.Step)
	h[8] = flags
	h[9] = byte(min(o.N, l.slots))
	binary.LittleEndian.PutUint64(h[16:], math.Float64bits(actionAt))
	dst = append(dst, h[:]...)
	f8 := func(v []float64) {
		for _, x := range v {
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(x))
		}
	}
	row := sc.row[:]
	o.ConnFeatures(row)
	f8(row[:learned.NumConnFeatures])
	for i := 0; i < l.slots; i++ {
		o.PathFeatures(i, row)
		f8(row[:learned.NumPathFeatures])
	}
	o.ReportFeatures(row, l.slots)
	f8(row[:learned.NumReportFeatures+l.slots])
	if l.edar {
		for _, x := range o.Edar.Conn {
			dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(x))
		}
		for i := 0; i < l.slots; i++ {
			for j := range o.Edar.Sub[i] {
				for _, x := range o.Edar.Sub[i][j] {
					dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(x))
				}
			}
		}
	}
	return dst
}
