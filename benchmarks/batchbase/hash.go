package batchbase

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/wsched/wsched/examples/hashstream"
)

// HashErrgroup runs examples/hashstream's job as most Go programs would:
// one goroutine walks the tree and starts a goroutine per file through an
// errgroup limited to workers at a time (SetLimit: the walk waits while
// that many run, which bounds memory as MaxQueued does); each merges its
// file's result under a mutex. The first error stops the walk and is
// returned.
func HashErrgroup(ctx context.Context, root string, workers, rounds int) (hashstream.Result, error) {
	t0 := time.Now()
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	var mu sync.Mutex
	all := hashstream.Sums{}
	walkErr := hashstream.Walk(root, func(path, rel string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		g.Go(func() error {
			buf := bufs.Get().(*[]byte)
			defer bufs.Put(buf)
			sum, n, err := hashstream.HashFile(path, rounds, *buf)
			if err != nil {
				return err
			}
			mu.Lock()
			all.AddFile(rel, sum, n)
			mu.Unlock()
			return nil
		})
		return nil
	})
	if err := g.Wait(); err != nil {
		return hashstream.Result{}, err
	}
	if walkErr != nil {
		return hashstream.Result{}, walkErr
	}
	r := all.Result()
	r.Elapsed = time.Since(t0)
	return r, nil
}

// bufs are the goroutines' read buffers: a goroutine per file cannot keep
// one of its own, and a 64 KiB allocation per file would be the baseline's
// handicap, not its design.
var bufs = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}
