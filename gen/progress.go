package gen

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/subprov/subprov/config"
)

// progress reports how far gen is. On a terminal it redraws a one-line bar in place; anywhere
// else (a log file, a pipe, CI) it prints a plain line at every tenth of the work and at least
// every plainEvery, since a bar redrawn with carriage returns fills a log with one unreadable
// line of thousands of frames.
type progress struct {
	w        io.Writer
	terminal bool
	now      func() time.Time
	every    time.Duration // how often a plain line comes at least
	total    int64
	n        int64
	start    time.Time
	drawnAt  time.Time
	tenth    int64 // the last tenth of the work a plain line reported
}

const (
	barEvery   = 200 * time.Millisecond
	plainEvery = 5 * time.Second
	// tickCheck is how many ticks pass between looks at the clock: a tick is one subscriber.
	tickCheck = 4096
)

func newProgress(w io.Writer, total int) *progress {
	p := &progress{w: w, now: time.Now, every: plainEvery, total: int64(total)}
	if f, ok := w.(*os.File); ok {
		p.terminal = config.IsTerminal(f)
	}
	p.start = p.now()
	return p
}

func (p *progress) tick() {
	p.n++
	if p.n%tickCheck == 0 {
		p.report("", false)
	}
}

func (p *progress) set(n int64) { p.n = n; p.report("", false) }

// phase reports a step that follows the rows (indexes, analysis) at once.
func (p *progress) phase(what string) { p.report(what, true) }

func (p *progress) done() {
	if p.w == nil {
		return
	}
	p.report("done", true)
	if p.terminal {
		fmt.Fprintln(p.w)
	}
}

func (p *progress) report(note string, now bool) {
	if p.w == nil {
		return
	}
	t := p.now()
	if p.terminal {
		if now || t.Sub(p.drawnAt) > barEvery {
			p.drawnAt = t
			p.drawBar(t, note)
		}
		return
	}
	tenth := p.tenth
	if p.total > 0 {
		tenth = min(p.n, p.total) * 10 / p.total
	}
	if now || tenth > p.tenth || t.Sub(p.drawnAt) >= p.every {
		p.drawnAt, p.tenth = t, tenth
		p.printLine(t, note)
	}
}

func (p *progress) fraction() float64 {
	if p.total <= 0 {
		return 1
	}
	return min(float64(p.n)/float64(p.total), 1)
}

// drawBar redraws the terminal's line in place: done/total, rate and elapsed time.
func (p *progress) drawBar(t time.Time, note string) {
	const width = 30
	frac := p.fraction()
	filled := int(frac * width)
	el := t.Sub(p.start).Seconds()
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

// printLine writes one plain line: "gen: 42% (420000/1000000 subscribers, 12s elapsed, ~16s left)".
func (p *progress) printLine(t time.Time, note string) {
	elapsed := t.Sub(p.start)
	left := ""
	if p.n > 0 && p.n < p.total {
		left = fmt.Sprintf(", ~%s left", time.Duration(float64(elapsed)*float64(p.total-p.n)/float64(p.n)).Round(time.Second))
	}
	if note != "" {
		note = " · " + note
	}
	fmt.Fprintf(p.w, "gen: %.0f%% (%d/%d subscribers, %s elapsed%s)%s\n", 100*p.fraction(), p.n, p.total,
		elapsed.Round(time.Second), left, note)
}
