package gen

import (
	"bytes"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakeProgress is a progress on a buffer whose clock moves only when the test says.
func fakeProgress(terminal bool, total int64) (*progress, *bytes.Buffer, *time.Time) {
	var buf bytes.Buffer
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	p := &progress{w: &buf, terminal: terminal, now: func() time.Time { return now }, every: plainEvery, total: total, start: now}
	return p, &buf, &now
}

var plainLine = regexp.MustCompile(`^gen: (\d+)% \((\d+)/(\d+) subscribers, (\S+) elapsed(, ~\S+ left)?\)( · [a-z ]+)?$`)

// TestProgressOffTerminal: on a log or a pipe, gen prints plain lines (no carriage return, no
// terminal escape) at every tenth of the work and at least every 5 seconds, then the phases.
func TestProgressOffTerminal(t *testing.T) {
	t.Parallel()
	const total = 100 * tickCheck
	tests := []struct {
		name    string
		perTick time.Duration // the clock's advance per subscriber
		// at least one line per tenth; and no two lines further apart than maxGap
		minLines int
		maxGap   time.Duration
	}{
		{"fast: a line per tenth", time.Microsecond, 10, 0},
		{"slow: a line every 5 s in between", time.Millisecond, 40, plainEvery + tickCheck*time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, buf, now := fakeProgress(false, total)
			for range total {
				*now = now.Add(tt.perTick)
				p.tick()
			}
			p.phase("building indexes")
			p.done()
			out := buf.String()
			if strings.ContainsAny(out, "\r\x1b") {
				t.Fatalf("output has a carriage return or an escape:\n%q", out)
			}
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if len(lines) < tt.minLines+2 {
				t.Errorf("%d lines, want at least %d:\n%s", len(lines), tt.minLines+2, out)
			}
			tenths := map[int]bool{}
			var last time.Duration
			for i, l := range lines {
				m := plainLine.FindStringSubmatch(l)
				if m == nil {
					t.Fatalf("line %d %q is not a plain progress line", i, l)
				}
				pct, _ := strconv.Atoi(m[1])
				tenths[pct/10] = true
				el, err := time.ParseDuration(m[4])
				if err != nil {
					t.Fatalf("line %q: elapsed %v", l, err)
				}
				if tt.maxGap > 0 && el-last > tt.maxGap {
					t.Errorf("line %q comes %s after the previous one, want at most %s", l, el-last, tt.maxGap)
				}
				last = el
			}
			for d := 1; d <= 10; d++ {
				if !tenths[d] {
					t.Errorf("no line at %d%%:\n%s", d*10, out)
				}
			}
			if !strings.HasSuffix(lines[len(lines)-2], " · building indexes") || !strings.HasSuffix(lines[len(lines)-1], " · done") {
				t.Errorf("the phases are not the last lines:\n%s", out)
			}
			if mid := lines[len(lines)/2]; !strings.Contains(mid, " left)") {
				t.Errorf("a line in the middle has no estimate of the time left: %q", mid)
			}
		})
	}
}

// TestProgressOnTerminal: on a terminal the bar is redrawn in place, at most every 200 ms.
func TestProgressOnTerminal(t *testing.T) {
	t.Parallel()
	p, buf, now := fakeProgress(true, 10*tickCheck)
	for range 10 * tickCheck {
		*now = now.Add(10 * time.Microsecond)
		p.tick()
	}
	p.done()
	out := buf.String()
	frames := strings.Count(out, "\r")
	if frames < 2 || strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "done\x1b[K\n") {
		t.Errorf("bar output %q: want frames redrawn in place and one final newline", out)
	}
	if frames > 4 { // 0.4 s of work: the first frame, one at 200 ms, one at 400 ms and done
		t.Errorf("%d frames in 0.4 s, want a frame at most every 200 ms", frames)
	}
}

// TestProgressDetectsTerminal: the bar is drawn on a character device only; a pipe or a buffer
// gets plain lines.
func TestProgressDetectsTerminal(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	for _, tt := range []struct {
		name string
		p    *progress
		want bool
	}{
		{"buffer", newProgress(&bytes.Buffer{}, 1), false},
		{"pipe", newProgress(w, 1), false},
		{"character device", newProgress(devNull, 1), true},
	} {
		if tt.p.terminal != tt.want {
			t.Errorf("%s: terminal = %v, want %v", tt.name, tt.p.terminal, tt.want)
		}
	}
}
