package hashstream

import (
	"context"
	"crypto/sha256"
	"path/filepath"
	"sync"
	"time"
)

// Sequential runs the job on the calling goroutine: the reference result.
// (The errgroup baseline, a goroutine per file through an errgroup limited
// to the number of workers, is in the benchmarks module, package
// github.com/wsched/wsched/benchmarks/batchbase, so that this module does
// not depend on golang.org/x/sync.)
func Sequential(root string, rounds int) (Result, error) {
	t0 := time.Now()
	all := Sums{}
	buf := make([]byte, 64<<10)
	err := Walk(root, func(path, rel string) error {
		sum, n, err := HashFile(path, rounds, buf)
		if err != nil {
			return err
		}
		all.AddFile(rel, sum, n)
		return nil
	})
	if err != nil {
		return Result{}, err
	}
	r := all.Result()
	r.Elapsed = time.Since(t0)
	return r, nil
}

// Pipeline runs the job as a channel pipeline, the other shape Go programs
// use: the walk sends each file on a channel of buffer slots, workers
// goroutines hash what they receive into their own sums, and the caller
// merges the sums once they are done. The first error cancels the walk and
// the workers (they drain the channel without hashing) and is returned.
func Pipeline(ctx context.Context, root string, workers, buffer, rounds int) (Result, error) {
	t0 := time.Now()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	type file struct{ path, rel string }
	files := make(chan file, buffer)
	local := make([]Sums, workers)
	var wg sync.WaitGroup
	for i := range workers {
		local[i] = Sums{}
		wg.Go(func() {
			buf := make([]byte, 64<<10)
			for f := range files {
				if ctx.Err() != nil {
					continue
				}
				sum, n, err := HashFile(f.path, rounds, buf)
				if err != nil {
					cancel(err)
					continue
				}
				local[i].AddFile(f.rel, sum, n)
			}
		})
	}
	walkErr := Walk(root, func(path, rel string) error {
		select {
		case files <- file{path, rel}:
			return nil
		case <-ctx.Done():
			return errStop
		}
	})
	close(files)
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return Result{}, err
	}
	if walkErr != nil {
		return Result{}, walkErr
	}
	all := Sums{}
	for _, l := range local {
		all.Merge(l)
	}
	r := all.Result()
	r.Elapsed = time.Since(t0)
	return r, nil
}

// AddFile adds the file at rel (relative to the root) to its directory's
// sums.
func (s Sums) AddFile(rel string, sum [sha256.Size]byte, n int64) {
	dir, name := filepath.Split(rel)
	dir = filepath.Clean(dir)
	d := s[dir]
	if d == nil {
		d = &Dir{Dir: dir}
		s[dir] = d
	}
	d.addFile(name, sum, n)
}
