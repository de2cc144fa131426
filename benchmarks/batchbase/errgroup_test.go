package batchbase

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/wsched/wsched/examples/batch"
	"github.com/wsched/wsched/internal/watchdog"
)

// Every scheduler, pool and watchdog a test starts is stopped before it
// returns.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testRoot is a slice of GOROOT/src small enough for -race: go/... (about
// 220 files, 2.6 MB).
func testRoot(t testing.TB) string {
	root := filepath.Join(batch.DefaultRoot(), "go")
	if _, err := os.Stat(root); err != nil {
		t.Skipf("no Go source tree: %v", err)
	}
	return root
}

func TestMatchesSequential(t *testing.T) {
	root := testRoot(t)
	want, err := batch.Sequential(root)
	require.NoError(t, err)
	require.False(t, want.Totals.Files < 100 || len(want.Packages) < 10 || want.Totals.Decls() < 1000,
		"implausibly little found under %s: %+v, %d packages", root, want.Totals, len(want.Packages))

	got := watchdog.Within(t, time.Minute, func() (batch.Result, error) { return Errgroup(context.Background(), root, 2) })
	assert.Equal(t, want.Totals, got.Totals, "totals")
	assert.Equal(t, want.Packages, got.Packages, "packages differ from the sequential run")
}

func TestMissingRoot(t *testing.T) {
	_, err := Errgroup(context.Background(), filepath.Join(t.TempDir(), "missing"), 2)
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// TestSyntaxErrorsCounted checks that a file go/parser rejects is counted,
// not fatal, and that testdata directories are skipped, as batch.Sequential
// does.
func TestSyntaxErrorsCounted(t *testing.T) {
	root := t.TempDir()
	for rel, src := range map[string]string{
		"a/a.go":             "package a\nimport \"fmt\"\nfunc F() {}\ntype T int\nfunc (T) M() {}\nvar x, y = 1, 2\nconst c = 3\nvar _ = fmt.Sprint\n",
		"a/a_test.go":        "package a_test\nfunc G() {}\n",
		"a/bad.go":           "package a\nfunc {\n",
		"a/testdata/skip.go": "package skip\nfunc H() {}\n",
		"_skip/x.go":         "package x\n",
	} {
		p := filepath.Join(root, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
	}
	r := watchdog.Within(t, time.Minute, func() (batch.Result, error) { return Errgroup(context.Background(), root, 2) })
	want := []batch.Package{
		{Dir: "a", Name: "a", Counts: batch.Counts{Files: 1, Funcs: 1, Methods: 1, Types: 1, Vars: 3, Consts: 1, Imports: 1}},
		{Dir: "a", Name: "a_test", Counts: batch.Counts{Files: 1, Funcs: 1}},
	}
	assert.Equal(t, want, r.Packages)
	assert.Equal(t, 3, r.Totals.Files, "files")
	assert.Equal(t, 1, r.Totals.ParseErrors, "files with syntax errors")
	seq, err := batch.Sequential(root)
	require.NoError(t, err)
	assert.Equal(t, seq.Totals, r.Totals, "totals against batch.Sequential")
}
