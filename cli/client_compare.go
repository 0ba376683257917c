package cli

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/mpfile"
	"github.com/mpqsched/mpqsched/pkg/pathmgr"
)

// compare fetches target over HTTP on the multipath session, then over
// plain single-path QUIC on each path alone. The results come multipath
// first, then path 1, 2, …; a summary goes to stderr.
func (c *clientCmd) compare(ctx context.Context, target string) []metrics.Result {
	out := c.o.out
	if out == "" || out == "-" {
		out = "/dev/null"
	}
	c.o.out = out
	results := []metrics.Result{c.download(ctx, target)}
	items := strings.Split(c.o.paths, ",")
	if strings.TrimSpace(c.o.paths) == "" {
		items = []string{""}
	}
	for i, it := range items {
		if ctx.Err() != nil {
			break
		}
		results = append(results, c.singlePath(ctx, target, i+1, it))
	}
	mp := results[0]
	best := -1
	for i := 1; i < len(results); i++ {
		if results[i].Error == "" && (best < 0 || results[i].GoodputBps > results[best].GoodputBps) {
			best = i
		}
	}
	switch {
	case mp.Error != "":
		fmt.Fprintf(c.stderr, "compare: multipath failed: %s\n", mp.Error)
	case best < 0:
		fmt.Fprintf(c.stderr, "compare: multipath %.2f Mbit/s; every single-path run failed\n", mp.GoodputBps/1e6)
	default:
		fmt.Fprintf(c.stderr, "compare: multipath (%s) %.2f Mbit/s, best single path (path %d) %.2f Mbit/s: ratio %.2f\n",
			mp.Scheduler, mp.GoodputBps/1e6, best, results[best].GoodputBps/1e6, mp.GoodputBps/results[best].GoodputBps)
	}
	return results
}

// singlePath fetches target over HTTP on one plain QUIC connection bound to
// the path item (address or interface; "" lets routing decide).
func (c *clientCmd) singlePath(ctx context.Context, target string, num int, item string) metrics.Result {
	m := c.meta()
	m.Scheduler = fmt.Sprintf("single-path-%d", num)
	res := func(d mpfile.Download, fct time.Duration, err error) metrics.Result {
		r := metrics.Result{Scheduler: m.Scheduler, Scenario: m.Scenario, Seed: m.Seed, CapacityBps: m.CapacityBps,
			Bytes: uint64(d.Received), FCTSeconds: fct.Seconds(), SHA256OK: d.SHA256OK && err == nil}
		if fct > 0 {
			r.GoodputBps = float64(d.Received) * 8 / fct.Seconds()
		}
		if err != nil {
			r.Error = interrupted(ctx, err).Error()
		}
		r.Extra = map[string]float64{"path": float64(num), "size_bytes": float64(d.Size)}
		return r
	}
	remote, err := net.ResolveUDPAddr("udp", c.o.h3Addr)
	if err != nil {
		return res(mpfile.Download{}, 0, err)
	}
	conns, err := pathmgr.ListenPaths(item, remote)
	if err != nil {
		return res(mpfile.Download{}, 0, err)
	}
	pc := conns[0]
	defer pc.Close()
	w, finish, err := c.output()
	if err != nil {
		return res(mpfile.Download{}, 0, err)
	}
	start := time.Now()
	sc, err := dialSinglePath(ctx, pc, remote, c.tls, c.o.connectTimeout)
	if err != nil {
		finish(false)
		return res(mpfile.Download{}, 0, err)
	}
	defer sc.Close()
	update, done := c.progress(fmt.Sprintf("single path %d %s", num, target))
	d, err := mpfile.HTTPGet(ctx, sc.HTTP, singlePathScheme+"://single"+ensureSlash(target), w, update)
	done()
	fct := time.Since(start)
	unverified := false
	if err != nil {
		unverified, err = c.digestPolicy(err)
	}
	finish(err == nil)
	r := res(d, fct, err)
	r.Mode, r.Unverified = metrics.ModeSinglePath, unverified
	st := sc.Stats()
	r.RetransPackets = st.PacketsLost
	r.PerPathBytes = []uint64{uint64(d.Received)}
	if !c.o.quiet && err == nil {
		fmt.Fprintf(c.stderr, "single path %d: %d bytes in %.2f s, %.2f Mbit/s, %s\n", num, d.Received, fct.Seconds(), r.GoodputBps/1e6, verdict(unverified))
	}
	return r
}
