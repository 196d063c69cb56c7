// Package upgradetest checks the upgrade rule against a real previous release: the subprov of
// the commit before the newest migration, built from the repository's history, serves a
// database the current code migrated.
package upgradetest

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/internal/proctest"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
)

// TestPreviousReleaseOnMigratedSchema: the binary built from the commit before the newest
// migration was added starts on a database the current code migrated (and loaded the demo
// fixture into), becomes ready, lets the demo operator log in and read the overview, and stops
// on SIGTERM. It is what rolling back a release, or an old process still serving during a
// rollout, relies on.
func TestPreviousReleaseOnMigratedSchema(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the previous release from git history: skipped with -short")
	}
	bin, commit, known := buildPrevious(t)
	current, err := store.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	var lacks []string
	for _, m := range current {
		if !known[m.Name] {
			lacks = append(lacks, fmt.Sprintf("%s (compatible with %d)", m.Name, m.CompatibleWith))
		}
	}
	t.Logf("previous release: commit %s, %d migrations, lacking %v; current code: latest migration %d", commit, len(known), lacks, store.LatestVersion())
	testdb.EachMigrated(t, testdb.StoreSchema, func(t *testing.T, u string) {
		ctx := context.Background()
		s := testdb.Open(t, u) // migrated with the current code
		f, err := fixture.Parse(fixture.DemoJSON)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fixture.LoadAtCost(ctx, s, f, time.Now().UTC(), identity.TestPasswordCost); err != nil {
			t.Fatalf("load the demo fixture: %v", err)
		}
		st, err := s.SchemaState(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("database schema version %d, compatible with %d", st.Version, st.CompatibleWith)

		p := proctest.NewProcess(t, bin, testdb.WithoutTestPools(t, u), "")
		p.Start()
		c := &proctest.Client{}
		for _, route := range []string{"/healthz", "/readyz"} {
			res, err := c.Do(ctx, "GET", p.URL+route, nil, nil)
			if err != nil || res.Status != http.StatusOK {
				t.Fatalf("GET %s: %v %v", route, res, err)
			}
		}
		op, err := c.Login(ctx, p.URL, "/api/v1/auth/login", "ops@subprov.test", "demo-operator-pass")
		if err != nil {
			t.Fatal(err)
		}
		if res, err := c.Do(ctx, "GET", p.URL+"/api/v1/overview", op, nil); err != nil || res.Status != http.StatusOK {
			t.Fatalf("GET /api/v1/overview: %v %v", res, err)
		}
		p.Stop()
	})
}

// buildPrevious checks out the commit before the one that added the newest migration file in a
// temporary worktree and builds its cmd/subprov without downloading anything. It returns the
// binary, the commit and that commit's migration files by name; it skips t when git, the history or a
// module the build needs is not available.
func buildPrevious(t *testing.T) (bin, commit string, known map[string]bool) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: the previous release cannot be built")
	}
	top, err := git(t, "", "rev-parse", "--show-toplevel")
	if err != nil {
		t.Skipf("not in a git repository: %v", err)
	}
	if shallow, _ := git(t, top, "rev-parse", "--is-shallow-repository"); shallow == "true" {
		t.Skip("the repository is a shallow clone: the previous release's commit may be missing (git fetch --unshallow)")
	}
	added, err := git(t, top, "log", "-1", "--diff-filter=A", "--format=%H", "--", "store/migrations/")
	if err != nil || added == "" {
		t.Skipf("no commit adding a migration in the history: %v", err)
	}
	commit, err = git(t, top, "rev-parse", "--verify", added+"^{commit}^")
	if err != nil {
		t.Skipf("the parent of %s is not in the history: %v", added, err)
	}
	files, err := git(t, top, "ls-tree", "--name-only", commit, "store/migrations/")
	if err != nil {
		t.Fatal(err)
	}
	known = map[string]bool{}
	for _, f := range strings.Fields(files) {
		known[path.Base(f)] = true
	}

	dir := filepath.Join(t.TempDir(), "previous")
	if _, err := git(t, top, "worktree", "add", "--detach", dir, commit); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := git(t, top, "worktree", "remove", "--force", dir); err != nil {
			t.Logf("remove the previous release's worktree: %v", err)
		}
	})
	bin = filepath.Join(t.TempDir(), "subprov-previous")
	// -trimpath keeps the worktree's temporary path out of the build cache's keys, so that
	// the next run finds the previous release's packages compiled and only links them.
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "./cmd/subprov")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		if bytes.Contains(out, []byte("GOPROXY=off")) || bytes.Contains(out, []byte("module lookup disabled")) {
			t.Skipf("building %s needs a module that is not in the module cache:\n%s", commit, out)
		}
		t.Fatalf("build %s: %v\n%s", commit, err, out)
	}
	return bin, commit, known
}

// git runs git in dir and returns its trimmed output.
func git(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	out, err := cmd.Output()
	if err != nil {
		return "", &gitError{args: args, err: err, stderr: strings.TrimSpace(errOut.String())}
	}
	return strings.TrimSpace(string(out)), nil
}

type gitError struct {
	args   []string
	err    error
	stderr string
}

func (e *gitError) Error() string {
	return "git " + strings.Join(e.args, " ") + ": " + e.err.Error() + ": " + e.stderr
}
