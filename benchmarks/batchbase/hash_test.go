package batchbase

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/wsched/wsched/examples/batch"
	"github.com/wsched/wsched/examples/hashstream"
	"github.com/wsched/wsched/scheduler"
)

// TestHashErrgroupMatches: the errgroup baseline gives the sequential
// result, and a file it cannot read is its error.
func TestHashErrgroupMatches(t *testing.T) {
	root := filepath.Join(batch.DefaultRoot(), "net", "http")
	if _, err := os.Stat(root); err != nil {
		t.Skipf("no Go source tree: %v", err)
	}
	seq, err := hashstream.Sequential(root, 1)
	require.NoError(t, err)
	for _, workers := range []int{1, 2, 4} {
		r, err := HashErrgroup(context.Background(), root, workers, 1)
		require.NoError(t, err)
		assert.Equal(t, seq.Dirs, r.Dirs, "%d workers", workers)
	}
	_, err = HashErrgroup(context.Background(), filepath.Join(t.TempDir(), "missing"), 2, 1)
	assert.True(t, errors.Is(err, os.ErrNotExist), "%v", err)
}

// BenchmarkHashStream hashes every file under GOROOT/src with GOMAXPROCS
// workers, the three streaming shapes in turn in every op (the order
// rotating, so that drift of a shared machine falls on all three):
// examples/hashstream's wsched stream (a Hold, MaxQueued 256 with Block),
// an errgroup with SetLimit, and a channel pipeline of 256 slots. It
// reports each one's median milliseconds, and the median of the ratios
// wsched ÷ errgroup and wsched ÷ pipeline taken op by op, with the
// fraction of ops in which wsched was faster.
//
//	cd benchmarks && go test -run '^$' -bench HashStream -benchtime 21x ./batchbase/
func BenchmarkHashStream(b *testing.B) {
	root := batch.DefaultRoot()
	if _, err := hashstream.Sequential(root, 1); err != nil { // into the page cache
		b.Skipf("no Go source tree: %v", err)
	}
	workers := runtime.GOMAXPROCS(0)
	j, err := hashstream.NewJob(hashstream.Options{Workers: workers})
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	ctx := context.Background()
	shapes := []shape{
		{"wsched", func() (time.Duration, error) { r, err := j.Run(ctx, root); return r.Elapsed, err }},
		{"errgroup", func() (time.Duration, error) { r, err := HashErrgroup(ctx, root, workers, 1); return r.Elapsed, err }},
		{"pipeline", func() (time.Duration, error) {
			r, err := hashstream.Pipeline(ctx, root, workers, hashstream.DefaultMaxQueued, 1)
			return r.Elapsed, err
		}},
	}
	alternate(b, shapes)
}

// BenchmarkStreamSmall streams many small items from one producer outside
// the workers: 1<<17 records of 64 bytes, each hashed with SHA-256 (about
// 0.3 µs), through the same three shapes as BenchmarkHashStream (a wsched
// Hold with MaxQueued 256 and Block; an errgroup with SetLimit; a channel
// of 256 slots), the results XORed per worker and combined. Per-item cost
// is the shapes' own: what a batch engine of small items pays.
//
//	cd benchmarks && go test -run '^$' -bench StreamSmall -benchtime 21x ./batchbase/
//
// Sub-benchmarks: the scheduler's default ParkSpin, and ParkSpin off (a
// worker that finds nothing parks at once instead of yielding for up to
// 200 µs: on 2 vCPUs, spinning idle workers take the producer's CPU).
func BenchmarkStreamSmall(b *testing.B) {
	for _, ps := range []struct {
		name string
		d    time.Duration
	}{{"default", 0}, {"off", -1}} {
		b.Run("parkspin="+ps.name, func(b *testing.B) { benchStreamSmall(b, ps.d) })
	}
}

func benchStreamSmall(b *testing.B, parkSpin time.Duration) {
	const items = 1 << 17
	workers := runtime.GOMAXPROCS(0)
	recs := make([][64]byte, items)
	for i := range recs {
		recs[i][0], recs[i][1], recs[i][2] = byte(i), byte(i>>8), byte(i>>16)
	}
	want := xorAll(recs)

	s, err := scheduler.New(scheduler.Config{Workers: workers, MaxQueued: hashstream.DefaultMaxQueued, ParkSpin: parkSpin})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	red := scheduler.NewReducer(s, func(acc, v [32]byte) [32]byte { return xor(acc, v) })
	ctx := context.Background()
	wsched := func() (time.Duration, error) {
		t0 := time.Now()
		red.Reset()
		hd, err := s.Hold(1)
		if err != nil {
			return 0, err
		}
		ran := make(chan error, 1)
		go func() { ran <- s.Run(ctx) }()
		for i := range recs {
			if err := hd.Add(&record{rec: &recs[i], red: red}, scheduler.Block(ctx)); err != nil {
				break
			}
		}
		hd.Release()
		if err := <-ran; err != nil {
			return 0, err
		}
		return time.Since(t0), check(red.Result(), want)
	}
	errgroupRun := func() (time.Duration, error) {
		t0 := time.Now()
		var g errgroup.Group
		g.SetLimit(workers)
		var mu sync.Mutex
		var acc [32]byte
		for i := range recs {
			g.Go(func() error {
				h := sha256.Sum256(recs[i][:])
				mu.Lock()
				acc = xor(acc, h)
				mu.Unlock()
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return 0, err
		}
		return time.Since(t0), check(acc, want)
	}
	pipeline := func() (time.Duration, error) {
		t0 := time.Now()
		ch := make(chan *[64]byte, hashstream.DefaultMaxQueued)
		local := make([][32]byte, workers)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				var acc [32]byte
				for r := range ch {
					acc = xor(acc, sha256.Sum256(r[:]))
				}
				local[w] = acc
			})
		}
		for i := range recs {
			ch <- &recs[i]
		}
		close(ch)
		wg.Wait()
		var acc [32]byte
		for _, l := range local {
			acc = xor(acc, l)
		}
		return time.Since(t0), check(acc, want)
	}
	alternate(b, []shape{{"wsched", wsched}, {"errgroup", errgroupRun}, {"pipeline", pipeline}})
}

// record hashes one 64-byte record into its worker's XOR.
type record struct {
	rec *[64]byte
	red *scheduler.Reducer[[32]byte]
}

func (r *record) Run(w *scheduler.Worker) error {
	l := r.red.Local(w)
	*l = xor(*l, sha256.Sum256(r.rec[:]))
	return nil
}

func xor(a, b [32]byte) [32]byte {
	for i := range a {
		a[i] ^= b[i]
	}
	return a
}

func xorAll(recs [][64]byte) [32]byte {
	var acc [32]byte
	for i := range recs {
		acc = xor(acc, sha256.Sum256(recs[i][:]))
	}
	return acc
}

func check(got, want [32]byte) error {
	if got != want {
		return errors.New("wrong result")
	}
	return nil
}

// shape is one way of running a job; run returns its elapsed time.
type shape struct {
	name string
	run  func() (time.Duration, error)
}

// alternate runs every shape once per op, the order rotating op by op, and
// reports each one's median milliseconds, and for the first shape the
// median of its op-by-op ratio to each other shape and the fraction of ops
// in which it was faster.
func alternate(b *testing.B, shapes []shape) {
	times := make([][]float64, len(shapes))
	op := 0
	for b.Loop() {
		for k := range shapes {
			i := (k + op) % len(shapes)
			d, err := shapes[i].run()
			if err != nil {
				b.Fatalf("%s: %v", shapes[i].name, err)
			}
			times[i] = append(times[i], float64(d)/1e6)
		}
		op++
	}
	for i, s := range shapes {
		b.ReportMetric(median(times[i]), s.name+"-ms")
	}
	for i := 1; i < len(shapes); i++ {
		ratios := make([]float64, len(times[0]))
		faster := 0
		for k := range ratios {
			ratios[k] = times[0][k] / times[i][k]
			if ratios[k] < 1 {
				faster++
			}
		}
		b.ReportMetric(median(ratios), fmt.Sprintf("%s/%s", shapes[0].name, shapes[i].name))
		b.ReportMetric(float64(faster)/float64(len(ratios)), fmt.Sprintf("%s-faster-than-%s", shapes[0].name, shapes[i].name))
		lo, hi := medianCI(ratios)
		b.ReportMetric(lo, fmt.Sprintf("%s/%s-ci-lo", shapes[0].name, shapes[i].name))
		b.ReportMetric(hi, fmt.Sprintf("%s/%s-ci-hi", shapes[0].name, shapes[i].name))
	}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// medianCI is a distribution-free confidence interval of at least 95% for
// the median of xs (order statistics of the binomial(n, ½) distribution);
// with fewer than 6 values it is the whole range.
func medianCI(xs []float64) (lo, hi float64) {
	s := slices.Clone(xs)
	sort.Float64s(s)
	n := len(s)
	if n == 0 {
		return 0, 0
	}
	// The largest k with P(Binomial(n, ½) < k) ≤ 2.5%: [s[k-1], s[n-k]].
	k, cum := 0, 0.0
	p := 1.0
	for range n {
		p /= 2
	}
	term := p // P(X = 0)
	for i := 0; i < n; i++ {
		if cum+term > 0.025 {
			break
		}
		cum += term
		k = i + 1
		term = term * float64(n-i) / float64(i+1)
	}
	if k == 0 {
		return s[0], s[n-1]
	}
	return s[k-1], s[n-k]
}
