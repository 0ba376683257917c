package emu

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

func TestValidateNamesField(t *testing.T) {
	tr := SyntheticTrace(1, 1e6, time.Second, TraceConstant)
	for _, c := range []struct {
		cfg  LinkConfig
		want string
	}{
		{LinkConfig{RateBps: -1}, "RateBps"},
		{LinkConfig{Delay: -time.Millisecond}, "Delay"},
		{LinkConfig{Jitter: -1}, "Jitter"},
		{LinkConfig{QueueBytes: -1}, "QueueBytes"},
		{LinkConfig{Loss: 1.5}, "Loss"},
		{LinkConfig{Loss: 0.1, GE: BurstyLoss(0.1, 2)}, "Loss"},
		{LinkConfig{GE: &GilbertElliott{PGoodBad: 2}}, "GE.PGoodBad"},
		{LinkConfig{Outages: []Window{{2, 1}}}, "Outages[0].End"},
		{LinkConfig{Outages: []Window{{0, 10}, {5, 20}}}, "Outages[1].Start"},
		{LinkConfig{Outages: []Window{{10, 20}, {0, 5}}}, "Outages[1].Start"},
		{LinkConfig{Schedule: []Step{{At: 2, Set: FieldLoss}, {At: 1, Set: FieldLoss}}}, "Schedule[1].At"},
		{LinkConfig{Schedule: []Step{{At: 1}}}, "Schedule[0].Set"},
		{LinkConfig{Schedule: []Step{{Set: FieldLoss, Loss: -0.1}}}, "Schedule[0].Loss"},
		{LinkConfig{Schedule: []Step{{Set: FieldRate}}}, "Schedule[0].RateBps"},
		{LinkConfig{Schedule: []Step{{Set: FieldQueue}}}, "Schedule[0].QueueBytes"},
		{LinkConfig{Schedule: []Step{{Set: FieldDelay, Ramp: -1}}}, "Schedule[0].Ramp"},
		{LinkConfig{Trace: tr, Schedule: []Step{{Set: FieldRate, RateBps: 1}}}, "Schedule[0].RateBps"},
		{LinkConfig{Trace: &Trace{}}, "Trace"},
	} {
		err := c.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), "LinkConfig."+c.want) {
			t.Errorf("Validate(%+v) = %v, want an error naming %s", c.cfg, err, c.want)
		}
	}
	if err := (LinkConfig{RateBps: 1e6, Loss: 1, Outages: []Window{{0, 1}, {1, 2}}}).Validate(); err != nil {
		t.Errorf("valid config: %v", err)
	}
	n := New(1)
	defer n.Close()
	if _, err := n.Connect(addrA, addrB, LinkConfig{}, LinkConfig{Loss: 2}); err == nil || !strings.Contains(err.Error(), "b→a") {
		t.Errorf("Connect with a bad b→a config: %v", err)
	}
}

// SetDown drops queued and in-flight packets and everything sent while
// down; SetDown(false) restores the link.
func TestSetDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPair(t, 1, LinkConfig{Delay: 50 * time.Millisecond}, LinkConfig{})
		p.sendEvery(0, 10, 100, time.Millisecond) // in flight until ~60 ms
		p.link.SetDown(true)
		p.sendEvery(10, 10, 100, time.Millisecond)
		p.link.SetDown(false)
		p.sendEvery(20, 10, 100, time.Millisecond)
		recv := p.close(time.Second)
		if len(recv) != 10 || recv[0].seq != 20 {
			t.Errorf("received %d packets starting at seq %d, want 10 from seq 20", len(recv), recv[0].seq)
		}
		ab, _ := p.link.Stats()
		if ab.DroppedOutage != 20 {
			t.Errorf("DroppedOutage = %d, want 20", ab.DroppedOutage)
		}
	})
}

// Update changes the configuration at run time.
func TestUpdate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPair(t, 1, LinkConfig{Delay: 10 * time.Millisecond}, LinkConfig{})
		p.sendEvery(0, 5, 100, 100*time.Millisecond)
		if err := p.link.Update(LinkConfig{Delay: 30 * time.Millisecond}, LinkConfig{}); err != nil {
			t.Fatal(err)
		}
		if err := p.link.Update(LinkConfig{Loss: -1}, LinkConfig{}); err == nil {
			t.Error("Update accepted Loss = -1")
		}
		p.sendEvery(5, 5, 100, 100*time.Millisecond)
		recv := p.close(time.Second)
		for _, r := range recv {
			want := 10 * time.Millisecond
			if r.seq >= 5 {
				want = 30 * time.Millisecond
			}
			if d := r.at - r.sentAt; d != want {
				t.Errorf("seq %d: delay %v, want %v", r.seq, d, want)
			}
		}
	})
}

// ReadFrom honours the read deadline, wakes when it is moved, and returns
// net.ErrClosed after Close.
func TestConnDeadlinesAndClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := New(1)
		c, err := n.Listen(addrA)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 100)
		start := time.Now()
		c.SetReadDeadline(start.Add(50 * time.Millisecond))
		_, _, err = c.ReadFrom(buf)
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("ReadFrom after the deadline: %v, want a timeout", err)
		}
		if el := time.Since(start); el != 50*time.Millisecond {
			t.Errorf("ReadFrom returned after %v, want 50ms", el)
		}
		// A deadline set in the past wakes a blocked reader (quic-go's
		// Transport.Close relies on this).
		c.SetReadDeadline(time.Time{})
		errc := make(chan error)
		go func() { _, _, err := c.ReadFrom(buf); errc <- err }()
		time.Sleep(time.Second)
		c.SetReadDeadline(time.Now())
		if err := <-errc; !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("ReadFrom woken by a past deadline: %v", err)
		}
		c.SetDeadline(time.Time{})
		go func() { _, _, err := c.ReadFrom(buf); errc <- err }()
		synctest.Wait()
		n.Close()
		if err := <-errc; !errors.Is(err, net.ErrClosed) {
			t.Errorf("ReadFrom after Close: %v, want net.ErrClosed", err)
		}
		if _, err := c.WriteTo(buf, net.UDPAddrFromAddrPort(addrB)); !errors.Is(err, net.ErrClosed) {
			t.Errorf("WriteTo after Close: %v, want net.ErrClosed", err)
		}
		if _, err := n.Listen(addrB); !errors.Is(err, ErrClosed) {
			t.Errorf("Listen on a closed Network: %v", err)
		}
	})
}

func TestWriteDeadlineAndUnroutable(t *testing.T) {
	n := New(1)
	defer n.Close()
	a, _ := n.Listen(addrA)
	dst := net.UDPAddrFromAddrPort(netip.MustParseAddrPort("192.0.2.1:9"))
	if k, err := a.WriteTo(make([]byte, 10), dst); k != 10 || err != nil {
		t.Errorf("WriteTo with no link = %d, %v; want a silent drop", k, err)
	}
	a.SetWriteDeadline(time.Now().Add(-time.Second))
	if _, err := a.WriteTo(make([]byte, 10), dst); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("WriteTo after the write deadline: %v", err)
	}
	if _, err := n.Listen(addrA); err == nil {
		t.Error("Listen twice on the same address succeeded")
	}
	c, err := n.Listen(netip.MustParseAddrPort("10.9.9.9:0"))
	if err != nil || c.AddrPort().Port() == 0 {
		t.Errorf("Listen on port 0: %v, %v", c, err)
	}
	if got := a.LocalAddr().(*net.UDPAddr).AddrPort(); got != addrA {
		t.Errorf("LocalAddr = %v, want %v", got, addrA)
	}
}

// A receiver that does not read loses what exceeds RecvQueueLen.
func TestRecvQueueBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := New(1)
		a, _ := n.Listen(addrA)
		b, _ := n.Listen(addrB)
		l, _ := n.Connect(addrA, addrB, LinkConfig{}, LinkConfig{})
		for range RecvQueueLen + 100 {
			a.WriteTo(make([]byte, 10), b.LocalAddr())
		}
		time.Sleep(time.Millisecond)
		ab, _ := l.Stats()
		if ab.DeliveredPkts != RecvQueueLen || ab.DroppedRecv != 100 {
			t.Errorf("delivered %d, dropped at receiver %d; want %d and 100", ab.DeliveredPkts, ab.DroppedRecv, RecvQueueLen)
		}
		n.Close()
	})
}

// The topology's paths are independent links to one server; AddPath adds
// one at run time.
func TestTopology(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		topo, err := NewTopology(1,
			PathSpec{Up: LinkConfig{Delay: 10 * time.Millisecond}},
			PathSpec{Up: LinkConfig{Delay: 30 * time.Millisecond}})
		if err != nil {
			t.Fatal(err)
		}
		c3, _, err := topo.AddPath(PathSpec{Up: LinkConfig{Delay: 50 * time.Millisecond}})
		if err != nil {
			t.Fatal(err)
		}
		if got := c3.AddrPort(); got != netip.MustParseAddrPort("10.0.3.2:5002") {
			t.Errorf("third client at %v", got)
		}
		srv := net.UDPAddrFromAddrPort(topo.ServerAddr)
		start := time.Now()
		for _, c := range topo.Clients {
			c.WriteTo([]byte("hello"), srv)
		}
		buf := make([]byte, 10)
		for i, want := range []time.Duration{10, 30, 50} {
			_, from, err := topo.Server.ReadFrom(buf)
			if err != nil {
				t.Fatal(err)
			}
			if from.String() != topo.Clients[i].LocalAddr().String() || time.Since(start) != want*time.Millisecond {
				t.Errorf("packet %d from %v after %v; want from %v after %vms", i, from, time.Since(start), topo.Clients[i].LocalAddr(), want)
			}
		}
		topo.Close()
	})
}

// Close waits for every link goroutine, in real time too. Only a link
// direction that forwards packets to a further link (or whose routes end at
// several addresses) has a goroutine; the others are read by their
// receivers. In a bubble, synctest.Test fails if a goroutine outlives Close.
func TestCloseLeavesNoGoroutines(t *testing.T) {
	check := func(t *testing.T) {
		topo, err := NewTopology(1, PathSpec{}, PathSpec{}, PathSpec{})
		if err != nil {
			t.Fatal(err)
		}
		if got := eagerDirs(topo.Links); got != 0 {
			t.Errorf("3 links of one hop started %d goroutines, want 0", got)
		}
		topo.Close()
		// Two paths behind one shared link: the access links' client→server
		// directions and the shared link's server→client direction forward.
		shared, err := NewSharedTopology(1, []PathSpec{{}, {}}, []SharedLink{{Paths: []int{0, 1}}})
		if err != nil {
			t.Fatal(err)
		}
		if got := eagerDirs(append(shared.Links, shared.Shared...)); got != 3 {
			t.Errorf("a shared topology started %d goroutines, want 3", got)
		}
		shared.Close()
	}
	check(t)
	synctest.Test(t, check)
}

// eagerDirs counts the link directions that have a goroutine.
func eagerDirs(links []*Link) int {
	n := 0
	for _, l := range links {
		for _, d := range []*dir{l.ab, l.ba} {
			d.mu.Lock()
			if d.eager {
				n++
			}
			d.mu.Unlock()
		}
	}
	return n
}
