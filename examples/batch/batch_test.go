package batch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/wsched/wsched/internal/watchdog"

	"github.com/wsched/wsched/scheduler"
)

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
	if err != nil {
		t.Fatal(err)
	}
	if want.Totals.Files < 100 || len(want.Packages) < 10 || want.Totals.Decls() < 1000 {
		t.Fatalf("implausibly little found under %s: %+v, %d packages", root, want.Totals, len(want.Packages))
	}
	check := func(t *testing.T, got Result) {
		t.Helper()
		if got.Totals != want.Totals {
			t.Errorf("totals %+v, want %+v", got.Totals, want.Totals)
		}
		if !reflect.DeepEqual(got.Packages, want.Packages) {
			t.Errorf("packages differ from the sequential run (%d vs %d)", len(got.Packages), len(want.Packages))
		}
	}
	t.Run("errgroup", func(t *testing.T) {
		check(t, watchdog.Within(t, time.Minute, func() (Result, error) { return Errgroup(context.Background(), root, 2) }))
	})
	for _, cfg := range []scheduler.Config{
		{Workers: 1},
		{Workers: 2},
		{Workers: 3, Wake: scheduler.WakeAll, Steal: scheduler.StealOne()},
		{Workers: 2, Wake: scheduler.WakeN, Steal: scheduler.StealBatch(4), LocalFIFO: true},
	} {
		t.Run(fmt.Sprintf("wsched/workers=%d/wake=%v/steal=%v", cfg.Workers, cfg.Wake, cfg.Steal), func(t *testing.T) {
			j, err := NewJob(root, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			for range 2 { // a Job runs again from scratch
				got := watchdog.Within(t, time.Minute, func() (Result, error) { return j.Run(context.Background()) })
				check(t, got)
				if len(got.Stages) != len(Stages) {
					t.Errorf("stages %v, want one per stage of %v", got.Stages, Stages)
				}
				if got.Stats.Packets != uint64(got.Totals.Files)+1+uint64(got.Stages[0].Packets) {
					t.Errorf("scheduler ran %d packets, want files (%d) + directories (%d) + 1",
						got.Stats.Packets, got.Totals.Files, got.Stages[0].Packets)
				}
			}
		})
	}
}

func TestMissingRoot(t *testing.T) {
	root := filepath.Join(t.TempDir(), "missing")
	if _, err := Sequential(root); err == nil {
		t.Error("Sequential: no error for a missing root")
	}
	if _, err := Errgroup(context.Background(), root, 2); err == nil {
		t.Error("Errgroup: no error for a missing root")
	}
	if _, err := Run(context.Background(), root, scheduler.Config{Workers: 2}); err == nil {
		t.Error("Run: no error for a missing root")
	}
}

// TestSyntaxErrorsCounted checks that a file go/parser rejects is counted,
// not fatal, and that testdata directories are skipped.
func TestSyntaxErrorsCounted(t *testing.T) {
	root := t.TempDir()
	write := func(rel, src string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a/a.go", "package a\nimport \"fmt\"\nfunc F() {}\ntype T int\nfunc (T) M() {}\nvar x, y = 1, 2\nconst c = 3\nvar _ = fmt.Sprint\n")
	write("a/a_test.go", "package a_test\nfunc G() {}\n")
	write("a/bad.go", "package a\nfunc {\n")
	write("a/testdata/skip.go", "package skip\nfunc H() {}\n")
	write("_skip/x.go", "package x\n")
	for name, run := range map[string]func() (Result, error){
		"sequential": func() (Result, error) { return Sequential(root) },
		"errgroup":   func() (Result, error) { return Errgroup(context.Background(), root, 2) },
		"wsched":     func() (Result, error) { return Run(context.Background(), root, scheduler.Config{Workers: 2}) },
	} {
		r := watchdog.Within(t, time.Minute, run)
		want := []Package{
			{Dir: "a", Name: "a", Counts: Counts{Files: 1, Funcs: 1, Methods: 1, Types: 1, Vars: 3, Consts: 1, Imports: 1}},
			{Dir: "a", Name: "a_test", Counts: Counts{Files: 1, Funcs: 1}},
		}
		if !reflect.DeepEqual(r.Packages, want) || r.Totals.Files != 3 || r.Totals.ParseErrors != 1 {
			t.Errorf("%s: got %+v, totals %+v; want %+v, 3 files, 1 with errors", name, r.Packages, r.Totals, want)
		}
	}
}
