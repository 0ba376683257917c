package mpfile

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/mpqsched/mpqsched/pkg/session"
)

// StatsPath is the HTTP path that answers the requesting session's
// ServerStats as JSON.
const StatsPath = "/.mpq/stats"

// ServerStats is the sender's side of a download, as the server reports it
// at StatsPath after the data.
type ServerStats struct {
	Scheduler       string   `json:"scheduler"`           // the server's scheduler: it decides the download's paths
	SentBytes       uint64   `json:"sent_bytes"`          // segment payload bytes sent on all paths, copies included
	RedundantBytes  uint64   `json:"redundant_bytes"`     // bytes sent beyond each segment's first transmission
	RetransSegments uint64   `json:"retrans_segments"`    // segments sent again after loss or reinjection
	ReinjectedSegs  uint64   `json:"reinjected_segments"` // segments queued again because their path failed or left
	PathFailures    uint64   `json:"path_failures"`       // times a path was marked potentially failed
	PacketsLost     uint64   `json:"packets_lost"`        // QUIC packets declared lost, all paths
	PerPathBytes    []uint64 `json:"per_path_bytes"`      // segment payload bytes sent per path, indexed by path ID (join order)
	CouplingCuts    uint64   `json:"coupling_cuts"`       // reductions of the coupled windows on loss events (session.Stats.CouplingCuts)
	CouplingUndos   uint64   `json:"coupling_undos"`      // of those, undone because the loss was spurious
	CoupledAcked    uint64   `json:"coupled_acked"`       // bytes acknowledged on paths whose coupled window is in force
	CoupledGoverned uint64   `json:"coupled_governed"`    // of those, bytes acknowledged while the coupled window was below quic-go's
}

// StatsOf extracts the sender-side figures of a session.
func StatsOf(st session.Stats) ServerStats {
	out := ServerStats{
		Scheduler:       st.Scheduler,
		SentBytes:       st.SentBytes,
		RedundantBytes:  st.RedundantBytes,
		RetransSegments: st.RetransSegments,
		ReinjectedSegs:  st.ReinjectedSegs,
		PathFailures:    st.PathFailures,
		PacketsLost:     st.PacketsLost,
		CouplingCuts:    st.CouplingCuts,
		CouplingUndos:   st.CouplingUndos,
		CoupledAcked:    st.CoupledAcked,
		CoupledGoverned: st.CoupledGoverned,
	}
	for _, p := range st.Paths {
		for int(p.ID) >= len(out.PerPathBytes) {
			out.PerPathBytes = append(out.PerPathBytes, 0)
		}
		out.PerPathBytes[p.ID] += p.BytesSent
	}
	return out
}

// HTTPStats asks the server for the sender counters of the session c
// runs over (StatsPath); base is the URL prefix, e.g. "http://mpquic".
func HTTPStats(ctx context.Context, c *http.Client, base string) (*ServerStats, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+StatsPath, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", StatsPath, resp.Status)
	}
	var ss ServerStats
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&ss); err != nil {
		return nil, err
	}
	return &ss, nil
}
