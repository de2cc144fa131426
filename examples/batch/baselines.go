package batch

import (
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Sequential runs the job on the calling goroutine: the reference result.
// (The errgroup baseline, which most Go programs would be, is built from
// Walk, ParseFile and Tally in the benchmarks module: package
// github.com/wsched/wsched/benchmarks/batchbase.)
func Sequential(root string) (Result, error) {
	t0 := time.Now()
	var t Tally
	err := Walk(root, func(path string) error {
		r, err := ParseFile(root, path)
		if err != nil {
			return err
		}
		t.Add(r)
		return nil
	})
	if err != nil {
		return Result{}, err
	}
	res := Result{Elapsed: time.Since(t0)}
	res.Packages, res.Totals = t.Packages()
	return res, nil
}

// Walk calls f for every Go file under root that the go command would
// read, in lexical order, and stops at the first error f or the walk
// returns.
func Walk(root string, f func(path string) error) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && skipDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && isGoFile(d.Name()) {
			return f(path)
		}
		return nil
	})
}

// Warm reads every file the job reads, so that the runs that follow find
// them in the page cache and time parsing rather than the disk.
func Warm(root string) error {
	return Walk(root, func(path string) error {
		_, err := os.ReadFile(path)
		return err
	})
}
