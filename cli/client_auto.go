package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/pathmgr"
	"github.com/mpqsched/mpqsched/pkg/session"
	"github.com/mpqsched/mpqsched/sched"
)

// autoPathsFlag is the -paths value that hands the paths to pathmgr.
const autoPathsFlag = "auto"

// isAuto reports whether -paths is auto.
func isAuto(paths string) bool { return strings.TrimSpace(paths) == autoPathsFlag }

// parseBackupNames turns -backup under -paths auto into interface names
// and patterns ("wwan0,eth2", "wwan*", "cellular").
func parseBackupNames(s string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		if _, err := path.Match(f, ""); err != nil {
			return nil, fmt.Errorf("-backup: %q is not an interface name or pattern: %v", f, err)
		}
		out = append(out, f)
	}
	return out, nil
}

// autoPaths is one download's path manager and the record of its paths.
type autoPaths struct {
	m      *pathmgr.Manager
	start  time.Time
	stderr io.Writer // event lines; nil with -q

	mu       sync.Mutex
	paths    []*autoPath
	failures int
	kept     int
}

// autoPath is one path the manager joined.
type autoPath struct {
	id       sched.PathID
	ep       pathmgr.Endpoint
	backup   bool
	joined   time.Duration // since the download started
	gone     bool          // removed by the manager
	removed  time.Duration // since the download started, when gone
	reason   string        // why it was removed
	received uint64        // segment bytes received on it (taken at removal for a removed path)
	counted  bool          // received is known
}

// onEvent records and prints one event of the manager.
func (a *autoPaths) onEvent(e pathmgr.Event) {
	at := e.Time.Sub(a.start)
	a.mu.Lock()
	switch e.Kind {
	case pathmgr.Joined:
		a.paths = append(a.paths, &autoPath{id: e.Path, ep: e.Endpoint, backup: e.Backup, joined: at})
	case pathmgr.Removed:
		if p := a.find(e.Path); p != nil {
			p.gone, p.removed, p.reason = true, at, e.Reason
		}
	case pathmgr.JoinFailed:
		a.failures++
	case pathmgr.Kept:
		a.kept++
	}
	a.mu.Unlock()
	if a.stderr != nil {
		fmt.Fprintf(a.stderr, "mpquic-client: path event at %.3f s: %v\n", at.Seconds(), e)
	}
}

// find returns the present path id; a.mu is held.
func (a *autoPaths) find(id sched.PathID) *autoPath {
	for _, p := range a.paths {
		if p.id == id && !p.gone {
			return p
		}
	}
	return nil
}

// took records what path id received, from st, before it goes.
func (a *autoPaths) took(st session.Stats, id sched.PathID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, ps := range st.Paths {
		if p := a.find(id); p != nil && ps.ID == id {
			p.received, p.counted = ps.BytesReceived, true
		}
	}
}

// recordingJoiner is the session as the manager sees it: a removal first
// takes the path's figures, which the session forgets with the path.
type recordingJoiner struct {
	s *session.Session
	a *autoPaths
}

func (j recordingJoiner) AddPath(ctx context.Context, pc net.PacketConn, remote net.Addr, opts session.PathOptions) (sched.PathID, error) {
	return j.s.AddPath(ctx, pc, remote, opts)
}

func (j recordingJoiner) RemovePath(id sched.PathID) error {
	j.a.took(j.s.Stats(), id)
	return j.s.RemovePath(id)
}

// dialAuto is -paths auto: it starts the path manager, dials the session
// over the first usable address that answers (preferred first: not a
// backup, lowest interface index), and lets the manager join and remove
// the others as interfaces come and go. stop ends the manager.
func (c *clientCmd) dialAuto(ctx context.Context, remote *net.UDPAddr, cfg *session.Config, start time.Time) (s *session.Session, a *autoPaths, stop func(), err error) {
	a = &autoPaths{start: start}
	if !c.o.quiet {
		a.stderr = c.stderr
	}
	a.m, err = pathmgr.New(pathmgr.Config{
		Remote:      remote,
		Policy:      pathmgr.Policy{Backup: c.backupNames},
		JoinTimeout: c.o.connectTimeout,
		OnEvent:     a.onEvent,
		Logf:        c.logf,
	})
	if err == nil {
		err = a.m.Start(ctx)
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("-paths auto: %w", err)
	}
	stop = func() { a.m.Close() }
	eps := a.m.Usable()
	if len(eps) == 0 {
		stop()
		return nil, nil, nil, errors.New("-paths auto: no usable interface address (up, with a global address of the server's family)")
	}
	var errs []error
	for _, ep := range eps {
		pc, lerr := pathmgr.Listen(ep, remote)
		if lerr != nil {
			errs = append(errs, fmt.Errorf("%v: %w", ep, lerr))
			continue
		}
		var plain *quic.Conn
		s, plain, err = connectAny(ctx, []net.PacketConn{pc}, remote, c.tls, cfg, c.o.connectTimeout)
		if plain != nil {
			plain.CloseWithError(0, "")
			stop()
			return nil, nil, nil, errors.New("the server speaks plain HTTP/3 only (it chose ALPN h3): -paths auto needs a multipath session; give fixed -paths, or none, for a single-path download")
		}
		if err != nil {
			pc.Close()
			errs = append(errs, fmt.Errorf("%v: %w", ep, err))
			c.logf("path %v: no session: %v", ep, err)
			if ctx.Err() != nil {
				break
			}
			continue
		}
		if a.m.IsBackup(ep) {
			c.logf("path %v: a backup by -backup, but the first path cannot be one", ep)
		}
		ids := s.Paths()
		if len(ids) == 0 { // the session ended at once, its only path gone with it (issue 29: never index what a closing session returns)
			err = fmt.Errorf("%v: session ended at once: %w", ep, context.Cause(s.Context()))
			errs = append(errs, err)
			s.Close()
			continue
		}
		if err = a.m.Attach(recordingJoiner{s, a}, ep, ids[0]); err != nil {
			s.CloseWithError(0, err.Error())
			break
		}
		return s, a, stop, nil
	}
	stop()
	if err == nil {
		err = errors.Join(errs...)
	}
	return nil, nil, nil, err
}

// finish stops the manager, completes the record with the session's last
// figures and puts it into r: PathNames holds each path's interface, by
// path ID (as PerPathBytes); Extra counts the joins, removals, failed joins
// and flaps absorbed.
func (a *autoPaths) finish(st session.Stats, r *metrics.Result) {
	if a.m != nil {
		a.m.Close()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	removed := 0
	for _, p := range a.paths {
		if p.gone {
			removed++
		}
		if p.gone && p.counted {
			continue // taken at removal
		}
		for _, ps := range st.Paths { // the session keeps removed paths' figures too
			if ps.ID == p.id {
				p.received, p.counted = ps.BytesReceived, true
			}
		}
	}
	for _, p := range a.paths {
		for int(p.id) >= len(r.PathNames) {
			r.PathNames = append(r.PathNames, "")
		}
		r.PathNames[p.id] = p.ep.Name
	}
	if r.Extra == nil {
		r.Extra = map[string]float64{}
	}
	r.Extra["path_joins"] = float64(len(a.paths))
	r.Extra["path_removals"] = float64(removed)
	r.Extra["path_join_failures"] = float64(a.failures)
	r.Extra["path_flaps_kept"] = float64(a.kept)
}

// writeTable prints one line per path that the session had: interface,
// address, when it joined and left, and what it received.
func (a *autoPaths) writeTable(w io.Writer) {
	a.mu.Lock()
	defer a.mu.Unlock()
	fmt.Fprintf(w, "paths (-paths auto; times since the start):\n")
	for _, p := range a.paths {
		kind := ""
		if p.backup {
			kind = " backup"
		}
		left := "to the end"
		if p.gone {
			left = fmt.Sprintf("removed at %.3f s (%s)", p.removed.Seconds(), p.reason)
		}
		got := "received n/a"
		if p.counted {
			got = fmt.Sprintf("received %d B", p.received)
		}
		fmt.Fprintf(w, "  path %d %s%s: joined at %.3f s, %s, %s\n", p.id, p.ep, kind, p.joined.Seconds(), left, got)
	}
}
