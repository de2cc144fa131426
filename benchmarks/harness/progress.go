package harness

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// Progress reports a long run's progress on a writer (stderr): a redrawn
// bar when it is a terminal, otherwise a plain line at most every few
// seconds, so that CI logs stay short. A nil *Progress reports nothing.
type Progress struct {
	mu       sync.Mutex
	w        io.Writer
	tty      bool
	total    int
	done     int
	start    time.Time
	last     time.Time
	lastLen  int
	interval time.Duration
}

// NewProgress reports to w out of total steps. tty selects the bar.
func NewProgress(w io.Writer, total int, tty bool) *Progress {
	now := time.Now()
	return &Progress{w: w, tty: tty, total: total, start: now, last: now, interval: 5 * time.Second}
}

// IsTerminal reports whether f is a character device (a terminal).
func IsTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Step marks one step done; what names it.
func (p *Progress) Step(what string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	now := time.Now()
	elapsed := now.Sub(p.start)
	eta := "?"
	if p.done > 0 && p.done <= p.total {
		rem := time.Duration(float64(elapsed) / float64(p.done) * float64(p.total-p.done))
		eta = rem.Round(time.Second).String()
	}
	if p.tty {
		const width = 30
		fill := width * p.done / max(p.total, 1)
		line := fmt.Sprintf("\r[%s%s] %d/%d eta %s  %s", strings.Repeat("=", fill), strings.Repeat(" ", width-fill),
			p.done, p.total, eta, what)
		pad := max(p.lastLen-len(line), 0)
		fmt.Fprint(p.w, line+strings.Repeat(" ", pad))
		p.lastLen = len(line)
		return
	}
	if now.Sub(p.last) >= p.interval || p.done == p.total {
		p.last = now
		fmt.Fprintf(p.w, "bench: %d/%d (%.0f%%) elapsed %s eta %s: %s\n", p.done, p.total,
			100*float64(p.done)/float64(max(p.total, 1)), elapsed.Round(time.Second), eta, what)
	}
}

// Done ends the report (a newline after the bar).
func (p *Progress) Done() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.lastLen > 0 {
		fmt.Fprintln(p.w)
	}
}
