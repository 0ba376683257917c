package attack

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// clkTck is the kernel's clock tick for /proc/PID/stat times (USER_HZ,
// 100 on every Linux architecture Go supports).
const clkTck = 100

// Proc is one reading of a process's /proc files.
type Proc struct {
	RSS     int64   // VmRSS, bytes
	HWM     int64   // VmHWM (peak RSS since start), bytes
	Threads int     // Threads
	CPU     float64 // user + system CPU time since start, seconds
}

// ReadProc reads /proc/PID/status and /proc/PID/stat (pid 0: this process).
func ReadProc(pid int) (Proc, error) {
	var p Proc
	dir := "/proc/self"
	if pid > 0 {
		dir = "/proc/" + strconv.Itoa(pid)
	}
	f, err := os.Open(dir + "/status")
	if err != nil {
		return p, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		fs := strings.Fields(v)
		if len(fs) == 0 {
			continue
		}
		n, _ := strconv.ParseInt(fs[0], 10, 64)
		switch k {
		case "VmRSS":
			p.RSS = n << 10
		case "VmHWM":
			p.HWM = n << 10
		case "Threads":
			p.Threads = int(n)
		}
	}
	b, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return p, err
	}
	// Fields after the command name (which may hold spaces) in parentheses.
	i := strings.LastIndexByte(string(b), ')')
	fs := strings.Fields(string(b[i+1:]))
	if len(fs) < 13 {
		return p, fmt.Errorf("attack: short %s/stat", dir)
	}
	ut, _ := strconv.ParseInt(fs[11], 10, 64) // utime: field 14 of stat
	st, _ := strconv.ParseInt(fs[12], 10, 64) // stime: field 15
	p.CPU = float64(ut+st) / clkTck
	return p, nil
}

// Usage is what a Sampler saw.
type Usage struct {
	PeakRSS        int64   `json:"peak_rss_bytes"`         // largest VmRSS sampled
	FinalRSS       int64   `json:"final_rss_bytes"`        // VmRSS at Stop
	CPUSeconds     float64 `json:"cpu_seconds"`            // CPU time used between Start and Stop
	CPUShare       float64 `json:"cpu_share"`              // CPUSeconds per wall second (1 = one core)
	PeakThreads    int     `json:"peak_threads"`           // largest thread count sampled
	PeakGoroutines int     `json:"peak_goroutines"`        // largest goroutine count (own process only)
	Seconds        float64 `json:"sampled_seconds"`        // wall time sampled
	Samples        int     `json:"samples"`                // readings taken
	Errors         int     `json:"sample_errors,omitzero"` // readings that failed
}

// Sampler reads a process's /proc files every interval.
type Sampler struct {
	pid   int
	start time.Time
	cpu0  float64
	stop  chan struct{}
	done  chan struct{}
	mu    sync.Mutex
	u     Usage
}

// Sample starts sampling pid (0: this process, whose goroutines are
// counted too) every interval.
func Sample(pid int, interval time.Duration) *Sampler {
	s := &Sampler{pid: pid, start: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	if p, err := ReadProc(pid); err == nil {
		s.cpu0 = p.CPU
	}
	s.read()
	go func() {
		defer close(s.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				s.read()
			}
		}
	}()
	return s
}

func (s *Sampler) read() {
	p, err := ReadProc(s.pid)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.u.Errors++
		return
	}
	s.u.Samples++
	s.u.PeakRSS = max(s.u.PeakRSS, p.RSS)
	s.u.FinalRSS = p.RSS
	s.u.PeakThreads = max(s.u.PeakThreads, p.Threads)
	s.u.CPUSeconds = p.CPU - s.cpu0
	if s.pid == 0 {
		s.u.PeakGoroutines = max(s.u.PeakGoroutines, runtime.NumGoroutine())
	}
}

// Stop takes a last reading and returns the usage.
func (s *Sampler) Stop() Usage {
	close(s.stop)
	<-s.done
	s.read()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.u.Seconds = time.Since(s.start).Seconds()
	if s.u.Seconds > 0 {
		s.u.CPUShare = s.u.CPUSeconds / s.u.Seconds
	}
	return s.u
}
