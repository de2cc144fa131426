package batch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/wsched/wsched/internal/watchdog"
	"github.com/wsched/wsched/scheduler"
)

// TestMain fails the package's tests if a scheduler's workers outlive them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testRoot is a slice of GOROOT/src small enough for -race: go/... (about
// 220 files, 2.6 MB).
func testRoot(t testing.TB) string {
	root := filepath.Join(DefaultRoot(), "go")
	if _, err := os.Stat(root); err != nil {
		t.Skipf("no Go source tree: %v", err)
	}
	return root
}

func TestMatchesSequential(t *testing.T) {
	root := testRoot(t)
	want, err := Sequential(root)
	require.NoError(t, err)
	require.False(t, want.Totals.Files < 100 || len(want.Packages) < 10 || want.Totals.Decls() < 1000,
		"implausibly little found under %s: %+v, %d packages", root, want.Totals, len(want.Packages))
	cfgs := []scheduler.Config{
		{Workers: 1},
		{Workers: 2},
		{Workers: 3, Wake: scheduler.WakeAll, Steal: scheduler.StealOne},
		{Workers: 2, Wake: scheduler.WakeN, Steal: scheduler.StealHalf, StealLimit: 4, Local: scheduler.LocalFIFO},
	}
	if testing.Short() {
		// Each run parses the whole tree (about 0.1 s here): -short keeps
		// one worker with the default policies and the most unusual
		// configuration on several workers.
		cfgs = []scheduler.Config{cfgs[0], cfgs[len(cfgs)-1]}
	}
	for _, cfg := range cfgs {
		t.Run(fmt.Sprintf("wsched/workers=%d/wake=%v/steal=%v", cfg.Workers, cfg.Wake, cfg.Steal), func(t *testing.T) {
			j, err := NewJob(root, cfg)
			require.NoError(t, err)
			defer j.Close()
			for range 2 { // a Job runs again from scratch
				got := watchdog.Within(t, time.Minute, func() (Result, error) { return j.Run(context.Background()) })
				assert.Equal(t, want.Totals, got.Totals, "totals")
				assert.Equal(t, want.Packages, got.Packages, "packages differ from the sequential run")
				require.Len(t, got.Stages, len(Stages), "one figure per stage of %v", Stages)
				assert.Equal(t, uint64(got.Totals.Files)+1+uint64(got.Stages[0].Packets), got.Stats.Packets,
					"scheduler ran %d packets, want files (%d) + directories (%d) + 1",
					got.Stats.Packets, got.Totals.Files, got.Stages[0].Packets)
			}
		})
	}
}

func TestMissingRoot(t *testing.T) {
	root := filepath.Join(t.TempDir(), "missing")
	_, err := Sequential(root)
	assert.ErrorIs(t, err, os.ErrNotExist, "Sequential")
	_, err = Run(context.Background(), root, scheduler.Config{Workers: 2})
	assert.ErrorIs(t, err, os.ErrNotExist, "Run")
	var ce *scheduler.CycleError
	if assert.ErrorAs(t, err, &ce, "Run") {
		assert.Equal(t, "ListDir", ce.Packet, "the failing packet")
		assert.Equal(t, "List", ce.StageName)
	}
}

// writeTree writes files (path relative to root → contents) under root.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, src := range files {
		p := filepath.Join(root, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
	}
}

// TestSyntaxErrorsCounted checks that a file go/parser rejects is counted,
// not fatal, and that testdata directories are skipped.
func TestSyntaxErrorsCounted(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"a/a.go":             "package a\nimport \"fmt\"\nfunc F() {}\ntype T int\nfunc (T) M() {}\nvar x, y = 1, 2\nconst c = 3\nvar _ = fmt.Sprint\n",
		"a/a_test.go":        "package a_test\nfunc G() {}\n",
		"a/bad.go":           "package a\nfunc {\n",
		"a/testdata/skip.go": "package skip\nfunc H() {}\n",
		"_skip/x.go":         "package x\n",
	})
	want := []Package{
		{Dir: "a", Name: "a", Counts: Counts{Files: 1, Funcs: 1, Methods: 1, Types: 1, Vars: 3, Consts: 1, Imports: 1}},
		{Dir: "a", Name: "a_test", Counts: Counts{Files: 1, Funcs: 1}},
	}
	for name, run := range map[string]func() (Result, error){
		"sequential": func() (Result, error) { return Sequential(root) },
		"wsched":     func() (Result, error) { return Run(context.Background(), root, scheduler.Config{Workers: 2}) },
	} {
		r := watchdog.Within(t, time.Minute, run)
		assert.Equal(t, want, r.Packages, name)
		assert.Equal(t, 3, r.Totals.Files, "%s: files", name)
		assert.Equal(t, 1, r.Totals.ParseErrors, "%s: files with syntax errors", name)
	}
}

// TestTallyZero checks that the zero Tally is ready to use, as the
// baselines built on Walk and ParseFile outside this package use it.
func TestTallyZero(t *testing.T) {
	var tl Tally
	ps, tot := tl.Packages()
	assert.Empty(t, ps)
	assert.Equal(t, Totals{}, tot)
	root := t.TempDir()
	writeTree(t, root, map[string]string{"p/p.go": "package p\nfunc F() {}\n"})
	require.NoError(t, Walk(root, func(path string) error {
		f, err := ParseFile(root, path)
		if err == nil {
			tl.Add(f)
		}
		return err
	}))
	ps, tot = tl.Packages()
	assert.Equal(t, []Package{{Dir: "p", Name: "p", Counts: Counts{Files: 1, Funcs: 1}}}, ps)
	assert.Equal(t, 1, tot.Files)
}
