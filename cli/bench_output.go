package cli

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/report"
)

// writeStdout prints the results in the chosen format.
func writeStdout(w io.Writer, format string, rs []metrics.Result) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		for _, r := range rs {
			r.GoodputSeries = nil // keep stdout to one readable line per run; results.jsonl has the series
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	case "csv":
		cw := csv.NewWriter(w)
		cw.Write([]string{"scheduler", "scenario", "seed", "bytes", "fct_s", "goodput_bps", "capacity_bps", "ooo_segments", "hol_blocked_s", "retrans_packets", "sent_bytes", "redundant_bytes", "per_path_bytes", "sha256_ok", "error"})
		for _, r := range rs {
			pp := make([]string, len(r.PerPathBytes))
			for i, b := range r.PerPathBytes {
				pp[i] = strconv.FormatUint(b, 10)
			}
			cw.Write([]string{r.Scheduler, r.Scenario, strconv.FormatInt(r.Seed, 10), strconv.FormatUint(r.Bytes, 10),
				fmtFloat(r.FCTSeconds), fmtFloat(r.GoodputBps), fmtFloat(r.CapacityBps), strconv.FormatUint(r.OOOSegments, 10), fmtFloat(r.HoLBlockedSec),
				strconv.FormatUint(r.RetransPackets, 10), strconv.FormatUint(r.SentBytes, 10), strconv.FormatUint(r.RedundantBytes, 10),
				strings.Join(pp, ";"), strconv.FormatBool(r.SHA256OK), r.Error})
		}
		cw.Flush()
		return cw.Error()
	}
	rows := report.Summarize(rs)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tscheduler\truns\tgoodput Mbit/s\t/capacity\tFCT s\tOOO segs\tHoL s\tredundancy\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%.2f ± %.2f\t%.3f\t%.2f ± %.2f\t%.0f\t%.2f\t%.3f\t\n",
			r.Scenario, r.Scheduler, r.Runs-r.Failed, r.Runs, r.Goodput.Mean/1e6, r.Goodput.CI95/1e6, r.Goodput.Mean/max(r.CapacityBps, 1),
			r.FCT.Mean, r.FCT.CI95, r.OOO.Mean, r.HoL.Mean, r.Redundancy.Mean)
	}
	return tw.Flush()
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
