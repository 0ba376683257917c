package mpfile

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/session"
)

// ResolvePath turns one -paths item into a local UDP address to bind:
// an IP address ("10.0.0.2", "::1"), an interface name ("wlan0", standing
// for its first IPv4 address), either with a port ("127.0.0.1:25001",
// "[::1]:25001", "wlan0:25001"), or without one (port 0: any free port).
func ResolvePath(item string) (*net.UDPAddr, error) {
	item = strings.TrimSpace(item)
	host, port := item, 0
	if h, p, err := net.SplitHostPort(item); err == nil {
		n, perr := strconv.Atoi(p)
		if perr != nil || n < 0 || n > 65535 {
			return nil, fmt.Errorf("path %q: bad port %q", item, p)
		}
		host, port = h, n
	}
	if ip := net.ParseIP(host); ip != nil {
		return &net.UDPAddr{IP: ip, Port: port}, nil
	}
	ifc, err := net.InterfaceByName(host)
	if err != nil {
		return nil, fmt.Errorf("path %q is not a local IP address, IP:port or interface name (interfaces here: %s)", item, interfaceNames())
	}
	addrs, err := ifc.Addrs()
	if err != nil {
		return nil, fmt.Errorf("interface %s: %w", host, err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil {
			return &net.UDPAddr{IP: n.IP.To4(), Port: port}, nil
		}
	}
	return nil, fmt.Errorf("interface %s has no IPv4 address", host)
}

// interfaceNames lists this host's network interfaces for error messages.
func interfaceNames() string {
	ifs, err := net.Interfaces()
	if err != nil || len(ifs) == 0 {
		return "none found"
	}
	names := make([]string, len(ifs))
	for i, f := range ifs {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

// ListenPaths binds one UDP socket per item of list (comma-separated local
// addresses or interface names, with or without a port, see ResolvePath).
// An empty list gives one unbound socket. On error no socket stays open.
func ListenPaths(list string, remote *net.UDPAddr) ([]*net.UDPConn, error) {
	network := "udp4"
	if remote != nil && remote.IP.To4() == nil {
		network = "udp6"
	}
	var items []string
	for _, it := range strings.Split(list, ",") {
		if strings.TrimSpace(it) != "" {
			items = append(items, it)
		}
	}
	if len(items) == 0 {
		c, err := net.ListenUDP(network, nil)
		if err != nil {
			return nil, err
		}
		return []*net.UDPConn{c}, nil
	}
	var out []*net.UDPConn
	for _, it := range items {
		la, err := ResolvePath(it)
		if err == nil {
			var c *net.UDPConn
			if c, err = net.ListenUDP(network, la); err == nil {
				out = append(out, c)
				continue
			}
			err = fmt.Errorf("path %q: %w", strings.TrimSpace(it), err)
		}
		for _, c := range out {
			c.Close()
		}
		return nil, err
	}
	return out, nil
}

// Connect dials a session to remote over conns[0] within timeout; the
// remaining sockets are joined by JoinPaths. The session takes the sockets
// over but never closes them: close conns after the session has ended.
func Connect(ctx context.Context, conns []net.PacketConn, remote net.Addr, tlsConf *tls.Config, cfg *session.Config, timeout time.Duration) (*session.Session, error) {
	if len(conns) == 0 {
		return nil, errors.New("mpfile: no path")
	}
	dctx, cancel := context.WithTimeout(ctx, timeout)
	s, err := session.Dial(dctx, conns[0], remote, tlsConf, cfg)
	timedOut := dctx.Err() != nil && ctx.Err() == nil
	cancel()
	if err != nil {
		if timedOut {
			err = fmt.Errorf("no answer from %v within %v: %w", remote, timeout, err)
		}
		return nil, err
	}
	return s, nil
}

// ConnectAny is Connect whose first handshake also offers plain HTTP/3
// (session.DialAny with PlainALPNs {SinglePathALPN}): against a server
// that speaks only plain HTTP/3 it returns that connection (s nil), made
// by the same handshake. It owns conns[0] as Connect does; a plain
// connection closes it when it ends.
func ConnectAny(ctx context.Context, conns []net.PacketConn, remote net.Addr, tlsConf *tls.Config, cfg *session.Config, timeout time.Duration) (s *session.Session, plain *quic.Conn, err error) {
	if len(conns) == 0 {
		return nil, nil, errors.New("mpfile: no path")
	}
	var c session.Config
	if cfg != nil {
		c = *cfg
	}
	c.PlainALPNs = []string{SinglePathALPN}
	dctx, cancel := context.WithTimeout(ctx, timeout)
	s, plain, err = session.DialAny(dctx, conns[0], remote, tlsConf, &c, session.PathOptions{})
	timedOut := dctx.Err() != nil && ctx.Err() == nil
	cancel()
	if err != nil && timedOut {
		err = fmt.Errorf("no answer from %v within %v: %w", remote, timeout, err)
	}
	return s, plain, err
}

// JoinPaths adds conns as further paths of s, in order (backup[i] marks
// conns[i] as a backup), each within timeout. A path that fails to join is
// reported through logf and skipped, so a dead interface does not stop a
// download; a path that joins is reported too. Paths are numbered from 1,
// Connect's being 1 (so conns[i] is path i+2), as mpquic-client's -paths
// and -backup count. It returns how many paths joined. The client runs it while the
// download already goes over the first path, as MPTCP joins subflows.
func JoinPaths(ctx context.Context, s *session.Session, conns []net.PacketConn, remote net.Addr, backup []bool, timeout time.Duration, logf func(string, ...any)) int {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	n := 0
	for i, pc := range conns {
		if ctx.Err() != nil {
			break
		}
		actx, cancel := context.WithTimeout(ctx, timeout)
		id, err := s.AddPath(actx, pc, remote, session.PathOptions{Backup: i < len(backup) && backup[i]})
		cancel()
		if err != nil {
			logf("path %d (from %v): not joined: %v", i+2, pc.LocalAddr(), err)
			continue
		}
		logf("path %d (from %v): joined (session path %d)", i+2, pc.LocalAddr(), id)
		n++
	}
	return n
}

// Meta is what a Result records beyond the measurements.
type Meta struct {
	Scheduler   string  // scheduler name recorded
	Scenario    string  // scenario name recorded
	Seed        int64   // seed recorded
	CapacityBps float64 // capacity recorded, bits/s (the sum of the paths' bottleneck rates)
}

// NewResult turns a download into a metrics.Result: fct is the time from
// the start of the dial to the last byte, client the receiving session's
// stats and series; server figures come from d.Server when present,
// otherwise from what the client received per path.
func NewResult(m Meta, d Download, fct time.Duration, client session.Stats, series []session.Sample, err error) metrics.Result {
	r := metrics.Result{
		Scheduler:   m.Scheduler,
		Scenario:    m.Scenario,
		Seed:        m.Seed,
		CapacityBps: m.CapacityBps,
		Bytes:       uint64(d.Received),
		FCTSeconds:  fct.Seconds(),
		SHA256OK:    d.SHA256OK && err == nil,
		OOOSegments: client.OOOSegments,
	}
	r.HoLBlockedSec = client.HoLBlocked.Seconds()
	if fct > 0 {
		r.GoodputBps = float64(d.Received) * 8 / fct.Seconds()
	}
	if err != nil {
		r.Error = err.Error()
	}
	r.Extra = map[string]float64{
		"size_bytes":        float64(d.Size),
		"duplicate_bytes":   float64(client.DuplicateBytes),
		"max_reorder_bytes": float64(client.MaxReorderBytes),
		"paths":             float64(len(client.Paths)),
	}
	if ss := d.Server; ss != nil {
		r.SentBytes = ss.SentBytes
		r.RedundantBytes = ss.RedundantBytes
		r.RetransPackets = ss.PacketsLost + ss.RetransSegments
		r.PerPathBytes = ss.PerPathBytes
		r.Extra["reinjected_segments"] = float64(ss.ReinjectedSegs)
		r.Extra["path_failures"] = float64(ss.PathFailures)
		r.Extra["coupling_cuts"] = float64(ss.CouplingCuts)
		r.Extra["coupling_undos"] = float64(ss.CouplingUndos)
		r.Extra["coupled_acked_bytes"] = float64(ss.CoupledAcked)
		r.Extra["coupled_governed_bytes"] = float64(ss.CoupledGoverned)
	} else {
		for _, p := range client.Paths {
			for int(p.ID) >= len(r.PerPathBytes) {
				r.PerPathBytes = append(r.PerPathBytes, 0)
			}
			r.PerPathBytes[p.ID] += p.BytesReceived
			r.SentBytes += p.BytesReceived
		}
	}
	if len(series) > 1 {
		r.SeriesStepSec = (series[1].T - series[0].T).Seconds()
		for _, smp := range series {
			r.GoodputSeries = append(r.GoodputSeries, smp.GoodputBps)
		}
	}
	return r
}
