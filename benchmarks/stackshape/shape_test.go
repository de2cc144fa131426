package stackshape

import "testing"

type item struct {
	row          int32
	cols, d1, d2 uint32
}

// n is the board's size; N-queens 13 has 73,712 solutions in 4,674,890
// states.
const (
	n         = 13
	mask      = uint32(1)<<n - 1
	solutions = 73712
	states    = 4674890
)

// item is a board state: the next row, and the columns and diagonals
// taken.

func count(row int32, cols, d1, d2 uint32) int {
	if row == n {
		return 1
	}
	k := 0
	for avail := ^(cols | d1 | d2) & mask; avail != 0; {
		bit := avail & -avail
		avail ^= bit
		k += count(row+1, cols|bit, (d1|bit)<<1, (d2|bit)>>1)
	}
	return k
}

// st is the stack kept between counts, so that a count allocates none.
var st []item

// stack is the loop over a local explicit stack.
func stack() int {
	s := append(st[:0], item{})
	k := 0
	for len(s) > 0 {
		x := s[len(s)-1]
		s = s[:len(s)-1]
		if x.row == n {
			k++
			continue
		}
		for avail := ^(x.cols | x.d1 | x.d2) & mask; avail != 0; {
			bit := avail & -avail
			avail ^= bit
			s = append(s, item{x.row + 1, x.cols | bit, (x.d1 | bit) << 1, (x.d2 | bit) >> 1})
		}
	}
	st = s
	return k
}

// feeder holds a stack in memory, as a scheduler.Feeder does.
type feeder struct{ items []item }

func (f *feeder) Add(v item) { f.items = append(f.items, v) }

// body is a state's work, feeding its children to f: 1 for a solution.
var body = func(it *item, f *feeder) int {
	if it.row == n {
		return 1
	}
	for avail := ^(it.cols | it.d1 | it.d2) & mask; avail != 0; {
		bit := avail & -avail
		avail ^= bit
		f.Add(item{it.row + 1, it.cols | bit, (it.d1 | bit) << 1, (it.d2 | bit) >> 1})
	}
	return 0
}

// F and cur are the feeder's stack and running item, in memory.
var (
	F   = &feeder{}
	cur item
)

// feederStack: the worklist's shape: a body called through a func value,
// the stack in a heap struct, the item copied to a heap field.
func feederStack() int {
	f := F
	f.items = append(f.items[:0], item{})
	k := 0
	for {
		items := f.items
		m := len(items) - 1
		if m < 0 {
			break
		}
		cur = items[m]
		f.items = items[:m]
		k += body(&cur, f)
	}
	return k
}

func bench(b *testing.B, f func() int) {
	b.ReportAllocs()
	for b.Loop() {
		if got := f(); got != solutions {
			b.Fatalf("%d solutions, want %d", got, solutions)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/states, "ns/state")
}

// ways are the counts by name.
var ways = map[string]func() int{
	"rec":    func() int { return count(0, 0, 0, 0) },
	"stack":  stack,
	"feeder": feederStack,
	"direct": directStack,
	"iter":   iterStack,
	"append": appendStack,
}

// TestEveryWayCounts: every way counts N-queens 13's solutions, twice (the
// second on the stacks the first grew).
func TestEveryWayCounts(t *testing.T) {
	for name, f := range ways {
		for range 2 {
			if got := f(); got != solutions {
				t.Fatalf("%s: %d solutions, want %d", name, got, solutions)
			}
		}
	}
}

// BenchmarkShape: every way, ns a state (see the package doc):
//
//	go test -run '^$' -bench . -count 3 .
func BenchmarkShape(b *testing.B) {
	for _, name := range []string{"rec", "stack", "feeder", "direct", "iter", "append"} {
		b.Run("way="+name, func(b *testing.B) { bench(b, ways[name]) })
	}
}

// bodyDirect is body as a plain function, not inlined.
//
//go:noinline
func bodyDirect(it *item, f *feeder) int {
	if it.row == n {
		return 1
	}
	for avail := ^(it.cols | it.d1 | it.d2) & mask; avail != 0; {
		bit := avail & -avail
		avail ^= bit
		f.Add(item{it.row + 1, it.cols | bit, (it.d1 | bit) << 1, (it.d2 | bit) >> 1})
	}
	return 0
}

// directStack: a direct, not inlined call, the stack in a heap struct.
func directStack() int {
	f := F
	f.items = append(f.items[:0], item{})
	k := 0
	for {
		items := f.items
		m := len(items) - 1
		if m < 0 {
			break
		}
		c := items[m]
		f.items = items[:m]
		k += bodyDirect(&c, f)
	}
	return k
}

// All is an iterator over the stack: pop until empty.
func (f *feeder) All(yield func(*item) bool) {
	for {
		m := len(f.items) - 1
		if m < 0 {
			return
		}
		c := f.items[m]
		f.items = f.items[:m]
		if !yield(&c) {
			return
		}
	}
}

// iterStack: the user's loop over an iterator the library would give.
func iterStack() int {
	f := F
	f.items = append(f.items[:0], item{})
	k := 0
	for it := range f.All {
		if it.row == n {
			k++
			continue
		}
		for avail := ^(it.cols | it.d1 | it.d2) & mask; avail != 0; {
			bit := avail & -avail
			avail ^= bit
			f.Add(item{it.row + 1, it.cols | bit, (it.d1 | bit) << 1, (it.d2 | bit) >> 1})
		}
	}
	return k
}

// bodyAppend is body appending to the stack s and returning it.
//
//go:noinline
func bodyAppend(it item, s []item) ([]item, int) {
	if it.row == n {
		return s, 1
	}
	for avail := ^(it.cols | it.d1 | it.d2) & mask; avail != 0; {
		bit := avail & -avail
		avail ^= bit
		s = append(s, item{it.row + 1, it.cols | bit, (it.d1 | bit) << 1, (it.d2 | bit) >> 1})
	}
	return s, 0
}

// bodyA is bodyAppend as a func value, so that the loop calls it as a
// worklist would.
var bodyA = bodyAppend

// appendStack: the body appends to the stack slice it is given and returns
// it (a func value, so not inlined); the loop keeps the slice in a local.
func appendStack() int {
	s := append(st[:0], item{})
	k := 0
	for len(s) > 0 {
		c := s[len(s)-1]
		s = s[:len(s)-1]
		var r int
		s, r = bodyA(c, s)
		k += r
	}
	st = s
	return k
}
