package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Where an orders phase's CPU went, from Linux's /proc: how busy the machine's CPUs were, and
// how much CPU an order cost in serve, in the PostgreSQL backends serving the run's database,
// in the harness itself (its order client and webhook receiver) and in the rest of the
// machine. When every stage queues at once, these say whether the machine was out of CPU and
// which process spent it; unlike latency they hardly vary from run to run.

// clockTick is the unit of /proc's CPU times: USER_HZ, 100 on every Linux this runs on.
const clockTick = 10 * time.Millisecond

// cpuSnapshot is the CPU time used so far: by the whole machine and by each process of note.
type cpuSnapshot struct {
	busy, total    time.Duration         // every CPU's busy and total time since boot
	serve, harness time.Duration         // the serve process, this process
	backends       map[int]time.Duration // PostgreSQL backend pid → its CPU; nil when not known
}

// cpuUse is what a phase used, between two snapshots.
type cpuUse struct {
	busy                            float64 // share of all the machine's CPU time, 0 to 1
	serve, backends, harness, other time.Duration
	backendsKnown                   bool
}

// cpuMeter takes snapshots for one run: the serve process by pid and, on PostgreSQL, the
// backends of the run's database, listed through db (nil on SQLite).
type cpuMeter struct {
	servePID int
	db       *sql.DB
}

// newCPUMeter is a meter of the serve process servePID on the database at dbURL: on
// PostgreSQL with a connection of its own, through which it lists the backends. Close it.
func newCPUMeter(servePID int, dbURL string) (cpuMeter, error) {
	m := cpuMeter{servePID: servePID}
	if strings.HasPrefix(dbURL, "postgres") {
		var err error
		if m.db, err = openPostgres(dbURL); err != nil {
			return m, fmt.Errorf("the CPU meter's connection: %w", err)
		}
	}
	return m, nil
}

// close releases the meter's connection.
func (m cpuMeter) close() {
	if m.db != nil {
		m.db.Close()
	}
}

// around is what the machine's CPU did while fn ran; nil where /proc cannot be read.
func (m cpuMeter) around(ctx context.Context, fn func()) *cpuUse {
	before, known := m.take(ctx)
	fn()
	after, ok := m.take(ctx)
	if !ok || !known {
		return nil
	}
	use := after.since(before)
	return &use
}

// take reads a snapshot; ok is false where /proc cannot be read (not Linux), and the phase
// then reports no CPU figures.
func (m cpuMeter) take(ctx context.Context) (s cpuSnapshot, ok bool) {
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		return s, false
	}
	if s.busy, s.total, err = machineCPU(string(stat)); err != nil {
		return s, false
	}
	if s.serve, _, err = processCPU(m.servePID); err != nil {
		return s, false
	}
	if s.harness, _, err = processCPU(os.Getpid()); err != nil {
		return s, false
	}
	if m.db != nil {
		s.backends = m.backendCPU(ctx)
	}
	return s, true
}

// backendCPU reads the CPU of the client sessions on the run's database but the harness's
// own; nil when the server is not on this machine (none of their pids is a PostgreSQL process
// here, as when it runs on another host or in a container of its own).
func (m cpuMeter) backendCPU(ctx context.Context) map[int]time.Duration {
	rows, err := m.db.QueryContext(ctx, `SELECT pid FROM pg_stat_activity
		WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()`)
	if err != nil {
		return nil
	}
	defer rows.Close()
	out := map[int]time.Duration{}
	for rows.Next() {
		var pid int
		if rows.Scan(&pid) != nil {
			return nil
		}
		used, comm, err := processCPU(pid)
		if err != nil || comm != "postgres" {
			continue // ended meanwhile, or not a process of this machine
		}
		out[pid] = used
	}
	if rows.Err() != nil || len(out) == 0 {
		return nil
	}
	return out
}

// since is the use from the earlier snapshot a to s. A backend that started during the phase
// counts in full, as does one whose pid was reused; one that ended during it is missed (the
// service's pool keeps its sessions).
func (s cpuSnapshot) since(a cpuSnapshot) cpuUse {
	u := cpuUse{serve: s.serve - a.serve, harness: s.harness - a.harness}
	busy, total := s.busy-a.busy, s.total-a.total
	if total > 0 {
		u.busy = float64(busy) / float64(total)
	}
	if s.backends != nil && a.backends != nil {
		u.backendsKnown = true
		for pid, used := range s.backends {
			if before := a.backends[pid]; before <= used {
				used -= before
			}
			u.backends += used
		}
	}
	u.other = max(busy-u.serve-u.harness-u.backends, 0)
	return u
}

// machineCPU parses /proc/stat's first line: the busy time (user, nice, system, irq, softirq,
// steal) and the total (busy, idle and iowait) of all CPUs.
func machineCPU(stat string) (busy, total time.Duration, err error) {
	line, _, _ := strings.Cut(stat, "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, 0, fmt.Errorf("/proc/stat: unexpected first line %q", line)
	}
	ticks := make([]int64, 8) // user nice system idle iowait irq softirq steal
	for i := range ticks {
		if ticks[i], err = strconv.ParseInt(f[i+1], 10, 64); err != nil {
			return 0, 0, fmt.Errorf("/proc/stat: %w", err)
		}
	}
	b := ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6] + ticks[7]
	return time.Duration(b) * clockTick, time.Duration(b+ticks[3]+ticks[4]) * clockTick, nil
}

// processCPU reads a process's CPU time (user and system) and its command name.
func processCPU(pid int) (used time.Duration, comm string, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, "", err
	}
	return parseProcessStat(string(b))
}

// parseProcessStat parses /proc/PID/stat: "pid (comm) state ..." where comm may hold spaces and
// parentheses, utime and stime being the 14th and 15th fields.
func parseProcessStat(stat string) (used time.Duration, comm string, err error) {
	open, end := strings.IndexByte(stat, '('), strings.LastIndexByte(stat, ')')
	if open < 0 || end < open {
		return 0, "", fmt.Errorf("process stat %q: no command name", stat)
	}
	f := strings.Fields(stat[end+1:]) // from the state, the 3rd field
	if len(f) < 13 {
		return 0, "", fmt.Errorf("process stat %q: too few fields", stat)
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, "", fmt.Errorf("process stat: %w", err)
		}
		ticks += n
	}
	return time.Duration(ticks) * clockTick, stat[open+1 : end], nil
}
