// Command mptcp-baseline transfers a file over kernel MPTCP (Linux, Go's
// SetMultipathTCP) and prints one metrics.Result JSON line: the baseline the
// multipath QUIC schedulers are compared with.
//
// Usage:
//
//	mptcp-baseline serve -dir D -addr :PORT
//	mptcp-baseline get -addr HOST:PORT -file NAME -o OUT [-scenario S] [-seed N]
//	                   [-capacity-bps B] [-path-addrs A1,A2,...] [-require-subflows N]
//	                   [-tcp [-bind ADDR]]
//	mptcp-baseline mkfile -o FILE -size BYTES [-seed N]
//
// Protocol (one request per connection, all lines end in "\n"):
//
//	client: GET <name>
//	server: OK <size_bytes> <sha256_hex>   then exactly size_bytes of file data
//	        (or ERR <reason>)
//	client: STATS                          after the last byte arrived
//	server: one JSON array of the server's per-subflow counters
//
// get measures the flow completion time from the start of the dial to the
// last byte and the longest stall (max_stall_s: the longest wait for new
// bytes from the request to the last byte), checks the SHA-256 and reads the kernel's per-subflow counters on
// both ends (MPTCP_TCPINFO and MPTCP_SUBFLOW_ADDRS). It exits 1 if the
// connection fell back to plain TCP, fewer than -require-subflows subflows
// remained, or the hash did not match; the JSON line is printed in every case.
// With -tcp, get dials plain TCP instead (a single-path competitor or
// control flow, the namespace's congestion control): no MPTCP checks, and
// the server answers STATS with the connection's own tcp_info counters.
package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mpqsched/mpqsched/pkg/metrics"
)

func usage() {
	fmt.Fprintln(os.Stderr, "usage: mptcp-baseline serve -dir D -addr :PORT | get -addr HOST:PORT -file NAME -o OUT | mkfile -o FILE -size BYTES")
	os.Exit(2)
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("mptcp-baseline: ")
	if len(os.Args) < 2 {
		usage()
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	switch os.Args[1] {
	case "serve":
		dir := fs.String("dir", ".", "directory whose files are served")
		addr := fs.String("addr", ":4433", "listen address")
		_ = fs.Parse(os.Args[2:])
		if err := serve(*dir, *addr); err != nil {
			log.Fatal(err)
		}
	case "get":
		var g getter
		fs.StringVar(&g.addr, "addr", "", "server host:port")
		fs.StringVar(&g.bind, "bind", "", "local address to dial from (default: routing decides)")
		fs.StringVar(&g.file, "file", "", "file name to fetch")
		fs.StringVar(&g.out, "o", "", "where to write the file (/dev/null to discard)")
		fs.StringVar(&g.scenario, "scenario", "", "scenario name for the result")
		fs.Int64Var(&g.seed, "seed", 0, "seed recorded in the result")
		fs.Float64Var(&g.capacity, "capacity-bps", 0, "sum of the paths' bottleneck rates, bits/s, recorded in the result")
		pathAddrs := fs.String("path-addrs", "", "client addresses in path order (comma-separated); orders per_path_bytes")
		fs.IntVar(&g.needSubflows, "require-subflows", 1, "fail if fewer subflows than this are alive at the end")
		fs.BoolVar(&g.plainTCP, "tcp", false, "plain TCP instead of MPTCP (no MPTCP checks; -require-subflows is ignored)")
		fs.DurationVar(&g.timeout, "timeout", 5*time.Minute, "give up after this long")
		_ = fs.Parse(os.Args[2:])
		if g.addr == "" || g.file == "" || g.out == "" {
			usage()
		}
		if *pathAddrs != "" {
			g.pathAddrs = strings.Split(*pathAddrs, ",")
		}
		res := g.run()
		b, _ := json.Marshal(res)
		fmt.Println(string(b))
		if res.Error != "" {
			os.Exit(1)
		}
	case "mkfile":
		out := fs.String("o", "", "file to write")
		size := fs.Int64("size", 20<<20, "size, bytes")
		seed := fs.Uint64("seed", 1, "seed of the pseudo-random content")
		_ = fs.Parse(os.Args[2:])
		if err := mkfile(*out, *size, *seed); err != nil {
			log.Fatal(err)
		}
	default:
		usage()
	}
}

// mkfile writes size pseudo-random bytes (incompressible, reproducible).
func mkfile(path string, size int64, seed uint64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	r := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), byte(seed >> 16), byte(seed >> 24)})
	if _, err := io.CopyN(f, r, size); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// --- server ---

type hashCache struct {
	mu sync.Mutex
	m  map[string]string // path → hex SHA-256 (keyed with size and mtime)
}

func (h *hashCache) get(path string, st os.FileInfo) (string, error) {
	key := fmt.Sprintf("%s|%d|%d", path, st.Size(), st.ModTime().UnixNano())
	h.mu.Lock()
	defer h.mu.Unlock()
	if v, ok := h.m[key]; ok {
		return v, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	d := sha256.New()
	if _, err := io.Copy(d, f); err != nil {
		return "", err
	}
	v := hex.EncodeToString(d.Sum(nil))
	h.m[key] = v
	return v, nil
}

func serve(dir, addr string) error {
	var lc net.ListenConfig
	lc.SetMultipathTCP(true)
	ln, err := lc.Listen(context.Background(), "tcp", addr)
	if err != nil {
		return err
	}
	log.Printf("serving %s on %s (MPTCP)", dir, ln.Addr())
	hc := &hashCache{m: map[string]string{}}
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go func() {
			if err := handle(c.(*net.TCPConn), dir, hc); err != nil {
				log.Printf("%s: %v", c.RemoteAddr(), err)
			}
		}()
	}
}

func handle(c *net.TCPConn, dir string, hc *hashCache) error {
	defer c.Close()
	br := bufio.NewReader(c)
	line, err := br.ReadString('\n')
	if err != nil {
		return err
	}
	name, ok := strings.CutPrefix(strings.TrimSpace(line), "GET ")
	if !ok || name == "" || name != filepath.Base(name) || strings.HasPrefix(name, ".") {
		fmt.Fprintf(c, "ERR bad request\n")
		return fmt.Errorf("bad request %q", line)
	}
	path := filepath.Join(dir, name)
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintf(c, "ERR no such file\n")
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	sum, err := hc.get(path, st)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(c, "OK %d %s\n", st.Size(), sum); err != nil {
		return err
	}
	if _, err := io.Copy(c, f); err != nil {
		return err
	}
	if line, err = br.ReadString('\n'); err != nil || strings.TrimSpace(line) != "STATS" {
		return fmt.Errorf("no STATS request: %q %v", line, err)
	}
	sfs, err := subflows(c)
	if err != nil {
		sfs = nil // plain TCP: the client notices on its own socket (or asked for it with -tcp)
		if s, err := plainTCP(c); err == nil {
			sfs = []Subflow{s}
		}
	}
	b, _ := json.Marshal(sfs)
	_, err = c.Write(append(b, '\n'))
	return err
}

// --- client ---

type getter struct {
	addr, bind, file, out string
	scenario              string
	seed                  int64
	capacity              float64  // bits/s
	pathAddrs             []string // client addresses in path order
	needSubflows          int
	plainTCP              bool // dial plain TCP, not MPTCP
	timeout               time.Duration
}

func (g *getter) run() metrics.Result {
	res := metrics.Result{Scheduler: "kernel-mptcp", Scenario: g.scenario, Seed: g.seed, CapacityBps: g.capacity}
	err := g.fetch(&res)
	if err != nil {
		res.Error = err.Error()
	}
	return res
}

func (g *getter) fetch(res *metrics.Result) error {
	ofo0, ofoOK := mptcpOFOQueue()
	d := net.Dialer{Timeout: 10 * time.Second}
	d.SetMultipathTCP(!g.plainTCP)
	if g.bind != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(g.bind)}
	}
	start := time.Now()
	nc, err := d.Dial("tcp", g.addr)
	if err != nil {
		return err
	}
	c := nc.(*net.TCPConn)
	defer c.Close()
	_ = c.SetDeadline(start.Add(g.timeout))
	isMPTCP, _ := c.MultipathTCP()
	if _, err := fmt.Fprintf(c, "GET %s\n", g.file); err != nil {
		return err
	}
	// The longest wait for in-order bytes, from the request to the last
	// byte (max_stall_s), as mpquic-client times it.
	var stall metrics.StallTimer
	stall.Begin(time.Now())
	br := bufio.NewReaderSize(c, 256<<10)
	hdr, err := br.ReadString('\n')
	if err != nil {
		return fmt.Errorf("reading header: %w", err)
	}
	f := strings.Fields(hdr)
	if len(f) != 3 || f[0] != "OK" {
		return fmt.Errorf("server: %s", strings.TrimSpace(hdr))
	}
	size, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		return fmt.Errorf("bad size in header %q", hdr)
	}
	want := f[2]
	out, err := os.Create(g.out)
	if err != nil {
		return err
	}
	defer out.Close()
	h := sha256.New()
	n, err := io.CopyN(metrics.StallWriter{W: io.MultiWriter(out, h), T: &stall}, br, int64(size))
	end := time.Now()
	stall.End(end)
	res.MaxStallSec = stall.Max().Seconds()
	res.Bytes = uint64(n)
	res.FCTSeconds = end.Sub(start).Seconds()
	if res.FCTSeconds > 0 {
		res.GoodputBps = float64(n) * 8 / res.FCTSeconds
	}
	if err != nil {
		return fmt.Errorf("after %d of %d bytes: %w", n, size, err)
	}
	res.SHA256OK = hex.EncodeToString(h.Sum(nil)) == want

	// Counters: ours (receiver) and the server's (sender).
	mine, mineErr := subflows(c)
	if g.plainTCP {
		var s Subflow
		if s, mineErr = plainTCP(c); mineErr == nil {
			mine = []Subflow{s}
		}
	}
	if _, err := fmt.Fprintf(c, "STATS\n"); err != nil {
		return err
	}
	line, err := br.ReadString('\n')
	if err != nil {
		return fmt.Errorf("reading server stats: %w", err)
	}
	var theirs []Subflow
	if err := json.Unmarshal([]byte(line), &theirs); err != nil {
		return fmt.Errorf("server stats %q: %w", line, err)
	}
	g.account(res, theirs, mine)
	if ofo1, ok := mptcpOFOQueue(); ok && ofoOK {
		res.OOOSegments = ofo1 - ofo0 // namespace-wide: exact when this is the only MPTCP flow
	}
	res.Extra["mptcp"] = b2f(isMPTCP)
	res.Extra["subflows"] = float64(len(mine))

	var errs []error
	if g.plainTCP {
		res.Scheduler = "tcp"
		if isMPTCP {
			errs = append(errs, errors.New("-tcp: the connection is MPTCP"))
		}
	} else if !isMPTCP || mineErr != nil {
		errs = append(errs, fmt.Errorf("connection is not MPTCP (fell back to TCP): %v", mineErr))
	}
	if !g.plainTCP && len(mine) < g.needSubflows {
		errs = append(errs, fmt.Errorf("%d subflows, want at least %d", len(mine), g.needSubflows))
	}
	if !res.SHA256OK {
		errs = append(errs, errors.New("SHA-256 mismatch"))
	}
	return errors.Join(errs...)
}

// account fills the per-path and sender-side counters from the server's
// subflows (matched to paths by their remote, i.e. client, address).
func (g *getter) account(res *metrics.Result, theirs, mine []Subflow) {
	order := g.pathAddrs
	if len(order) == 0 {
		seen := map[string]bool{}
		for _, s := range theirs {
			if !seen[s.Remote] {
				seen[s.Remote] = true
				order = append(order, s.Remote)
			}
		}
		sort.Strings(order)
	}
	res.PerPathBytes = make([]uint64, len(order))
	var tcpRetrans uint64
	for _, s := range theirs {
		res.SentBytes += s.BytesSent
		tcpRetrans += s.BytesRetrans
		res.RetransPackets += uint64(s.TotalRetrans)
		for i, a := range order {
			if a == s.Remote {
				res.PerPathBytes[i] += s.BytesSent
			}
		}
	}
	// Everything sent beyond one copy of the file: TCP retransmissions on a
	// subflow plus MPTCP reinjections of data onto another subflow.
	if res.SentBytes > res.Bytes {
		res.RedundantBytes = res.SentBytes - res.Bytes
	}
	var ooo uint32
	for _, s := range mine {
		ooo += s.RcvOOOPack
	}
	res.Extra = map[string]float64{"subflow_rcv_ooopack": float64(ooo), "tcp_retrans_bytes": float64(tcpRetrans)}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
