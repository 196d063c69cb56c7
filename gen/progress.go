package gen

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// progress draws a one-line bar on a terminal stream: done/total, rate and elapsed time.
type progress struct {
	w       io.Writer
	total   int64
	n       int64
	start   time.Time
	drawnAt time.Time
}

func newProgress(w io.Writer, total int) *progress {
	return &progress{w: w, total: int64(total), start: time.Now()}
}

func (p *progress) tick() {
	p.n++
	if p.n%4096 == 0 && time.Since(p.drawnAt) > 200*time.Millisecond {
		p.draw("")
	}
}

func (p *progress) set(n int64) { p.n = n; p.draw("") }

func (p *progress) phase(what string) { p.draw(what) }

func (p *progress) draw(note string) {
	if p.w == nil {
		return
	}
	p.drawnAt = time.Now()
	const width = 30
	frac := 1.0
	if p.total > 0 {
		frac = float64(p.n) / float64(p.total)
	}
	filled := int(frac * width)
	el := time.Since(p.start).Seconds()
	rate := 0.0
	if el > 0 {
		rate = float64(p.n) / el
	}
	if note != "" {
		note = " · " + note
	}
	fmt.Fprintf(p.w, "\rgen [%s%s] %3.0f%% %d/%d subscribers %.0f/s %5.1fs%s\x1b[K", strings.Repeat("#", filled),
		strings.Repeat(".", width-filled), 100*frac, p.n, p.total, rate, el, note)
}

func (p *progress) done() {
	if p.w == nil {
		return
	}
	p.draw("done")
	fmt.Fprintln(p.w)
}
