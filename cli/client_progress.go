package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// downloadProgress shows a download's progress: a bar redrawn in place on a
// terminal, otherwise one line per Interval.
type downloadProgress struct {
	W        io.Writer     // where to draw (stderr)
	TTY      bool          // draw a bar redrawn in place
	Interval time.Duration // between lines when not a TTY (0 = 1 s); between redraws on a TTY, a tenth of it
	Label    string        // printed before the figures

	mu    sync.Mutex
	start time.Time
	last  time.Time
	got   int64
	size  int64
}

// newDownloadProgress draws on f, as a bar if f is a terminal.
func newDownloadProgress(f *os.File, label string) *downloadProgress {
	tty := false
	if fi, err := f.Stat(); err == nil {
		tty = fi.Mode()&os.ModeCharDevice != 0
	}
	return &downloadProgress{W: f, TTY: tty, Label: label}
}

// Update records got bytes of size (size < 0: unknown) and redraws if due.
func (p *downloadProgress) Update(got, size int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if p.start.IsZero() {
		p.start, p.last = now, now
	}
	p.got, p.size = got, size
	iv := p.Interval
	if iv == 0 {
		iv = time.Second
	}
	if p.TTY {
		iv /= 10
	}
	if now.Sub(p.last) < iv && got != size {
		return
	}
	p.last = now
	p.drawLocked(now)
}

// Done finishes the display (a newline after a bar).
func (p *downloadProgress) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.start.IsZero() {
		return
	}
	if p.TTY {
		p.drawLocked(time.Now())
		fmt.Fprintln(p.W)
	}
}

func (p *downloadProgress) drawLocked(now time.Time) {
	el := now.Sub(p.start).Seconds()
	rate := 0.0
	if el > 0 {
		rate = float64(p.got) * 8 / el / 1e6
	}
	frac := -1.0
	if p.size > 0 {
		frac = float64(p.got) / float64(p.size)
	}
	figures := fmt.Sprintf("%.1f MB %6.2f Mbit/s", float64(p.got)/1e6, rate)
	if frac >= 0 {
		figures = fmt.Sprintf("%5.1f%% %.1f/%.1f MB %6.2f Mbit/s", 100*frac, float64(p.got)/1e6, float64(p.size)/1e6, rate)
	}
	if !p.TTY {
		fmt.Fprintf(p.W, "%s %s, %.1f s\n", p.Label, figures, el)
		return
	}
	const width = 30
	bar := strings.Repeat("?", width)
	if frac >= 0 {
		n := int(frac * width)
		bar = strings.Repeat("=", n) + strings.Repeat(" ", width-n)
	}
	fmt.Fprintf(p.W, "\r%s [%s] %s ", p.Label, bar, figures)
}
