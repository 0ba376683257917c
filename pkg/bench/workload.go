package bench

import (
	"context"
	"time"

	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/scenario"
	"github.com/mpqsched/mpqsched/pkg/session"
)

// The workloads (scenario.Workload) replace the download of Run.Bytes: the
// server and the client each run the workload's side, and what the client
// measured goes into the Result. Without a workload the run is one download
// (serve, fetch in run.go).

// workloadResult is what a workload's client measured; at most one field is
// set.
type workloadResult struct {
	video *metrics.Video
	web   *metrics.Web
	rpc   *metrics.RPC
}

// kind is r's workload kind, "" for a download.
func kind(r Run) string {
	if r.Workload == nil {
		return ""
	}
	return r.Workload.Kind
}

// serveRun runs the server's side of r on the session ln accepts.
func serveRun(ctx context.Context, ln *session.Listener, r Run) serverResult {
	switch kind(r) {
	case scenario.WorkloadVideo:
		return serveVideo(ctx, ln, r)
	case scenario.WorkloadWeb:
		return serveWeb(ctx, ln, r)
	case scenario.WorkloadRPC:
		return serveRPC(ctx, ln, r)
	}
	return serve(ctx, ln, r)
}

// fetchRun runs the client's side of r on s, opened at start: the bytes
// read, whether all of them verified, and the workload's measurements.
func fetchRun(ctx context.Context, s *session.Session, r Run, start time.Time) (n int64, ok bool, wr workloadResult, err error) {
	switch kind(r) {
	case scenario.WorkloadVideo:
		n, ok, wr.video, err = fetchVideo(ctx, s, r, start)
	case scenario.WorkloadWeb:
		n, ok, wr.web, err = fetchWeb(ctx, s, r, start)
	case scenario.WorkloadRPC:
		n, ok, wr.rpc, err = fetchRPC(ctx, s, r, start)
	default:
		n, ok, err = fetch(ctx, s, r, start)
	}
	return n, ok, wr, err
}

// fill puts the measurements into res, with the redundancy: the server's
// redundant bytes over the n application bytes delivered.
func (wr workloadResult) fill(res *metrics.Result, n int64) {
	var red float64
	if n > 0 {
		red = float64(res.RedundantBytes) / float64(n)
	}
	switch {
	case wr.video != nil:
		wr.video.Redundancy, res.Video = red, wr.video
	case wr.web != nil:
		wr.web.Redundancy, res.Web = red, wr.web
	case wr.rpc != nil:
		wr.rpc.Redundancy, res.RPC = red, wr.rpc
	}
}

// sleepUntil waits until start+at in the run's clock, or ctx's end.
func sleepUntil(ctx context.Context, start time.Time, at time.Duration) error {
	d := at - time.Since(start)
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
