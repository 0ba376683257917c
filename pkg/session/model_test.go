package session

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/emu"
)

// The model-based stream test: 200 streams opened from both ends over two
// lossy paths (one with a 2 s outage), with writes, reads, closes,
// CancelWrite and CancelRead interleaved at random from several goroutines.
// Every direction's bytes are checked against the model of what must
// arrive, every cancellation must reach the peer with its code, and no
// stream may stay in either session at the end.
//
// MPQ_MODEL_SEEDS=1,2,3 picks the seeds; a failure names its seed.
func TestStreamsModel(t *testing.T) {
	seeds := []uint64{1, 2, 3}
	if testing.Short() {
		seeds = seeds[:1]
	}
	seeds = seedsFromEnv(t, "MPQ_MODEL_SEEDS", seeds)
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("reproduce with: MPQ_MODEL_SEEDS=%d go test -run 'TestStreamsModel' ./pkg/session/", seed)
				}
			})
			synctest.Test(t, func(t *testing.T) { runStreamsModel(t, seed) })
		})
	}
}

// dirPlan is what one end does with one direction of a stream.
type dirPlan struct {
	size        int    // bytes the writer offers
	chunk       int    // largest Write, bytes
	cancelWrite int    // CancelWrite once this many bytes were accepted (-1: never)
	writeCode   uint64 // its code
	closeAside  bool   // Close from another goroutine while Writes may block
	cancelRead  int    // CancelRead once this many bytes were read (-1: never)
	readCode    uint64 // its code
	pause       time.Duration
	slow        bool // the writer pauses between Writes, so a STOP_SENDING can overtake it
}

// dirResult is what happened to one direction.
type dirResult struct {
	accepted   int    // bytes Writes accepted
	cancelled  bool   // the writer called CancelWrite
	writeErr   error  // the first Write error
	read       []byte // bytes read
	readErr    error  // how reading ended (io.EOF, a *StreamError, …)
	readCancel bool   // the reader called CancelRead
}

const modelStreams = 100 // opened by each end

func drawPlan(rng *rand.Rand) dirPlan {
	p := dirPlan{size: rng.IntN(16 << 10), chunk: 1 + rng.IntN(8<<10), cancelWrite: -1, cancelRead: -1}
	if rng.IntN(10) == 0 {
		p.size = rng.IntN(768 << 10) // some larger than a stream window
	}
	switch rng.IntN(10) {
	case 0:
		p.cancelWrite = rng.IntN(p.size + 1)
		p.writeCode = 100 + rng.Uint64N(1000)
	case 1:
		p.closeAside = true
	}
	if rng.IntN(10) == 0 {
		p.cancelRead = rng.IntN(p.size + 1)
		p.readCode = 5000 + rng.Uint64N(1000)
		if rng.IntN(2) == 0 { // a slow writer of 512 KiB: the stop must overtake it
			p.slow, p.size, p.chunk = true, 512<<10, 2<<10
			p.cancelWrite, p.closeAside = -1, false
			p.cancelRead = rng.IntN(64 << 10)
		}
	}
	p.pause = time.Duration(rng.IntN(50)) * time.Millisecond
	return p
}

// payload is the deterministic content of one direction.
func payload(seed uint64, id uint64, size int) []byte {
	b := make([]byte, size)
	rand.NewChaCha8(sha256.Sum256([]byte(fmt.Sprint(seed, id)))).Read(b)
	return b
}

type modelRun struct {
	seed  uint64
	plans map[uint64][2]dirPlan // by stream ID: [0] opener→acceptor, [1] back
	mu    sync.Mutex
	res   map[uint64]*[2]dirResult
	wg    sync.WaitGroup
}

func (m *modelRun) result(id uint64) *[2]dirResult {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.res[id]
	if r == nil {
		r = new([2]dirResult)
		m.res[id] = r
	}
	return r
}

// serve runs both directions of st at one end; out is the direction it
// writes (0 if it opened the stream).
func (m *modelRun) serve(st *Stream, out int) {
	plans := m.plans[st.ID()]
	res := m.result(st.ID())
	deadline := time.Now().Add(5 * time.Minute)
	st.SetDeadline(deadline)
	m.wg.Add(2)
	go func() { // writer
		defer m.wg.Done()
		p := plans[out]
		data := payload(m.seed, 2*st.ID()+uint64(out), p.size)
		r := &res[out]
		if p.closeAside {
			m.wg.Add(1)
			go func() {
				defer m.wg.Done()
				time.Sleep(p.pause)
				st.Close()
			}()
		}
		for r.accepted < len(data) {
			if p.cancelWrite >= 0 && r.accepted >= p.cancelWrite {
				break
			}
			end := min(len(data), r.accepted+p.chunk)
			if p.cancelWrite >= 0 {
				end = min(end, max(p.cancelWrite, r.accepted+1))
			}
			if p.slow {
				time.Sleep(20 * time.Millisecond)
			}
			n, err := st.Write(data[r.accepted:end])
			r.accepted += n
			if err != nil {
				r.writeErr = err
				break
			}
		}
		if p.cancelWrite >= 0 && r.writeErr == nil {
			r.cancelled = true
			st.CancelWrite(p.writeCode)
		} else if !p.closeAside {
			st.Close()
		}
	}()
	go func() { // reader
		defer m.wg.Done()
		p := plans[1-out]
		r := &res[1-out]
		buf := make([]byte, 1+int(p.pause)%5000)
		for {
			if p.cancelRead >= 0 && len(r.read) >= p.cancelRead {
				r.readCancel = true
				st.CancelRead(p.readCode)
				return
			}
			n, err := st.Read(buf)
			r.read = append(r.read, buf[:n]...)
			if err != nil {
				r.readErr = err
				return
			}
		}
	}()
}

func runStreamsModel(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	a := emu.LinkConfig{RateBps: 20e6, Delay: 5 * time.Millisecond, Loss: 0.01,
		Outages: []emu.Window{{Start: 1500 * time.Millisecond, End: 3500 * time.Millisecond}}}
	b := emu.LinkConfig{RateBps: 10e6, Delay: 15 * time.Millisecond, Loss: 0.01}
	cfg := &Config{MaxStreams: 32} // both ends wait for stream credit at times
	tb := newTestbedOn(t, int64(seed), cfg, true, emu.PathSpec{Up: a, Down: a}, emu.PathSpec{Up: b, Down: b})
	defer tb.close()

	m := &modelRun{seed: seed, plans: map[uint64][2]dirPlan{}, res: map[uint64]*[2]dirResult{}}
	for i := range uint64(modelStreams) {
		for _, client := range []bool{true, false} {
			m.plans[streamID(i, client, false)] = [2]dirPlan{drawPlan(rng), drawPlan(rng)}
		}
	}
	var loops sync.WaitGroup
	for _, end := range []struct {
		s      *Session
		client bool
	}{{tb.cli, true}, {tb.srv, false}} {
		loops.Add(2)
		go func() { // opener
			defer loops.Done()
			for i := range uint64(modelStreams) {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				st, err := end.s.OpenStreamSync(ctx)
				cancel()
				if err != nil {
					t.Errorf("client %v: open %d: %v", end.client, i, err)
					return
				}
				if st.ID() != streamID(i, end.client, false) {
					t.Errorf("opened stream %d, want %d", st.ID(), streamID(i, end.client, false))
				}
				m.serve(st, 0)
				time.Sleep(m.plans[st.ID()][0].pause / 4)
			}
		}()
		go func() { // acceptor
			defer loops.Done()
			for range modelStreams {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				st, err := end.s.AcceptStream(ctx)
				cancel()
				if err != nil {
					t.Errorf("client %v: accept: %v", end.client, err)
					return
				}
				m.serve(st, 1)
			}
		}()
	}
	loops.Wait()
	m.wg.Wait()
	time.Sleep(5 * time.Second) // the last records and acknowledgements
	checkModel(t, m)
	for name, s := range map[string]*Session{"client": tb.cli, "server": tb.srv} {
		if err := s.Err(); err != nil {
			t.Errorf("%s session ended: %v", name, err)
		}
		s.mu.Lock()
		left := s.streams.Len()
		s.mu.Unlock()
		if left != 0 {
			t.Errorf("%s keeps %d streams at the end", name, left)
		}
	}
}

// checkModel compares every direction with what the model allows.
func checkModel(t *testing.T, m *modelRun) {
	var resets, stops, eofs int
	for id, plans := range m.plans {
		res := m.res[id]
		if res == nil {
			t.Errorf("stream %d never ran", id)
			continue
		}
		for d := range 2 {
			p, r := plans[d], res[d]
			name := fmt.Sprintf("stream %d dir %d", id, d)
			want := payload(m.seed, 2*id+uint64(d), p.size)[:r.accepted]
			if len(r.read) > r.accepted || !bytes.Equal(r.read, want[:len(r.read)]) {
				t.Errorf("%s: read %d bytes that are not a prefix of the %d written", name, len(r.read), r.accepted)
				continue
			}
			var se *StreamError
			if r.writeErr != nil {
				switch {
				case errors.As(r.writeErr, &se) && se.Remote:
					stops++
					if !(len(r.read) >= p.cancelRead && p.cancelRead >= 0) || se.ErrorCode != p.readCode {
						t.Errorf("%s: Write failed with %v, but the reader cancelled with code %d at %d (read %d)", name, r.writeErr, p.readCode, p.cancelRead, len(r.read))
					}
				case p.closeAside && strings.Contains(r.writeErr.Error(), "closed stream"):
				default:
					t.Errorf("%s: unexpected Write error %v", name, r.writeErr)
				}
			}
			if p.slow && !(errors.As(r.writeErr, &se) && se.Remote) {
				t.Errorf("%s: CancelRead(%d) after %d bytes never reached the slow writer (it wrote %d, err %v)", name, p.readCode, len(r.read), r.accepted, r.writeErr)
			}
			if r.readCancel {
				continue
			}
			switch {
			case r.readErr == io.EOF:
				eofs++
				if r.cancelled {
					t.Errorf("%s: EOF after CancelWrite(%d)", name, p.writeCode)
				}
				if sha256.Sum256(r.read) != sha256.Sum256(want) {
					t.Errorf("%s: EOF after %d of %d bytes (SHA-256 differs)", name, len(r.read), r.accepted)
				}
			case errors.As(r.readErr, &se) && se.Remote && errors.Is(r.readErr, ErrStreamReset):
				resets++
				if !r.cancelled || se.ErrorCode != p.writeCode {
					t.Errorf("%s: reset with code %d; writer cancelled %v with code %d", name, se.ErrorCode, r.cancelled, p.writeCode)
				}
			default:
				t.Errorf("%s: reading ended with %v", name, r.readErr)
			}
		}
	}
	t.Logf("seed %d: %d directions read to EOF, %d resets seen by readers, %d stops seen by writers", m.seed, eofs, resets, stops)
	if resets == 0 || eofs == 0 || stops == 0 {
		t.Errorf("the run exercised too little: %d EOFs, %d resets, %d stops", eofs, resets, stops)
	}
}

// seedsFromEnv is the comma-separated seeds in the environment variable
// name, if it is set (a test's failure says which to reproduce), else
// seeds.
func seedsFromEnv(t *testing.T, name string, seeds []uint64) []uint64 {
	t.Helper()
	env := os.Getenv(name)
	if env == "" {
		return seeds
	}
	var out []uint64
	for _, f := range strings.Split(env, ",") {
		v, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, v)
	}
	return out
}
