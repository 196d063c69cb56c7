package engine

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"
)

// fakeLog is a change log in memory: entries are appended with append, a mark is the number
// of entries read.
type fakeLog struct {
	mu      sync.Mutex
	entries []Subject
	pruned  int           // entries before this one were pruned
	delay   time.Duration // each read takes this long
	fail    bool
}

func (l *fakeLog) append(s ...Subject) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = append(l.entries, s...)
}

func (l *fakeLog) changeLog() ChangeLog {
	read := func(ctx context.Context) (int, error) {
		l.mu.Lock()
		delay, fail := l.delay, l.fail
		l.mu.Unlock()
		if err := ctx.Err(); err != nil { // as a database driver does
			return 0, err
		}
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		if fail {
			return 0, errors.New("the log cannot be read")
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		return len(l.entries), nil
	}
	return ChangeLog{
		End: func(ctx context.Context) (string, error) {
			n, err := read(ctx)
			return strconv.Itoa(n), err
		},
		Since: func(ctx context.Context, mark string) (string, []Subject, error) {
			n, err := read(ctx)
			if err != nil {
				return "", nil, err
			}
			from, _ := strconv.Atoi(mark)
			l.mu.Lock()
			defer l.mu.Unlock()
			from = max(from, l.pruned) // entries pruned are gone
			return strconv.Itoa(n), append([]Subject(nil), l.entries[from:n]...), nil
		},
		Prune: func(ctx context.Context, mark string) error {
			n, _ := strconv.Atoi(mark)
			l.mu.Lock()
			defer l.mu.Unlock()
			l.pruned = max(l.pruned, n)
			return nil
		},
	}
}

func (l *fakeLog) set(f func(l *fakeLog)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f(l)
}

// remember is a Memo of strings whose value is the key's subjects' ids, read through a counter.
type remember struct {
	f     *ChangeFeed
	c     Memo[string]
	reads map[string]int
	mu    sync.Mutex
}

func (r *remember) get(t *testing.T, key string, subjects ...Subject) string {
	t.Helper()
	v, err := Remembered(r.f, &r.c, key, func() (string, error) {
		r.mu.Lock()
		r.reads[key]++
		n := r.reads[key]
		r.mu.Unlock()
		return key + "#" + strconv.Itoa(n), nil
	}, func(string) []Subject { return subjects })
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// expect reads key and checks the value: "key#n" is the n-th read from the database.
func (r *remember) expect(t *testing.T, why, key, want string, subjects ...Subject) {
	t.Helper()
	if got := r.get(t, key, subjects...); got != want {
		t.Errorf("%s: %s is %q, want %q", why, key, got, want)
	}
}

func waitLive(t *testing.T, f *ChangeFeed) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); !f.live(); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the change feed never read the log")
		}
	}
}

func newRemember(t *testing.T, log *fakeLog) *remember {
	f := NewChangeFeed(log.changeLog())
	t.Cleanup(func() { f.Close() })
	r := &remember{f: f, reads: map[string]int{}}
	r.get(t, "start") // starts the feed
	waitLive(t, f)
	return r
}

var (
	alice = Subject{"account", "alice"}
	bob   = Subject{"account", "bob"}
	shop  = Subject{"provider", "shop"}
)

// TestChangeFeedForgetsWhatChanged: a value is served from memory until a change to one of its
// subjects is read, and only then; its own process's commit is read before Committed returns.
func TestChangeFeedForgetsWhatChanged(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		changed []Subject
		want    map[string]string // key → value after the change
	}{
		{"nothing changed", nil, map[string]string{"a": "a#1", "b": "b#1"}},
		{"a change to another subject", []Subject{{"account", "carol"}}, map[string]string{"a": "a#1", "b": "b#1"}},
		{"a change to one login", []Subject{alice}, map[string]string{"a": "a#2", "b": "b#1"}},
		{"a change to a subject of both", []Subject{shop}, map[string]string{"a": "a#2", "b": "b#2"}},
		{"the same kind, another id", []Subject{{"provider", "alice"}}, map[string]string{"a": "a#1", "b": "b#1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			log := &fakeLog{}
			r := newRemember(t, log)
			r.get(t, "a", alice, shop)
			r.get(t, "b", bob, shop)
			if got := r.get(t, "a", alice, shop); got != "a#1" {
				t.Fatalf("second read of a: %q, want it from memory", got)
			}
			log.append(tt.changed...)
			r.f.Committed(context.Background())
			for key, want := range tt.want {
				subjects := []Subject{alice, shop}
				if key == "b" {
					subjects = []Subject{bob, shop}
				}
				if got := r.get(t, key, subjects...); got != want {
					t.Errorf("%s after the commit: %q, want %q", key, got, want)
				}
			}
		})
	}
}

// TestChangeFeedSeesOtherProcessesWithinTheBound: a change committed elsewhere (appended to the
// log without Committed) is read by the poller within staleAfter.
func TestChangeFeedSeesOtherProcessesWithinTheBound(t *testing.T) {
	t.Parallel()
	log := &fakeLog{}
	r := newRemember(t, log)
	r.get(t, "a", alice)
	log.append(alice)
	start := time.Now()
	for r.get(t, "a", alice) == "a#1" {
		if time.Since(start) > 2*time.Second {
			t.Fatal("another process's change never read")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestChangeFeedKeepsOutAReadOverlappingAForget: a value read while the feed forgets something
// is not remembered, since it may predate the change forgotten.
func TestChangeFeedKeepsOutAReadOverlappingAForget(t *testing.T) {
	t.Parallel()
	log := &fakeLog{}
	r := newRemember(t, log)
	v, err := Remembered(r.f, &r.c, "a", func() (string, error) {
		log.append(alice) // committed while this read runs, after it read the row
		r.f.Committed(context.Background())
		return "before the change", nil
	}, func(string) []Subject { return []Subject{alice} })
	if err != nil || v != "before the change" {
		t.Fatalf("read: %q, %v", v, err)
	}
	r.expect(t, "next read", "a", "a#1", alice)
}

// TestChangeFeedCountsFromThePollsStart: a value is served from memory only within staleAfter
// of the start of the last successful read of the log, so a database that answers slowly
// (slower than staleAfter) never has its changes missed for longer than staleAfter: with such
// a read nothing is served from memory at all, and with a quick one it is.
func TestChangeFeedCountsFromThePollsStart(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		pollTime time.Duration
		live     bool
	}{
		{"a quick read", 0, true},
		{"a read slower than the staleness bound", staleAfter + 50*time.Millisecond, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			log := &fakeLog{delay: tt.pollTime}
			f := NewChangeFeed(log.changeLog())
			defer f.Close()
			f.live()
			sawLive := false
			for end := time.Now().Add(3*staleAfter + 2*tt.pollTime); time.Now().Before(end); time.Sleep(time.Millisecond) {
				if f.live() {
					sawLive = true
				}
			}
			if sawLive != tt.live {
				t.Fatalf("served from memory: %v, want %v", sawLive, tt.live)
			}
		})
	}
}

// TestChangeFeedForgetsEverythingAfterAFailedRead: while the log cannot be read nothing is
// served from memory, and once it can, everything remembered before is read again (entries
// may have been pruned meanwhile).
func TestChangeFeedForgetsEverythingAfterAFailedRead(t *testing.T) {
	t.Parallel()
	log := &fakeLog{}
	r := newRemember(t, log)
	r.get(t, "a", alice)
	log.set(func(l *fakeLog) { l.fail = true })
	for end := time.Now().Add(5 * time.Second); r.f.live(); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("still served from memory with the log failing")
		}
	}
	r.expect(t, "read while the log fails", "a", "a#2", alice)
	log.set(func(l *fakeLog) { l.fail = false })
	waitLive(t, r.f)
	r.expect(t, "first read once the log is read again", "a", "a#3", alice)
	r.expect(t, "second read", "a", "a#3", alice)
}

// TestChangeFeedPrunesWhatWasReadLongAgo: the log is pruned up to a mark read at least
// pruneAfter before, never up to a recent one.
func TestChangeFeedPrunesWhatWasReadLongAgo(t *testing.T) {
	t.Parallel()
	log := &fakeLog{}
	f := NewChangeFeed(log.changeLog())
	f.pruneEvery, f.pruneAfter = 20*time.Millisecond, 200*time.Millisecond
	defer f.Close()
	f.live()
	log.append(alice, bob)
	start := time.Now()
	for {
		log.mu.Lock()
		pruned := log.pruned
		log.mu.Unlock()
		if pruned == 2 {
			break
		}
		if pruned > 0 && time.Since(start) < f.pruneAfter {
			t.Fatalf("pruned up to %d after %s, before pruneAfter", pruned, time.Since(start))
		}
		if time.Since(start) > 5*time.Second {
			t.Fatal("the log was never pruned")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if time.Since(start) < f.pruneAfter {
		t.Fatalf("pruned after %s, before pruneAfter (%s)", time.Since(start), f.pruneAfter)
	}
}

// TestChangeFeedReadsAfterTheCallerLeft: a commit whose caller's context has ended (a request
// answered or cancelled) still has the log read for it, so only what it changed is forgotten.
func TestChangeFeedReadsAfterTheCallerLeft(t *testing.T) {
	t.Parallel()
	log := &fakeLog{}
	r := newRemember(t, log)
	r.get(t, "a", alice)
	r.get(t, "b", bob)
	log.append(alice)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r.f.Committed(ctx)
	r.expect(t, "a after its change", "a", "a#2", alice)
	r.expect(t, "b, unchanged", "b", "b#1", bob)
}

// TestChangeFeedForgetsEverythingAfterAStall: a process that read nothing for a while (paused)
// may have missed entries another process pruned meanwhile, so the first read after it, a
// commit's or the poller's, forgets everything.
func TestChangeFeedForgetsEverythingAfterAStall(t *testing.T) {
	t.Parallel()
	log := &fakeLog{}
	r := newRemember(t, log)
	r.get(t, "a", alice)
	r.f.poller.close() // the process stalls: its poller reads nothing
	r.f.mu.Lock()
	r.f.forgetAfter = 2 * staleAfter // as if pruneAfter were 4 × staleAfter
	r.f.mu.Unlock()
	time.Sleep(3 * staleAfter)
	log.append(alice)
	log.set(func(l *fakeLog) { l.pruned = len(l.entries) }) // and another process pruned the change
	r.f.Committed(context.Background())
	r.expect(t, "a after the stall", "a", "a#2", alice)
}
