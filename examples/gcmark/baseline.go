package gcmark

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wsched/wsched/examples/stagetime"
)

// BaselineKind names a marker that runs without the scheduler: what a
// collector has before it embeds wsched.
type BaselineKind uint8

const (
	// SequentialDFS marks depth-first on one goroutine with an explicit
	// mark stack (newest first) and plain mark bits: the best sequential
	// marker, the one a collector replaces.
	SequentialDFS BaselineKind = iota + 1
	// SequentialDFSAtomic is SequentialDFS setting its mark bits with a
	// CAS, as a parallel marker must: the difference is what atomic mark
	// bits cost.
	SequentialDFSAtomic
	// SequentialBFS marks breadth-first (a FIFO queue) on one goroutine
	// with plain mark bits, as Heap.MarkSequential does.
	SequentialBFS
	// Goroutines is a straightforward parallel marker: Workers goroutines
	// take chunks from one buffered channel, mark depth-first with CAS
	// mark bits, and send the oldest half of their mark stack to the
	// channel when some goroutine is waiting on it.
	Goroutines
)

// BaselineKinds lists every baseline.
var BaselineKinds = []BaselineKind{SequentialDFS, SequentialDFSAtomic, SequentialBFS, Goroutines}

var baselineNames = map[BaselineKind]string{
	SequentialDFS:       "seq-dfs",
	SequentialDFSAtomic: "seq-dfs-atomic",
	SequentialBFS:       "seq-bfs",
	Goroutines:          "goroutines",
}

// String returns the baseline's short name: seq-dfs, seq-dfs-atomic,
// seq-bfs, goroutines.
func (k BaselineKind) String() string {
	if s, ok := baselineNames[k]; ok {
		return s
	}
	return fmt.Sprintf("BaselineKind(%d)", uint8(k))
}

// ParseBaseline returns the baseline with the given short name.
func ParseBaseline(s string) (BaselineKind, error) {
	for k, n := range baselineNames {
		if n == s {
			return k, nil
		}
	}
	return 0, fmt.Errorf("gcmark: unknown baseline %q (want seq-dfs, seq-dfs-atomic, seq-bfs or goroutines)", s)
}

// BaselineOptions configures a Baseline.
type BaselineOptions struct {
	// Workers is the number of goroutines of the Goroutines marker (0:
	// GOMAXPROCS); the sequential markers use one.
	Workers int
	// RootSlotWork is the work per root slot, as Options.RootSlotWork (0:
	// DefaultRootSlotWork; negative: none), so that a baseline does the
	// cycle's whole work, as the Marker does.
	RootSlotWork int
	// Batch is how many objects the depth-first markers pop off their
	// stack at once: they load the batch's headers, whose cache misses
	// then overlap, before they scan any of it (0: DefaultBatch; at most
	// MaxBatch).
	Batch int
}

// A Baseline marks a Heap one GC cycle per Mark, without the scheduler:
// it clears the mark bits, decodes the root slots, marks, and counts the
// live objects and bytes, as a Marker's three stages do. One Mark at a
// time.
type Baseline struct {
	heap    *Heap
	kind    BaselineKind
	workers int
	rounds  int
	marks   Bitmap   // set plainly by SequentialDFS and SequentialBFS, by CAS (casMark) by the others
	stack   []uint32 // the sequential markers' stack or queue, kept between cycles
	roots   []uint32
	batch   int
	sink    uint64        // keeps the root-slot work from being optimised away
	gsink   atomic.Uint64 // the same, for the Goroutines marker
}

// NewBaseline returns a baseline marker of h.
func NewBaseline(h *Heap, kind BaselineKind, opts BaselineOptions) (*Baseline, error) {
	if _, ok := baselineNames[kind]; !ok {
		return nil, fmt.Errorf("gcmark: unknown baseline %d", kind)
	}
	if opts.Workers < 0 || opts.Batch < 0 || opts.Batch > MaxBatch {
		return nil, fmt.Errorf("gcmark: baseline workers %d, batch %d", opts.Workers, opts.Batch)
	}
	b := &Baseline{heap: h, kind: kind, workers: 1, rounds: opts.RootSlotWork, batch: opts.Batch}
	if b.batch == 0 {
		b.batch = DefaultBatch
	}
	if b.rounds == 0 {
		b.rounds = DefaultRootSlotWork
	}
	if kind == Goroutines {
		b.workers = opts.Workers
		if b.workers == 0 {
			b.workers = runtime.GOMAXPROCS(0)
		}
	}
	b.marks = NewBitmap(h.Objects())
	return b, nil
}

// Kind returns the baseline's kind.
func (b *Baseline) Kind() BaselineKind { return b.kind }

// Marks returns a copy of the mark bits of the last cycle.
func (b *Baseline) Marks() Bitmap {
	return append(Bitmap(nil), b.marks...)
}

// Mark runs one cycle. Its Result's Stages hold each phase's time as
// Makespan (and LowerBound): Prepare (clear the bits, decode the roots),
// Closure (mark), Release (count); the Goroutines marker decodes its roots
// in its Closure phase, in parallel, as it marks. ctx is checked between
// phases only.
func (b *Baseline) Mark(ctx context.Context) (Result, error) {
	var r Result
	t0 := time.Now()
	phase := func(name string, since time.Time) time.Time {
		now := time.Now()
		d := now.Sub(since)
		r.Stages = append(r.Stages, stagetime.Stage{Name: name, Packets: 1, Work: d, Longest: d, Makespan: d, LowerBound: d})
		return now
	}
	if b.kind == Goroutines {
		clear(b.marks)
		t := phase("Prepare", t0)
		r.Marked, r.Slots = b.markGoroutines()
		t = phase("Closure", t)
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		r.Live, r.LiveBytes = b.sweepGoroutines()
		phase("Release", t)
	} else {
		clear(b.marks)
		b.roots = b.decodeRoots(b.roots[:0])
		t := phase("Prepare", t0)
		switch b.kind {
		case SequentialDFS:
			r.Marked, r.Slots = b.markDFS()
		case SequentialDFSAtomic:
			r.Marked, r.Slots = b.markDFSAtomic()
		case SequentialBFS:
			r.Marked, r.Slots = b.markBFS()
		}
		t = phase("Closure", t)
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		r.Live, r.LiveBytes = sweepWords(b.heap, b.marks, 0, len(b.marks))
		phase("Release", t)
	}
	r.Elapsed = time.Since(t0)
	if r.Marked != r.Live {
		return r, fmt.Errorf("gcmark: %v counted %d live objects, marked %d", b.kind, r.Live, r.Marked)
	}
	return r, nil
}

// decodeRoots appends the referents of every root slot (stacks, then code
// cache) to out, doing each slot's decode work.
func (b *Baseline) decodeRoots(out []uint32) []uint32 {
	h := b.heap
	add := func(slots []uint32) {
		for _, v := range slots {
			if b.rounds > 0 {
				b.sink += decode(v, b.rounds)
			}
			if v != Null {
				out = append(out, v)
			}
		}
	}
	for _, s := range h.Stacks {
		add(s)
	}
	add(h.CodeCache)
	return out
}

// markDFS marks depth-first from b.roots with plain bits: the roots
// marked, then scanDFS with plain bits, the Marker's loop on one worker,
// until the stack is empty.
func (b *Baseline) markDFS() (marked, slots int64) {
	stack, marks := b.stack[:0], b.marks
	for _, o := range b.roots {
		slots++
		if plainMark(marks, o) {
			stack = append(stack, o)
		}
	}
	stack, s, marked := scanDFS(b.heap, marks, true, b.batch, stack, math.MaxInt)
	b.stack = stack
	return marked, slots + s
}

// markDFSAtomic is markDFS with each mark bit set by a CAS (casMark):
// the roots claimed, then scanDFS, the Marker's own loop, until the stack
// is empty.
func (b *Baseline) markDFSAtomic() (marked, slots int64) {
	stack := b.stack[:0]
	for _, o := range b.roots {
		slots++
		if casMark(b.marks, o) {
			stack = append(stack, o)
		}
	}
	stack, s, marked := scanDFS(b.heap, b.marks, false, b.batch, stack, math.MaxInt)
	b.stack = stack
	return marked, slots + s
}

// markBFS marks breadth-first from b.roots with plain bits.
func (b *Baseline) markBFS() (marked, slots int64) {
	off, words, marks := b.heap.Offsets, b.heap.Words, b.marks
	queue := b.stack[:0]
	for _, o := range b.roots {
		slots++
		if plainMark(marks, o) {
			queue = append(queue, o)
		}
	}
	for i := 0; i < len(queue); i++ { // queue[i:] is the frontier
		for _, c := range slotsAt(words, off[queue[i]]) {
			if c == Null {
				continue
			}
			slots++
			if plainMark(marks, c) {
				queue = append(queue, c)
			}
		}
	}
	b.stack = queue
	return int64(len(queue)), slots
}

// plainMark sets o's bit in marks and reports whether it was clear: for
// a goroutine that marks alone.
func plainMark(marks Bitmap, o uint32) bool {
	w, bit := &marks[o>>6], uint64(1)<<(o&63)
	if *w&bit != 0 {
		return false
	}
	*w |= bit
	return true
}

// casMark sets o's bit in marks and reports whether this call set it:
// a load, and a CAS only if the bit is clear (most referents are already
// marked, and the load avoids the locked instruction for them). Any
// goroutine may call it; exactly one caller wins for each object per
// cycle.
func casMark(marks Bitmap, o uint32) bool {
	word, bit := &marks[o>>6], uint64(1)<<(o&63)
	old := atomic.LoadUint64(word)
	for old&bit == 0 {
		if atomic.CompareAndSwapUint64(word, old, old|bit) { // claims o
			return true
		}
		old = atomic.LoadUint64(word) // another bit of the word changed; retry
	}
	return false
}

// slotsAt returns the reference slots of the object whose header is
// words[at].
func slotsAt(words []uint32, at uint32) []uint32 { return words[at+1 : at+1+words[at]] }

// sweepWords counts the objects of mark words [lo, hi) and their bytes
// (4 a word: header, slots, scalars). Plain loads, even of bits set by
// CAS: a sweep runs after the mark has ended (the Marker's Release stage
// opens when Closure has drained; a baseline sweeps after its markers
// have returned), which orders every CAS before it.
func sweepWords(h *Heap, marks Bitmap, lo, hi int) (live, bytes int64) {
	off := h.Offsets
	n := uint32(h.Objects())
	for i := lo; i < hi; i++ {
		word := marks[i]
		live += int64(bits.OnesCount64(word))
		for word != 0 {
			o := uint32(i)*64 + uint32(bits.TrailingZeros64(word))
			word &= word - 1
			if o < n {
				bytes += 4 * int64(off[o+1]-off[o])
			}
		}
	}
	return live, bytes
}

// goChunk is a unit of the Goroutines marker's work: root slots to decode
// and claim, or objects already claimed, to scan.
type goChunk struct {
	objs  []uint32
	roots bool
}

// markGoroutines is the Goroutines marker's mark: the root sets (the code
// cache first, then one chunk per stack) go into a channel; each of
// b.workers goroutines takes chunks and marks depth-first, and hands the
// oldest half of its stack to the channel when another goroutine waits
// on it and the channel is empty. pending counts the chunks queued or
// running; when it reaches zero the channel closes.
func (b *Baseline) markGoroutines() (marked, slots int64) {
	h := b.heap
	nroots := len(h.Stacks) + 1
	work := make(chan goChunk, nroots+4*b.workers)
	var pending sync.WaitGroup
	var waiting atomic.Int32 // goroutines blocked on work
	pending.Add(nroots)
	work <- goChunk{objs: h.CodeCache, roots: true}
	for _, s := range h.Stacks {
		work <- goChunk{objs: s, roots: true}
	}
	go func() {
		pending.Wait()
		close(work)
	}()
	var total [2]atomic.Int64
	var wg sync.WaitGroup
	for range b.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var nmarked, nslots int64
			var sink uint64
			stack := make([]uint32, 0, 4096)
			for {
				waiting.Add(1)
				c, ok := <-work
				waiting.Add(-1)
				if !ok {
					break
				}
				stack = stack[:0]
				for _, o := range c.objs {
					if c.roots {
						if b.rounds > 0 {
							sink += decode(o, b.rounds)
						}
						if o == Null {
							continue
						}
						nslots++
						if !casMark(b.marks, o) {
							continue
						}
					}
					stack = append(stack, o)
				}
				n := 0 // objects scanned since the last look at the channel
				var at, hd [MaxBatch]uint32
				for len(stack) > 0 {
					if n >= 64 && len(stack) >= 2 && waiting.Load() > 0 && len(work) == 0 {
						n = 0
						half := len(stack) / 2
						give := append([]uint32(nil), stack[:half]...)
						stack = stack[:copy(stack, stack[half:])]
						pending.Add(1)
						work <- goChunk{objs: give} // room: the channel was empty
					}
					k := min(b.batch, len(stack))
					top := stack[len(stack)-k:]
					for i, o := range top {
						at[i] = h.Offsets[o]
						hd[i] = h.Words[at[i]]
					}
					stack = stack[:len(stack)-k]
					for i := k - 1; i >= 0; i-- {
						s := h.Words[at[i]+1 : at[i]+1+hd[i]]
						for j := len(s) - 1; j >= 0; j-- { // the first slot is popped first
							c := s[j]
							if c == Null {
								continue
							}
							nslots++
							if casMark(b.marks, c) {
								stack = append(stack, c)
							}
						}
					}
					nmarked += int64(k)
					n += k
				}
				pending.Done()
			}
			total[0].Add(nmarked)
			total[1].Add(nslots)
			b.gsink.Add(sink)
		}()
	}
	wg.Wait()
	return total[0].Load(), total[1].Load()
}

// sweepGoroutines counts the live objects, the bitmap split evenly among
// b.workers goroutines.
func (b *Baseline) sweepGoroutines() (live, bytes int64) {
	var total [2]atomic.Int64
	var wg sync.WaitGroup
	n := len(b.marks)
	for i := range b.workers {
		lo, hi := i*n/b.workers, (i+1)*n/b.workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, by := sweepWords(b.heap, b.marks, lo, hi)
			total[0].Add(l)
			total[1].Add(by)
		}()
	}
	wg.Wait()
	return total[0].Load(), total[1].Load()
}
