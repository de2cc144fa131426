package batch

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// Sequential runs the job on the calling goroutine: the reference result.
func Sequential(root string) (Result, error) {
	t0 := time.Now()
	t := newTally()
	err := walk(root, func(path string) error {
		r, err := parseFile(root, path)
		if err != nil {
			return err
		}
		t.addFile(r)
		return nil
	})
	if err != nil {
		return Result{}, err
	}
	res := Result{Elapsed: time.Since(t0)}
	res.Packages, res.Totals = t.packages()
	return res, nil
}

// Errgroup runs the job as most Go programs would: one goroutine walks the
// tree and starts a goroutine per file through an errgroup limited to
// workers at a time; each merges its file's counts under a mutex.
func Errgroup(ctx context.Context, root string, workers int) (Result, error) {
	t0 := time.Now()
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	var mu sync.Mutex
	t := newTally()
	walkErr := walk(root, func(path string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		g.Go(func() error {
			r, err := parseFile(root, path)
			if err != nil {
				return err
			}
			mu.Lock()
			t.addFile(r)
			mu.Unlock()
			return nil
		})
		return nil
	})
	if err := g.Wait(); err != nil {
		return Result{}, err
	}
	if walkErr != nil {
		return Result{}, walkErr
	}
	res := Result{Elapsed: time.Since(t0)}
	res.Packages, res.Totals = t.packages()
	return res, nil
}

// walk calls f for every Go file under root that the go command would read.
func walk(root string, f func(path string) error) error {
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
	return walk(root, func(path string) error {
		_, err := os.ReadFile(path)
		return err
	})
}
