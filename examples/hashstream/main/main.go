// Command hashstream hashes every regular file under a tree (by default
// the Go source tree) three ways: sequentially, through a channel
// pipeline, and streamed through a wsched scheduler by a walk that holds
// the cycle open (scheduler.Hold) under a bounded queue; it checks that
// all agree and prints how long each took. With -mem it measures instead
// what the bound saves: the walk made 100× faster than the workers by
// hashing each file many times, the live heap at the walk's end, bounded
// and unbounded.
//
//	go run ./examples/hashstream/main
//	go run ./examples/hashstream/main -root $(go env GOROOT)/src/net -mem
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"time"

	"github.com/wsched/wsched/examples/batch"
	"github.com/wsched/wsched/examples/hashstream"
)

func main() {
	root := flag.String("root", "", "directory to hash (default $(go env GOROOT)/src)")
	workers := flag.Int("workers", runtime.GOMAXPROCS(0), "workers")
	maxQueued := flag.Int("max-queued", hashstream.DefaultMaxQueued, "files walked and not yet taken by a worker, at most (-1: unbounded)")
	mem := flag.Bool("mem", false, "measure the live heap at the walk's end, bounded and unbounded, with the walk 100× faster than the workers")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "hashstream: unexpected arguments %q\n", flag.Args())
		flag.Usage()
		os.Exit(2)
	}
	if *root == "" {
		*root = batch.DefaultRoot()
	}
	var err error
	if *mem {
		err = measureMemory(*root, *workers, *maxQueued)
	} else {
		err = compare(*root, *workers, *maxQueued)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "hashstream:", err)
		os.Exit(1)
	}
}

func compare(root string, workers, maxQueued int) error {
	ctx := context.Background()
	if _, err := hashstream.Sequential(root, 1); err != nil { // into the page cache
		return err
	}
	seq, err := hashstream.Sequential(root, 1)
	if err != nil {
		return err
	}
	pipe, err := hashstream.Pipeline(ctx, root, workers, max(maxQueued, 1), 1)
	if err != nil {
		return err
	}
	ws, err := hashstream.Stream(ctx, root, hashstream.Options{Workers: workers, MaxQueued: maxQueued})
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(ws.Dirs, seq.Dirs) || !reflect.DeepEqual(pipe.Dirs, seq.Dirs) {
		return errors.New("the runs disagree")
	}
	fmt.Printf("%s: %d files, %.1f MB, %d directories\n\n", root, seq.Files, float64(seq.Bytes)/1e6, len(seq.Dirs))
	fmt.Printf("sequential                 %10v\n", seq.Elapsed.Round(time.Millisecond))
	fmt.Printf("channel pipeline (%2d)      %10v  %.2f×\n", workers, pipe.Elapsed.Round(time.Millisecond), ratio(seq, pipe))
	fmt.Printf("wsched stream (%2d)         %10v  %.2f×  (at most %d files in flight)\n", workers, ws.Elapsed.Round(time.Millisecond), ratio(seq, ws), ws.PeakInFlight)
	return nil
}

func ratio(seq, r hashstream.Result) float64 { return float64(seq.Elapsed) / float64(r.Elapsed) }

// measureMemory makes the walk 100× faster than the workers (it times the
// walk alone and one hash of every file, and hashes each file as many
// times as it takes), then reads the live heap once the walk has added
// every file, on a job that ran once already, bounded and unbounded.
func measureMemory(root string, workers, maxQueued int) error {
	if _, err := hashstream.Sequential(root, 1); err != nil { // into the page cache
		return err
	}
	t0 := time.Now()
	files := 0
	if err := hashstream.Walk(root, func(string, string) error { files++; return nil }); err != nil {
		return err
	}
	walk := time.Since(t0)
	seq, err := hashstream.Sequential(root, 1)
	if err != nil {
		return err
	}
	// workers hash in parallel: each round costs seq.Elapsed ÷ workers.
	rounds := max(1, int(100*float64(walk)*float64(workers)/float64(seq.Elapsed)))
	fmt.Printf("%s: %d files; walk alone %v, one hash of every file %v: %d rounds make the walk 100× faster than %d workers\n\n",
		root, files, walk.Round(time.Millisecond), seq.Elapsed.Round(time.Millisecond), rounds, workers)
	for _, mq := range []int{maxQueued, -1} {
		var before, atEnd runtime.MemStats
		j, err := hashstream.NewJob(hashstream.Options{Workers: workers, MaxQueued: mq, Rounds: rounds,
			AfterWalk: func() { runtime.GC(); runtime.ReadMemStats(&atEnd) }})
		if err != nil {
			return err
		}
		if _, err := j.Run(context.Background(), root); err != nil {
			j.Close()
			return err
		}
		runtime.GC()
		runtime.ReadMemStats(&before)
		r, err := j.Run(context.Background(), root)
		j.Close()
		if err != nil {
			return err
		}
		name := fmt.Sprintf("MaxQueued %d", mq)
		if mq < 0 {
			name = "unbounded"
		}
		fmt.Printf("%-16s at most %6d files in flight; live heap at the walk's end %+8.1f KiB (%.0f B a file in flight)\n",
			name, r.PeakInFlight, float64(int64(atEnd.HeapAlloc)-int64(before.HeapAlloc))/1024,
			float64(int64(atEnd.HeapAlloc)-int64(before.HeapAlloc))/float64(max(r.PeakInFlight, 1)))
	}
	return nil
}
