package report

// Printing results in the formats of `mpquic-bench run -format`.

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"strconv"
	"strings"

	"github.com/mpqsched/mpqsched/pkg/metrics"
)

// WriteFormat prints rs in format: "json", one JSON object per line
// without the time series (ResultsFile keeps them); "csv", one row per run
// with a header (times in s, rates in bit/s, sizes in bytes); anything
// else, the text table of WriteText.
func WriteFormat(w io.Writer, format string, rs []metrics.Result) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		for _, r := range rs {
			// Keep stdout to one readable line per run; results.jsonl has the series.
			r.GoodputSeries, r.SeriesTimes, r.CapacityTimes, r.CapacitySeries = nil, nil, nil, nil
			r.CrossSeries, r.CrossSeriesTimes = nil, nil // the fairness figures stay
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	case "csv":
		cw := csv.NewWriter(w)
		cw.Write([]string{"scheduler", "scenario", "seed", "bytes", "fct_s", "goodput_bps", "capacity_bps", "ooo_segments", "hol_blocked_s", "retrans_packets", "sent_bytes", "redundant_bytes", "per_path_bytes", "sha256_ok", "error", "max_stall_s"})
		for _, r := range rs {
			pp := make([]string, len(r.PerPathBytes))
			for i, b := range r.PerPathBytes {
				pp[i] = strconv.FormatUint(b, 10)
			}
			cw.Write([]string{r.Scheduler, r.Scenario, strconv.FormatInt(r.Seed, 10), strconv.FormatUint(r.Bytes, 10),
				fmtFloat(r.FCTSeconds), fmtFloat(r.GoodputBps), fmtFloat(r.CapacityBps), strconv.FormatUint(r.OOOSegments, 10), fmtFloat(r.HoLBlockedSec),
				strconv.FormatUint(r.RetransPackets, 10), strconv.FormatUint(r.SentBytes, 10), strconv.FormatUint(r.RedundantBytes, 10),
				strings.Join(pp, ";"), strconv.FormatBool(r.SHA256OK), r.Error, fmtFloat(r.MaxStallSec)})
		}
		cw.Flush()
		return cw.Error()
	}
	return WriteText(w, Summarize(rs)) // "± n/a" after one seed
}

// fmtFloat formats v in the CSV: 6 significant digits.
func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
