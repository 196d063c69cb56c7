package main

import (
	"context"
	"database/sql"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov/internal/testdb"
)

func TestParseProcFiles(t *testing.T) {
	machine := []struct {
		name        string
		stat        string
		busy, total time.Duration
		wantErr     bool
	}{
		{"every column", "cpu  100 20 30 1000 50 4 6 2 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n", 1620 * time.Millisecond, 12120 * time.Millisecond, false},
		{"no steal column", "cpu  1 2 3 4 5 6 7\n", 0, 0, true},
		{"not the cpu line", "intr 1 2 3 4 5 6 7 8 9\n", 0, 0, true},
		{"not a number", "cpu  1 2 x 4 5 6 7 8 0 0\n", 0, 0, true},
	}
	for _, tc := range machine {
		t.Run("machine "+tc.name, func(t *testing.T) {
			busy, total, err := machineCPU(tc.stat)
			if (err != nil) != tc.wantErr || busy != tc.busy || total != tc.total {
				t.Errorf("machineCPU = %v, %v, %v; want %v, %v, error %v", busy, total, err, tc.busy, tc.total, tc.wantErr)
			}
		})
	}
	process := []struct {
		name, stat, comm string
		used             time.Duration
		wantErr          bool
	}{
		{"plain", "4242 (postgres) S 1 4242 4242 0 -1 4194304 500 0 0 0 120 30 0 0 20 0 1 0 100 0 0", "postgres", 1500 * time.Millisecond, false},
		{"name with spaces and parentheses", "7 (a (b) c) R 1 7 7 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0 100 0 0", "a (b) c", 70 * time.Millisecond, false},
		{"cut short", "7 (x) R 1 7 7 0", "", 0, true},
		{"no name", "7 x R 1 7 7 0 -1 0 0 0 0 0 3 4 0 0", "", 0, true},
	}
	for _, tc := range process {
		t.Run("process "+tc.name, func(t *testing.T) {
			used, comm, err := parseProcessStat(tc.stat)
			if (err != nil) != tc.wantErr || used != tc.used || comm != tc.comm {
				t.Errorf("parseProcessStat = %v, %q, %v; want %v, %q, error %v", used, comm, err, tc.used, tc.comm, tc.wantErr)
			}
		})
	}
}

// since counts what each process used between two snapshots: a backend that started in
// between in full, one whose pid was reused in full, one that ended not at all; backends
// unknown on either side stay unknown; the rest of the machine is what the three did not use,
// never below zero.
func TestCPUUseSince(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	tests := []struct {
		name          string
		a, s          cpuSnapshot
		want          cpuUse
		wantBusyShare float64
	}{
		{"backends old, new, reused and ended",
			cpuSnapshot{busy: ms(1000), total: ms(4000), serve: ms(100), harness: ms(10), backends: map[int]time.Duration{1: ms(50), 2: ms(500), 3: ms(70)}},
			cpuSnapshot{busy: ms(2000), total: ms(6000), serve: ms(400), harness: ms(60), backends: map[int]time.Duration{1: ms(250), 2: ms(30), 4: ms(40)}},
			cpuUse{serve: ms(300), harness: ms(50), backends: ms(200 + 30 + 40), other: ms(1000 - 300 - 50 - 270), backendsKnown: true}, 0.5},
		{"backends unknown after",
			cpuSnapshot{busy: ms(10), total: ms(20), backends: map[int]time.Duration{1: ms(5)}},
			cpuSnapshot{busy: ms(20), total: ms(40), serve: ms(4)},
			cpuUse{serve: ms(4), other: ms(6)}, 0.5},
		{"processes above the machine's count (ticks): rest clamped",
			cpuSnapshot{},
			cpuSnapshot{busy: ms(100), total: ms(100), serve: ms(80), harness: ms(30)},
			cpuUse{serve: ms(80), harness: ms(30)}, 1},
		{"no time passed", cpuSnapshot{busy: ms(5), total: ms(9)}, cpuSnapshot{busy: ms(5), total: ms(9)}, cpuUse{}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.s.since(tc.a)
			want := tc.want
			want.busy = tc.wantBusyShare
			if got != want {
				t.Errorf("since = %+v, want %+v", got, want)
			}
		})
	}
}

// The meter reads this machine: work done by the harness between two snapshots shows as the
// harness's and the machine's busy time, and on PostgreSQL a session open on the run's
// database is one of the backends it follows.
func TestCPUMeterSeesTheWorkBetweenSnapshots(t *testing.T) {
	if _, err := os.Stat("/proc/stat"); err != nil {
		t.Skip("no /proc here")
	}
	ctx := context.Background()
	testdb.Each(t, func(t *testing.T, u string) {
		m := cpuMeter{servePID: os.Getpid()}
		var held *sql.Conn
		if strings.HasPrefix(u, "postgres") {
			db, err := openPostgres(u)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			m.db = db
			// A session of the same pool held open: the meter lists it, not its own.
			if held, err = db.Conn(ctx); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { held.Close() })
		}
		before, ok := m.take(ctx)
		if !ok {
			t.Fatal("no snapshot on Linux")
		}
		spin(200 * time.Millisecond)
		after, ok := m.take(ctx)
		if !ok {
			t.Fatal("no snapshot on Linux")
		}
		use := after.since(before)
		// serve is this process too, read a moment apart: a tick or two may differ.
		if diff := use.serve - use.harness; use.harness < 50*time.Millisecond || diff < -20*time.Millisecond || diff > 20*time.Millisecond {
			t.Errorf("harness %v, serve %v: want the 200 ms spun, counted for each role", use.harness, use.serve)
		}
		if use.busy <= 0 || use.busy > 1 {
			t.Errorf("machine busy %v, want a share in (0, 1]", use.busy)
		}
		if held == nil {
			if use.backendsKnown {
				t.Error("backends known without a PostgreSQL database")
			}
			return
		}
		var pid int
		if err := held.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
			t.Fatal(err)
		}
		if _, _, err := processCPU(pid); err != nil {
			t.Skipf("the test's PostgreSQL server is not on this machine (backend %d: %v)", pid, err)
		}
		if _, ok := after.backends[pid]; !ok || !use.backendsKnown {
			t.Errorf("backend %d of the held session not followed (known %v): %v", pid, use.backendsKnown, after.backends)
		}
	})
}

// spin keeps this goroutine's CPU busy for d.
func spin(d time.Duration) {
	// Burn d of this process's CPU time, not of wall time: on a machine busy with other work a
	// wall-clock spin gets only a share of a core. Bounded, should the reading ever stand still.
	used := func() time.Duration { t, _, _ := processCPU(os.Getpid()); return t }
	start, deadline := used(), time.Now().Add(10*time.Second)
	x := 0
	for used()-start < d && time.Now().Before(deadline) {
		for i := 0; i < 1000; i++ {
			x += i
		}
	}
	_ = x
}
