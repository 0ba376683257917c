package gym

import (
	"errors"
	"fmt"
	"io"
)

// Serve answers the agent's commands on in/out until 'Q' or the end of in.
// bubble runs a function in a fresh synctest bubble (virtual time) and
// returns when it and every goroutine it started have returned; each
// episode runs in its own. Serve returns nil on 'Q' or EOF between
// episodes.
func Serve(in io.Reader, out io.Writer, bubble func(func())) error {
	c := newConn(in, out)
	var next []byte // a command already read (it ended an episode early)
	for {
		var t byte
		var p []byte
		if next != nil {
			t, p, next = next[0], next[1:], nil
		} else {
			var err error
			t, p, err = c.read()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
		}
		switch t {
		case CmdQuit:
			return nil
		case CmdDescribe, CmdReset:
			q, err := parseRequest(p)
			if err != nil {
				if err := c.writeError(ErrBadRequest, err); err != nil {
					return err
				}
				continue
			}
			if t == CmdDescribe {
				d, err := describe(q)
				if err != nil {
					err = c.writeError(ErrScenario, err)
				} else {
					err = c.writeJSON(RepJSON, d)
				}
				if err != nil {
					return err
				}
				continue
			}
			var perr error
			bubble(func() { next, perr = episode(c, q) })
			if perr != nil {
				if errors.Is(perr, io.EOF) {
					return nil
				}
				return perr
			}
		case CmdStep:
			if err := c.writeError(ErrBadRequest, errors.New("step before reset, or after the episode ended: reset first")); err != nil {
				return err
			}
		default:
			if err := c.writeError(ErrBadRequest, fmt.Errorf("unknown command %q", t)); err != nil {
				return err
			}
		}
	}
}
