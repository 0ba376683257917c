// Package mpfile is the file-download protocol of cmd/mpquic-server and
// cmd/mpquic-client, carried on the streams of a multipath session
// (pkg/session), plus HTTP/1.1 over the same streams, the client's progress
// display and the metrics.Result record a download produces.
//
// The file protocol, one request per stream (lines end in "\n"):
//
//	client: FILE <name>
//	server: OK <size_bytes> <sha256_hex>   then exactly size_bytes of file data
//	        (or ERR <reason>, then the stream ends)
//	client: STATS                          after the last byte arrived
//	server: one JSON ServerStats object, then the stream ends
//
// Any stream whose first bytes are not "FILE " is an HTTP/1.1 connection
// (see Server.Handler and Transport).
package mpfile

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mpqsched/mpqsched/pkg/session"
)

// Protocol words.
const (
	cmdFile  = "FILE "
	cmdStats = "STATS"
	maxLine  = 4096 // longest request or header line, bytes
)

// ErrServer wraps an error the server reported (an ERR line).
var ErrServer = errors.New("server")

// ServerStats is the sender's side of a download, as the server reports it
// after the data.
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

// hashCache remembers files' SHA-256, keyed by path, size and mtime.
type hashCache struct {
	mu sync.Mutex
	m  map[string][sha256.Size]byte
}

// sum returns the SHA-256 of the file at path (key of the cache, with its
// size and mtime from fi), reading it from f.
func (h *hashCache) sum(path string, fi os.FileInfo, f io.ReaderAt) ([sha256.Size]byte, error) {
	key := fmt.Sprintf("%s|%d|%d", path, fi.Size(), fi.ModTime().UnixNano())
	h.mu.Lock()
	v, ok := h.m[key]
	h.mu.Unlock()
	if ok {
		return v, nil
	}
	d := sha256.New()
	if _, err := io.Copy(d, io.NewSectionReader(f, 0, fi.Size())); err != nil {
		return v, err
	}
	copy(v[:], d.Sum(nil))
	h.mu.Lock()
	if h.m == nil {
		h.m = map[string][sha256.Size]byte{}
	}
	h.m[key] = v
	h.mu.Unlock()
	return v, nil
}

// fileStream is the part of a session stream serveFile uses.
type fileStream interface {
	writeDeadliner
	SetReadDeadline(t time.Time) error
}

// fileLimits are serveFile's timeouts and clock.
type fileLimits struct {
	request time.Duration // for the STATS line after the data
	write   time.Duration // longest time without write progress
	now     func() time.Time
}

// serveFile answers one FILE request on st (the request line already read
// from br, which reads st): name under dir, by checkPath's rule. stats
// reports the session's sender counters for the trailer. A write that makes
// no progress for lim.write fails with os.ErrDeadlineExceeded.
func serveFile(st fileStream, br *bufio.Reader, dir, name string, hc *hashCache, lim fileLimits, stats func() ServerStats) error {
	rw := progressWriter{w: st, timeout: lim.write, now: lim.now}
	rel, err := checkPath(name)
	if err != nil {
		fmt.Fprintf(rw, "ERR bad file name %q\n", name)
		return fmt.Errorf("bad file name %q", name)
	}
	f, err := os.OpenInRoot(dir, rel)
	if err != nil {
		fmt.Fprintf(rw, "ERR no such file: %s\n", name)
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		fmt.Fprintf(rw, "ERR not a regular file: %s\n", name)
		return fmt.Errorf("%s: not a regular file (%v)", name, err)
	}
	sum, err := hc.sum(filepath.Join(dir, filepath.FromSlash(rel)), fi, f)
	if err != nil {
		fmt.Fprintf(rw, "ERR reading %s\n", name)
		return err
	}
	if _, err := fmt.Fprintf(rw, "OK %d %s\n", fi.Size(), hex.EncodeToString(sum[:])); err != nil {
		return err
	}
	if _, err := io.CopyN(rw, f, fi.Size()); err != nil {
		return err
	}
	st.SetReadDeadline(lim.now().Add(lim.request))
	line, err := readLine(br)
	if err != nil || line != cmdStats {
		return nil // the client did not ask for the trailer
	}
	b, _ := json.Marshal(stats())
	_, err = rw.Write(append(b, '\n'))
	return err
}

// readLine reads one "\n"-terminated line of at most maxLine bytes, without
// its end.
func readLine(br *bufio.Reader) (string, error) {
	var sb strings.Builder
	for {
		frag, err := br.ReadSlice('\n')
		sb.Write(frag)
		if sb.Len() > maxLine {
			return "", errors.New("line too long")
		}
		if err == nil {
			return strings.TrimRight(sb.String(), "\r\n"), nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return "", err
		}
	}
}

// header is a parsed OK line.
type header struct {
	size int64
	sum  [sha256.Size]byte
}

func parseHeader(line string) (header, error) {
	var h header
	if msg, ok := strings.CutPrefix(line, "ERR "); ok {
		return h, fmt.Errorf("%w: %s", ErrServer, msg)
	}
	f := strings.Fields(line)
	if len(f) != 3 || f[0] != "OK" {
		return h, fmt.Errorf("bad response header %q", line)
	}
	n, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil || n < 0 {
		return h, fmt.Errorf("bad size in header %q", line)
	}
	b, err := hex.DecodeString(f[2])
	if err != nil || len(b) != sha256.Size {
		return h, fmt.Errorf("bad SHA-256 in header %q", line)
	}
	h.size = n
	copy(h.sum[:], b)
	return h, nil
}
