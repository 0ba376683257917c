package netem

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

var execCommand = exec.Command

// DetectBackend reports "netem" if the kernel accepts a netem qdisc (tried on
// a veth in a scratch namespace <prefix>-probe, deleted afterwards), else
// "nfq".
func DetectBackend(prefix string, o Options) (string, error) {
	r := runner{log: o.Log}
	ns := prefix + "-probe"
	if nsExists(ns) {
		_, _ = r.run("ip", "netns", "del", ns)
	}
	if _, err := r.run("ip", "netns", "add", ns); err != nil {
		return "", err
	}
	defer func() { _, _ = r.run("ip", "netns", "del", ns) }()
	nl := newNlink(o.Log)
	defer nl.close()
	if err := nl.veth(ns, "pa", ns, "pb"); err != nil {
		return "", err
	}
	if err := nl.setLink(ns, "pa", true); err != nil {
		return "", err
	}
	if _, err := r.run("tc", "-n", ns, "qdisc", "add", "dev", "pa", "root", "netem", "delay", "1ms"); err == nil {
		return BackendNetem, nil
	}
	return BackendNFQ, nil
}

// delayd finds the mpq-delayd binary.
func (o Options) delayd() (string, error) {
	if o.DelaydPath != "" {
		return o.DelaydPath, nil
	}
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), "mpq-delayd")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath("mpq-delayd"); err == nil {
		return p, nil
	}
	return "", errors.New("netem: backend nfq needs mpq-delayd: build it (go build ./cmd/mpq-delayd) next to mpq-netns, put it on $PATH or pass -delayd")
}

// tbfArgs returns the tbf parameters for l: rate in bit/s, a burst of at
// least 20 kB (or 2 ms at the rate), and a limit of QueuePkts full frames or
// 50 ms worth of the rate.
func tbfArgs(l Link) []string {
	bps := l.RateMbit * 1e6
	burst := math.Max(20000, bps/8*0.002)
	args := []string{"tbf", "rate", fmtInt(bps) + "bit", "burst", fmtInt(burst)}
	if l.QueuePkts > 0 {
		return append(args, "limit", strconv.Itoa(l.QueuePkts*1514+int(burst)))
	}
	return append(args, "latency", "50ms")
}

func fmtInt(f float64) string { return strconv.FormatInt(int64(math.Round(f)), 10) }

func fmtMs(ms float64) string { return strconv.FormatFloat(ms, 'f', 3, 64) + "ms" }

// shape applies path p's impairment for one direction in its router
// namespace: packets of direction c2s enter the router on r<p>c and leave on
// r<p>s; s2c the reverse.
func shape(r runner, s Spec, o Options, p int, c2s bool) error {
	rt := s.RouterNS(p)
	l, in, out := s.Paths[p-1].Down(), routerServerDev(p), routerClientDev(p)
	if c2s {
		l, in, out = s.Paths[p-1].Up(), routerClientDev(p), routerServerDev(p)
	}
	switch s.Backend {
	case BackendNetem:
		args := []string{"tc", "-n", rt, "qdisc", "add", "dev", out, "root", "handle", "1:", "netem", "limit", "100000"}
		if l.DelayMs > 0 {
			args = append(args, "delay", fmtMs(l.DelayMs))
			if l.JitterMs > 0 {
				args = append(args, fmtMs(l.JitterMs))
			}
		}
		if l.LossPct > 0 {
			args = append(args, "loss", strconv.FormatFloat(l.LossPct, 'f', -1, 64)+"%")
		}
		if _, err := r.run(args...); err != nil {
			return err
		}
		if l.RateMbit > 0 {
			_, err := r.run(append([]string{"tc", "-n", rt, "qdisc", "add", "dev", out, "parent", "1:1", "handle", "10:"}, tbfArgs(l)...)...)
			return err
		}
		return nil
	case BackendNFQ:
		if l.RateMbit > 0 {
			if _, err := r.run(append([]string{"tc", "-n", rt, "qdisc", "add", "dev", out, "root", "handle", "1:"}, tbfArgs(l)...)...); err != nil {
				return err
			}
		}
		if l.LossPct > 0 {
			prob := strconv.FormatFloat(l.LossPct/100, 'f', -1, 64)
			if _, err := r.ns(rt, "iptables", "-A", "FORWARD", "-i", in, "-m", "statistic", "--mode", "random", "--probability", prob, "-j", "DROP"); err != nil {
				return err
			}
		}
		if l.DelayMs > 0 {
			q := queueNum(p, c2s)
			if err := startDelayd(r, s, o, rt, q, l); err != nil {
				return err
			}
			if _, err := r.ns(rt, "iptables", "-A", "FORWARD", "-i", in, "-j", "NFQUEUE", "--queue-num", strconv.Itoa(q)); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("netem: backend %q not resolved", s.Backend)
}

// startDelayd starts mpq-delayd for queue q in namespace ns, detached, with
// its log in the state directory, and waits until it has bound the queue.
func startDelayd(r runner, s Spec, o Options, ns string, q int, l Link) error {
	logPath := filepath.Join(o.stateDir(s.Prefix), fmt.Sprintf("delayd-%s-q%d.log", ns, q))
	f, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer f.Close()
	argv := []string{"ip", "netns", "exec", ns, o.DelaydPath, "-queue", strconv.Itoa(q),
		"-delay", fmtMs(l.DelayMs), "-jitter", fmtMs(l.JitterMs), "-seed", strconv.Itoa(q)}
	if r.log != nil {
		fmt.Fprintf(r.log, "+ %s > %s &\n", strings.Join(argv, " "), logPath)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	for i := 0; i < 100; i++ {
		select {
		case err := <-exited:
			b, _ := os.ReadFile(logPath)
			return fmt.Errorf("netem: mpq-delayd for %s queue %d exited (%v): %s", ns, q, err, strings.TrimSpace(string(b)))
		case <-time.After(20 * time.Millisecond):
		}
		if b, _ := os.ReadFile(logPath); strings.Contains(string(b), "bound") {
			_ = os.WriteFile(strings.TrimSuffix(logPath, ".log")+".pid", []byte(strconv.Itoa(cmd.Process.Pid)), 0o644)
			return nil
		}
	}
	return fmt.Errorf("netem: mpq-delayd for %s queue %d did not bind within 2 s; see %s", ns, q, logPath)
}
