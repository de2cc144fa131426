// Package batchbase is the errgroup baseline of the batch job
// (examples/batch): what most Go programs would do to parse every Go file
// under a tree, one goroutine walking it and starting a goroutine per file
// through an errgroup limited to the number of workers. It lives in the
// benchmarks module, beside the other peers, so that the library's module
// does not depend on golang.org/x/sync.
//
// HashErrgroup is the same baseline for examples/hashstream (hash every
// file under a tree): BenchmarkHashStream runs it beside the wsched stream
// and a channel pipeline, BenchmarkStreamSmall the three shapes on many
// small in-memory items.
//
// Its tests check it against batch.Sequential, and BenchmarkBatch runs it
// beside the sequential job and the wsched job in one test binary (what
// scripts/batch-pairs.sh times in pairs of processes). The harness's batch
// workload (package harness) runs it as the errgroup peer.
package batchbase

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/wsched/wsched/examples/batch"
)

// Errgroup runs the batch job as most Go programs would: one goroutine
// walks the tree and starts a goroutine per file through an errgroup
// limited to workers at a time; each merges its file's counts under a
// mutex. The first error stops the walk and is returned.
func Errgroup(ctx context.Context, root string, workers int) (batch.Result, error) {
	t0 := time.Now()
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	var mu sync.Mutex
	var t batch.Tally
	walkErr := batch.Walk(root, func(path string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		g.Go(func() error {
			r, err := batch.ParseFile(root, path)
			if err != nil {
				return err
			}
			mu.Lock()
			t.Add(r)
			mu.Unlock()
			return nil
		})
		return nil
	})
	if err := g.Wait(); err != nil {
		return batch.Result{}, err
	}
	if walkErr != nil {
		return batch.Result{}, walkErr
	}
	res := batch.Result{Elapsed: time.Since(t0)}
	res.Packages, res.Totals = t.Packages()
	return res, nil
}
