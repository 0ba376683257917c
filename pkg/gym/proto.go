// Package gym is the Go side of the training environment (python/mpqgym):
// it runs one scenario of the emulator per episode, in virtual time, with
// the learned scheduler (sched/learned) on the data sender, whose policy is
// the agent at the other end of a pipe. docs/gym.md describes the whole
// environment; this file the protocol.
//
// # Protocol
//
// Frames in both directions: a little-endian uint32 length n, then n bytes:
// one type byte and the payload. The agent (Python) sends:
//
//	'D' describe  JSON Request (scenario, options): answered by 'J' Description
//	'R' reset     JSON Request (scenario, seed, options): answered by the first 'O'
//	'S' step      uint64 path mask, uint8 copy (9 bytes): answered by the next 'O'
//	'Q' quit      the process exits
//
// and receives:
//
//	'O' observation  the layout of Layout; after one with a terminal flag, a 'J' Result
//	'J' JSON         a Description, or the episode's metrics.Result
//	'E' error        JSON ErrorReply; the command it answers had no other effect
//
// One step is one decision interval: the 'S' answers the 'O' of a boundary
// and its action holds until the next boundary. Virtual time stands still
// between an 'O' and the reply to it: the scheduler's goroutine waits for
// the reply in a read system call, which synctest does not count as
// durably blocked, so the bubble's clock cannot advance (TestClockStopsWhileAgentThinks).
package gym

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Frame types.
const (
	CmdDescribe = 'D'
	CmdReset    = 'R'
	CmdStep     = 'S'
	CmdQuit     = 'Q'

	RepObs   = 'O'
	RepJSON  = 'J'
	RepError = 'E'
)

// MaxFrame bounds a frame the agent may send, bytes: requests are small
// JSON, steps 10 bytes.
const MaxFrame = 1 << 20

// Error kinds of ErrorReply.
const (
	ErrBadAction  = "bad_action"  // the step's action does not fit the observation
	ErrBadRequest = "bad_request" // unreadable or unexpected command
	ErrScenario   = "scenario"    // the scenario or options cannot be used
	ErrEpisode    = "episode"     // the episode ended before its first decision
)

// ErrorReply is the payload of an 'E' frame.
type ErrorReply struct {
	Kind    string `json:"kind"`    // ErrBadAction, ErrBadRequest, ErrScenario or ErrEpisode
	Message string `json:"message"` // what was wrong, for a person
}

// conn is one end of the protocol: buffered reads and writes of frames.
// It is used by one goroutine at a time (the server loop between episodes,
// the scheduler's goroutine during one).
type conn struct {
	r   *bufio.Reader
	w   *bufio.Writer
	buf []byte // last frame read (reused)
	out []byte // frame being written (reused)
}

func newConn(r io.Reader, w io.Writer) *conn {
	return &conn{r: bufio.NewReaderSize(r, 64<<10), w: bufio.NewWriterSize(w, 64<<10)}
}

// read returns the next frame's type and payload (valid until the next read).
func (c *conn) read() (byte, []byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(c.r, hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.LittleEndian.Uint32(hdr[:])
	if n == 0 || n > MaxFrame {
		return 0, nil, fmt.Errorf("gym: frame of %d bytes (want 1..%d)", n, MaxFrame)
	}
	if cap(c.buf) < int(n) {
		c.buf = make([]byte, n)
	}
	c.buf = c.buf[:n]
	if _, err := io.ReadFull(c.r, c.buf); err != nil {
		return 0, nil, err
	}
	return c.buf[0], c.buf[1:], nil
}

// begin starts a frame of type t in c.out; finish writes and flushes it.
func (c *conn) begin(t byte) {
	c.out = append(c.out[:0], 0, 0, 0, 0, t)
}

func (c *conn) finish() error {
	binary.LittleEndian.PutUint32(c.out, uint32(len(c.out)-4))
	if _, err := c.w.Write(c.out); err != nil {
		return err
	}
	return c.w.Flush()
}

func (c *conn) writeJSON(t byte, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	c.begin(t)
	c.out = append(c.out, b...)
	return c.finish()
}

func (c *conn) writeError(kind string, err error) error {
	return c.writeJSON(RepError, ErrorReply{Kind: kind, Message: err.Error()})
}

// decodeStep reads a step payload.
func decodeStep(p []byte) (mask uint64, copyBit byte, err error) {
	if len(p) != 9 {
		return 0, 0, fmt.Errorf("step payload of %d bytes, want 9", len(p))
	}
	return binary.LittleEndian.Uint64(p), p[8], nil
}

var errQuit = errors.New("gym: quit")
