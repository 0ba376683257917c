package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/session"
)

// The video workload's protocol, one stream per chunk: the client sends
// "CHUNK <k> <buffer-level-ns>\n" and closes its side; the server answers
// with chunk k (ChunkBytes of the payload seeded by the run's seed and k),
// ends the stream there, and sets the stream's deadline hint to the
// arrival of the request plus the buffer level, the time the player will
// need the chunk (XLINK's QoE feedback, carried in the request).

// chunkSeed is the payload seed of chunk k of a run with seed seed.
func chunkSeed(seed int64, k int) int64 { return seed ^ int64(k+1)<<40 }

// serveVideo answers the chunk requests of one session, one stream at a
// time, until it has served w.Chunks of them, then closes the session
// gracefully. A request that does not parse or names a chunk outside the
// video ends the session with an error.
func serveVideo(ctx context.Context, ln *session.Listener, r Run) serverResult {
	return serveSession(ctx, ln, func(s *session.Session) error { return serveChunks(ctx, s, r) })
}

// serveChunks answers the video's chunk requests on s, one stream at a time.
func serveChunks(ctx context.Context, s *session.Session, r Run) error {
	w := *r.Workload
	for range w.Chunks {
		st, err := s.AcceptStream(ctx)
		if err != nil {
			return err
		}
		line, err := bufio.NewReader(io.LimitReader(st, 64)).ReadString('\n')
		if err != nil {
			return fmt.Errorf("chunk request: %w", err)
		}
		k, level, err := parseChunkRequest(line, w.Chunks)
		if err != nil {
			return err
		}
		st.SetDeadlineHint(time.Now().Add(level))
		if _, err := io.CopyN(st, newPayload(chunkSeed(r.Seed, k)), w.ChunkBytes()); err != nil {
			return err
		}
		if err := st.Close(); err != nil {
			return err
		}
	}
	return nil
}

// parseChunkRequest reads "CHUNK <k> <level-ns>\n" with 0 <= k < chunks and
// a level of 0 to 24 hours.
func parseChunkRequest(line string, chunks int) (int, time.Duration, error) {
	f := strings.Fields(line)
	if len(f) != 3 || f[0] != "CHUNK" {
		return 0, 0, fmt.Errorf("bad chunk request %q", line)
	}
	k, err1 := strconv.Atoi(f[1])
	ns, err2 := strconv.ParseInt(f[2], 10, 64)
	if err1 != nil || err2 != nil || k < 0 || k >= chunks || ns < 0 || ns > int64(24*time.Hour) {
		return 0, 0, fmt.Errorf("bad chunk request %q", line)
	}
	return k, time.Duration(ns), nil
}

// fetchVideo plays the video workload r.Workload: it requests the chunks in
// order, one at a time, when the player model (player) allows, reads and
// verifies each, and returns the bytes read, whether every chunk verified,
// and the player's metrics. Waits between chunks are timers in the run's
// clock (virtual time in a synctest bubble).
func fetchVideo(ctx context.Context, s *session.Session, r Run, start time.Time) (int64, bool, *metrics.Video, error) {
	w := *r.Workload
	pl := newPlayer(w)
	stop := context.AfterFunc(ctx, func() { s.CloseWithError(0, ctx.Err().Error()) })
	defer stop()
	buf := make([]byte, 64<<10)
	var got int64
	ok := true
	for k := range w.Chunks {
		now := time.Since(start)
		if at := pl.nextRequest(now); at > now {
			t := time.NewTimer(at - now)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return got, false, pl.summary(), ctx.Err()
			}
		}
		req := time.Since(start)
		level := pl.level(req)
		st, err := s.OpenStream()
		if err != nil {
			return got, false, pl.summary(), err
		}
		st.SetDeadlineHint(start.Add(req + level))
		if _, err := fmt.Fprintf(st, "CHUNK %d %d\n", k, int64(level)); err != nil {
			return got, false, pl.summary(), err
		}
		st.Close()
		check := newPayloadCheck(chunkSeed(r.Seed, k))
		for n := w.ChunkBytes(); n > 0; {
			m, err := st.Read(buf[:min(int64(len(buf)), n)])
			check.Write(buf[:m])
			n -= int64(m)
			got += int64(m)
			if r.Hooks.Progress != nil && m > 0 {
				r.Hooks.Progress(got)
			}
			if err != nil && n > 0 {
				return got, false, pl.summary(), fmt.Errorf("bench: chunk %d: read: %w", k, err)
			}
		}
		if err := wantEOF(st); err != nil {
			return got, false, pl.summary(), fmt.Errorf("bench: chunk %d: %w", k, err)
		}
		pl.arrive(req, time.Since(start))
		if !check.ok(w.ChunkBytes()) {
			ok = false
		}
	}
	if !ok {
		return got, false, pl.summary(), errors.New("bench: a chunk is not the payload sent")
	}
	return got, true, pl.summary(), nil
}
