package heapdump

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsched/wsched/examples/gcmark"
	"github.com/wsched/wsched/scheduler"
)

// BenchmarkGCMarkHeaps marks real and synthetic heaps side by side, once
// per op each: the heaps of the dumps named in $GCMARK_DUMPS (a
// comma-separated list; make them with this package's command, see the
// package doc), then the built synthetic heap at scale 1. On each: the
// sequential baselines (depth-first with plain and with CAS bits,
// breadth-first), the goroutine marker on 2 goroutines, and the Marker at
// its default (TraceAuto) on 1 and 2 workers and with each design forced
// on 2. Every cycle must mark what the sequential depth-first marker
// marks. Without $GCMARK_DUMPS only the synthetic heap runs.
//
//	GCMARK_DUMPS=/tmp/typecheck.dump,/tmp/index.dump go test -run '^$' -bench GCMarkHeaps -benchtime 5x -timeout 30m ./examples/gcmark/heapdump/
//
// go test runs the sub-benchmarks one after another; `gcmark -compare
// -dump FILE` interleaves them, which a shared machine needs.
func BenchmarkGCMarkHeaps(b *testing.B) {
	type named struct {
		name string
		load func() (*gcmark.Heap, error)
	}
	var heaps []named
	if env := os.Getenv("GCMARK_DUMPS"); env != "" {
		for _, f := range strings.Split(env, ",") {
			heaps = append(heaps, named{strings.TrimSuffix(filepath.Base(f), ".dump"), func() (*gcmark.Heap, error) { return LoadHeap(f) }})
		}
	}
	heaps = append(heaps, named{"built", func() (*gcmark.Heap, error) { return gcmark.NewHeap(gcmark.DefaultHeapConfig(1, 1)), nil }})
	for _, hn := range heaps {
		b.Run("heap="+hn.name, func(b *testing.B) {
			h, err := hn.load()
			require.NoError(b, err)
			want := h.MarkSequential()
			type marker interface {
				Mark(context.Context) (gcmark.Result, error)
				Marks() gcmark.Bitmap
			}
			run := func(name string, mk marker) {
				b.Run(name, func(b *testing.B) {
					if c, ok := mk.(interface{ Close() error }); ok {
						defer c.Close()
					}
					_, err := mk.Mark(context.Background()) // warm
					require.NoError(b, err)
					require.Equal(b, -1, gcmark.FirstDifference(mk.Marks(), want))
					b.ReportAllocs()
					for b.Loop() {
						if _, err := mk.Mark(context.Background()); err != nil {
							b.Fatal(err)
						}
					}
					b.StopTimer()
					require.Equal(b, -1, gcmark.FirstDifference(mk.Marks(), want))
				})
			}
			for _, k := range []gcmark.BaselineKind{gcmark.SequentialDFS, gcmark.SequentialDFSAtomic, gcmark.SequentialBFS} {
				bl, err := gcmark.NewBaseline(h, k, gcmark.BaselineOptions{})
				require.NoError(b, err)
				run("marker="+k.String(), bl)
			}
			g, err := gcmark.NewBaseline(h, gcmark.Goroutines, gcmark.BaselineOptions{Workers: 2})
			require.NoError(b, err)
			run("marker=goroutines/workers=2", g)
			for _, c := range []struct {
				tr      gcmark.Tracing
				workers int
			}{{gcmark.TraceAuto, 1}, {gcmark.TraceAuto, 2}, {gcmark.TracePartitioned, 2}, {gcmark.TraceDepthFirst, 2}, {gcmark.TraceEdgeBuffers, 2}} {
				m, err := gcmark.NewMarker(h, gcmark.Options{Scheduler: scheduler.Config{Workers: c.workers}, Trace: c.tr})
				require.NoError(b, err)
				name := c.tr.String()
				if c.tr == gcmark.TraceAuto {
					chosen, _ := m.Tracing()
					name = "auto=" + chosen.String()
				}
				run(fmt.Sprintf("marker=%s/workers=%d", name, c.workers), m)
			}
		})
	}
}
