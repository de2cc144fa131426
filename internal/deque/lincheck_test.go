package deque_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/wsched/wsched/internal/deque"
)

// Linearizability: short concurrent histories (an owner pushing and
// popping, two or three thieves stealing) recorded against the real deque
// and injector and checked by porcupine against sequential models.
//
//	go test -run Linearizable ./internal/deque/                      # default: 1000 histories each (400 under -race)
//	go test -run Linearizable ./internal/deque/ -lincheck.n=20000    # more (the flag goes after the package)
//
// A failing history is written as porcupine's HTML visualisation; the
// test log names the file.

var lincheckN = flag.Int("lincheck.n", 0, "histories per linearizability test (0: 1000, or 400 under -race; 10000 with WSCHED_STRESS=1)")

func lincheckHistories() int {
	switch {
	case *lincheckN > 0:
		return *lincheckN
	case stress():
		return 10000
	case raceEnabled:
		return 400
	}
	return 1000
}

// The model's operations. Values are small positive integers (one byte
// each), so a model state is an immutable string: the queue's contents,
// oldest first. A batch (StealInto, Injector.TakeBatch) writes the items
// it took to dst oldest first, so its result is a string too, compared
// with the front of the state in order.
type linKind uint8

const (
	linPush  linKind = iota // owner or producer: Push(v)
	linPop                  // owner: Pop() (v, ok)
	linSteal                // thief: Steal() (v, st)
	linBatch                // thief: one atomic batch, StealInto from a FIFO deque or Injector.TakeBatch (took, st)
)

type linIn struct {
	kind  linKind
	v     int // linPush: the value pushed
	limit int // linBatch: len(dst)
}

type linOut struct {
	v    int
	ok   bool         // linPop
	st   deque.Status // linSteal, linBatch
	took string       // linBatch: dst[:k], the items taken, in dst's order
}

// dequeModel is a sequential deque whose owner pops from the newest end
// (LIFO) or the oldest (FIFO) and whose thieves take the oldest:
//
//   - Pop reports nothing only when the deque is empty (strict).
//   - Steal and a batch report Empty only when the deque is empty
//     (strict); Retry is allowed at any time and changes nothing.
//   - A batch (StealInto) takes the oldest items and writes them oldest
//     first, at least one and at most min(len(dst), ⌈n/2⌉) for the n
//     items present at its linearization point: the uncontended count is
//     exact (count_test.go), a contended one may be smaller, never larger.
//     Only a FIFO deque's batch is one atomic step (one CAS claims the
//     range); a LIFO deque's is recorded as single steals (addSplit).
func dequeModel(fifo bool) porcupine.Model {
	return porcupine.Model{
		Init: func() any { return "" },
		Step: func(state, input, output any) (bool, any) {
			s, in, out := state.(string), input.(linIn), output.(linOut)
			switch in.kind {
			case linPush:
				return true, s + string(rune(in.v))
			case linPop:
				if !out.ok {
					return s == "", s
				}
				if s == "" {
					return false, s
				}
				if fifo {
					return s[0] == byte(out.v), s[1:]
				}
				return s[len(s)-1] == byte(out.v), s[:len(s)-1]
			case linSteal:
				return stealStep(s, out)
			case linBatch:
				return batchStep(s, in, out, true)
			}
			return false, s
		},
		DescribeOperation: describeOp,
		DescribeState:     describeState,
	}
}

// queueModel is the injector: a FIFO queue; Steal and TakeBatch take from
// the front, strict Empty, free Retry. A batch takes 1..len(dst) items (a
// block boundary may cut it short) and writes them in queue order.
func queueModel() porcupine.Model {
	return porcupine.Model{
		Init: func() any { return "" },
		Step: func(state, input, output any) (bool, any) {
			s, in, out := state.(string), input.(linIn), output.(linOut)
			switch in.kind {
			case linPush:
				return true, s + string(rune(in.v))
			case linSteal:
				return stealStep(s, out)
			case linBatch:
				return batchStep(s, in, out, false)
			}
			return false, s
		},
		DescribeOperation: describeOp,
		DescribeState:     describeState,
	}
}

func stealStep(s string, out linOut) (bool, any) {
	switch out.st {
	case deque.Success:
		return s != "" && s[0] == byte(out.v), s[min(1, len(s)):]
	case deque.Empty:
		return s == "", s
	case deque.Retry:
		return true, s
	}
	return false, s
}

// batchStep: halfRule applies the deque's about-half bound; the injector
// takes up to limit. Either way the items are the oldest, oldest first.
func batchStep(s string, in linIn, out linOut, halfRule bool) (bool, any) {
	switch out.st {
	case deque.Empty:
		return s == "" && out.took == "", s
	case deque.Retry:
		return out.took == "", s
	case deque.Success:
	default:
		return false, s
	}
	k := len(out.took)
	most := in.limit
	if halfRule {
		most = min(in.limit, (len(s)+1)/2)
	}
	if k == 0 || k > most || !strings.HasPrefix(s, out.took) {
		return false, s
	}
	return true, s[k:]
}

func describeOp(input, output any) string {
	in, out := input.(linIn), output.(linOut)
	switch in.kind {
	case linPush:
		return fmt.Sprintf("Push(%d)", in.v)
	case linPop:
		if !out.ok {
			return "Pop() -> none"
		}
		return fmt.Sprintf("Pop() -> %d", out.v)
	case linSteal:
		if out.st != deque.Success {
			return "Steal() -> " + out.st.String()
		}
		return fmt.Sprintf("Steal() -> %d", out.v)
	}
	if out.st != deque.Success {
		return fmt.Sprintf("batch(len %d) -> %v", in.limit, out.st)
	}
	return fmt.Sprintf("batch(len %d) -> %v", in.limit, describeState(out.took))
}

func describeState(state any) string {
	var b []string
	for _, c := range []byte(state.(string)) {
		b = append(b, fmt.Sprint(c))
	}
	return "[" + strings.Join(b, " ") + "]"
}

// linDeque is what the recorder drives: the real *deque.Deque[int], or a
// deliberately wrong one for the model's own test.
type linDeque interface {
	Push(int)
	Pop() (int, bool)
	Steal() (int, deque.Status)
	StealInto(dst []int) (int, deque.Status)
}

// recorder timestamps operations with a shared logical clock: an
// operation that returned before another was called has a smaller Return
// than the other's Call, which is all porcupine needs.
type recorder struct {
	clock atomic.Int64
	mu    sync.Mutex
	ops   []porcupine.Operation
	bad   []string // what a split batch got wrong that porcupine cannot see (addSplit)
}

func (r *recorder) add(client int, call int64, in linIn, out linOut) {
	ret := r.clock.Add(1)
	r.mu.Lock()
	r.ops = append(r.ops, porcupine.Operation{ClientId: client, Call: call, Return: ret, Input: in, Output: out})
	r.mu.Unlock()
}

// addSplit records a batch from a LIFO deque. There a batch is a sequence
// of single steals (one CAS each, as in crossbeam, because the owner pops
// without a CAS while more than one item is left), so the model checks it
// as one Steal per item, each free to fall anywhere in the batch's span;
// a batch that took nothing is one Steal with the batch's status. The
// order of the items in dst, which those steals do not pin down, is
// checked here: each claim takes the oldest item left, and the owner
// pushes ascending values, so dst must be strictly ascending.
func (r *recorder) addSplit(client int, call int64, st deque.Status, items []int) {
	ret := r.clock.Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := 1; i < len(items); i++ {
		if items[i] <= items[i-1] {
			r.bad = append(r.bad, fmt.Sprintf("client %d: a batch wrote %v to dst, not oldest first", client, items))
			break
		}
	}
	if len(items) == 0 {
		r.ops = append(r.ops, porcupine.Operation{ClientId: client, Call: call, Return: ret,
			Input: linIn{kind: linSteal}, Output: linOut{st: st}})
		return
	}
	for _, v := range items {
		r.ops = append(r.ops, porcupine.Operation{ClientId: client, Call: call, Return: ret,
			Input: linIn{kind: linSteal}, Output: linOut{v: v, st: deque.Success}})
	}
}

func encode(items []int) string {
	var b strings.Builder
	for _, v := range items {
		b.WriteByte(byte(v))
	}
	return b.String()
}

// runRoles runs the roles of one history, each on a fresh goroutine, and
// waits for them; if they have not finished by deadline it prints every
// goroutine's stack and fails t. The roles meet at a starter first.
func runRoles(t testing.TB, deadline time.Time, roles []func()) {
	t.Helper()
	var st starter
	var wg sync.WaitGroup
	for _, f := range roles {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st.wait(int32(len(roles)))
			f()
		}()
	}
	finished := make(chan struct{})
	go func() {
		wg.Wait()
		close(finished)
	}()
	select {
	case <-finished:
	case <-time.After(time.Until(deadline)):
		buf := make([]byte, 8<<20)
		buf = buf[:runtime.Stack(buf, true)]
		require.FailNow(t, "watchdog: a history did not finish by its deadline", "goroutines:\n%s", buf)
	}
}

// starter lines the roles up to start together: arriving goroutines spin
// (yielding now and then, as there are more of them than Ps); the last
// to arrive sets a start time a little ahead, and all spin until then.
//
// How much the roles really overlap depends on the machine and its load:
// on the 2-core box, shared with other builds, 0-4% of operations overlap
// another goroutine's without -race and 3-50% with it (the tests log the
// figure; an idle P there takes hundreds of microseconds to wake, longer
// than a history). The exactly-once stress tests supply the heavy
// contention; these histories supply an exact check of every outcome.
type starter struct {
	ready atomic.Int32
	at    atomic.Int64 // nanoseconds since lincheckEpoch; 0 until all arrived
}

var lincheckEpoch = time.Now()

func now() int64 { return int64(time.Since(lincheckEpoch)) }

func (s *starter) wait(n int32) {
	if s.ready.Add(1) == n {
		s.at.Store(now() + int64(20*time.Microsecond))
	}
	for i := 1; s.at.Load() == 0; i++ {
		if i%64 == 0 {
			runtime.Gosched()
		}
	}
	for at := s.at.Load(); now() < at; {
	}
}

// pause stalls for a random, short while between operations (mostly not
// at all, so that operations run back to back and overlap; sometimes a
// spin of up to a microsecond or a yield) so that the goroutines'
// operations fall across each other in varied ways.
func pause(rng *rand.Rand) {
	switch n := rng.IntN(64); {
	case n == 0:
		runtime.Gosched()
	case n < 16:
		for range rng.IntN(16) {
			spinSink.Add(1)
		}
	}
}

var spinSink atomic.Int64

// recordDeque runs one short history on d: the owner does ownerOps
// pushes and pops, each of thieves does thiefOps steals, a quarter of them
// Steal and the rest StealInto a slice of 1 to 4 items (now and then 64,
// more than half of anything a history holds). atomicBatch says whether
// d's batches are single atomic steps (FIFO) or sequences of steals
// (LIFO). It fails t if a split batch's order was wrong.
func recordDeque(t testing.TB, deadline time.Time, d linDeque, atomicBatch bool, seed uint64, ownerOps, thieves, thiefOps int) []porcupine.Operation {
	t.Helper()
	var r recorder
	roles := []func(){func() { // the owner
		rng := rand.New(rand.NewPCG(seed, 0))
		next := 1
		for range ownerOps {
			pause(rng)
			call := r.clock.Add(1)
			if rng.IntN(5) < 3 {
				d.Push(next)
				r.add(0, call, linIn{kind: linPush, v: next}, linOut{})
				next++
			} else {
				v, ok := d.Pop()
				r.add(0, call, linIn{kind: linPop}, linOut{v: v, ok: ok})
			}
		}
	}}
	for i := range thieves {
		roles = append(roles, func() {
			rng := rand.New(rand.NewPCG(seed, uint64(i)+1))
			into := make([]int, 64)
			for range thiefOps {
				pause(rng)
				size := 1 + rng.IntN(4)
				if rng.IntN(8) == 0 {
					size = len(into)
				}
				steal := rng.IntN(4) == 0
				call := r.clock.Add(1)
				if steal {
					v, st := d.Steal()
					r.add(i+1, call, linIn{kind: linSteal}, linOut{v: v, st: st})
					continue
				}
				n, st := d.StealInto(into[:size])
				took := slices.Clone(into[:n])
				if atomicBatch {
					r.add(i+1, call, linIn{kind: linBatch, limit: size}, linOut{st: st, took: encode(took)})
				} else {
					r.addSplit(i+1, call, st, took)
				}
			}
		})
	}
	runRoles(t, deadline, roles)
	assert.Empty(t, r.bad, "split batches that porcupine cannot judge")
	return r.ops
}

// recordInjector: two producers push distinct values; consumers Steal and
// TakeBatch into a slice of 1 to 4 items (now and then 64, more than a
// history holds).
func recordInjector(t testing.TB, deadline time.Time, q *deque.Injector[int], seed uint64, pushes, consumers, consumerOps int) []porcupine.Operation {
	var r recorder
	const producers = 2
	var roles []func()
	for p := range producers {
		roles = append(roles, func() {
			rng := rand.New(rand.NewPCG(seed, uint64(p)))
			for i := range pushes {
				pause(rng)
				v := 1 + p*100 + i
				call := r.clock.Add(1)
				q.Push(v)
				r.add(p, call, linIn{kind: linPush, v: v}, linOut{})
			}
		})
	}
	for k := range consumers {
		roles = append(roles, func() {
			rng := rand.New(rand.NewPCG(seed, uint64(producers+k)))
			into := make([]int, 64)
			for range consumerOps {
				pause(rng)
				size := 1 + rng.IntN(4)
				if rng.IntN(8) == 0 {
					size = len(into)
				}
				steal := rng.IntN(2) == 0
				call := r.clock.Add(1)
				if steal {
					v, st := q.Steal()
					r.add(producers+k, call, linIn{kind: linSteal}, linOut{v: v, st: st})
					continue
				}
				n, st := q.TakeBatch(into[:size])
				r.add(producers+k, call, linIn{kind: linBatch, limit: size}, linOut{st: st, took: encode(into[:n])})
			}
		})
	}
	runRoles(t, deadline, roles)
	return r.ops
}

// overlapping counts the operations that overlap in time with an
// operation of another client: a history with none checks nothing
// concurrent.
func overlapping(ops []porcupine.Operation) int {
	n := 0
	for i, a := range ops {
		for j, b := range ops {
			if i != j && a.ClientId != b.ClientId && a.Call < b.Return && b.Call < a.Return {
				n++
				break
			}
		}
	}
	return n
}

// checkHistory fails t, writing porcupine's visualisation, if ops is not
// linearizable. It returns false on an Unknown (checker timeout).
func checkHistory(t *testing.T, model porcupine.Model, ops []porcupine.Operation, what string) bool {
	t.Helper()
	res, info := porcupine.CheckOperationsVerbose(model, ops, 10*time.Second)
	switch res {
	case porcupine.Ok:
		return true
	case porcupine.Unknown:
		t.Logf("%s: checker timed out; history not judged", what)
		return false
	}
	path := filepath.Join(os.TempDir(), fmt.Sprintf("wsched-lincheck-%d.html", time.Now().UnixNano()))
	if err := porcupine.VisualizePath(model, info, path); err != nil {
		path = "(visualisation failed: " + err.Error() + ")"
	}
	var lines []string
	sorted := slices.Clone(ops)
	slices.SortFunc(sorted, func(a, b porcupine.Operation) int { return int(a.Call - b.Call) })
	for _, op := range sorted {
		lines = append(lines, fmt.Sprintf("  client %d [%3d,%3d] %s", op.ClientId, op.Call, op.Return, describeOp(op.Input, op.Output)))
	}
	require.FailNow(t, what+": history is not linearizable", "visualisation: %s\n%s", path, strings.Join(lines, "\n"))
	return false
}

func TestDequeLinearizable(t *testing.T) {
	histories := lincheckHistories()
	for _, fifo := range []bool{false, true} {
		t.Run(modeName(fifo), func(t *testing.T) {
			model := dequeModel(fifo)
			unknown, ops, over := 0, 0, 0
			deadline := time.Now().Add(watchdogLimit(t))
			recorded := make([][]porcupine.Operation, histories)
			names := make([]string, histories)
			for h := range histories {
				start := uint64(0)
				if h%2 == 1 {
					start = ^uint64(0) - 5 // crosses the wrap-around mid-history
				}
				d := deque.NewDequeAt[int](fifo, start)
				thieves := 2 + h%2
				recorded[h] = recordDeque(t, deadline, d, fifo, uint64(h), 16+h%9, thieves, 4+h%4)
				names[h] = fmt.Sprintf("history %d (%s)", h, startName(start))
			}
			for h, hist := range recorded {
				ops += len(hist)
				over += overlapping(hist)
				if !checkHistory(t, model, hist, names[h]) {
					unknown++
				}
			}
			t.Logf("%d histories, %d operations (%.1f per history, %.0f%% overlapping another client's), %d not judged",
				histories, ops, float64(ops)/float64(histories), 100*float64(over)/float64(ops), unknown)
		})
	}
}

func TestInjectorLinearizable(t *testing.T) {
	histories := lincheckHistories()
	model := queueModel()
	ops, over := 0, 0
	deadline := time.Now().Add(watchdogLimit(t))
	recorded := make([][]porcupine.Operation, histories)
	names := make([]string, histories)
	for h := range histories {
		// Tickets start a few below a block boundary, so batches meet it.
		start := uint64(deque.BlockCap*(h%3) - 5)
		if h%2 == 1 {
			start = ^uint64(0) - deque.BlockCap - 4 // -(BlockCap+5)
		}
		q := deque.NewInjectorAt[int](start)
		recorded[h] = recordInjector(t, deadline, q, uint64(h), 8+h%5, 2, 5+h%4)
		names[h] = fmt.Sprintf("history %d (start %#x)", h, start)
	}
	for h, hist := range recorded {
		ops += len(hist)
		over += overlapping(hist)
		checkHistory(t, model, hist, names[h])
	}
	t.Logf("%d histories, %d operations (%.1f per history, %.0f%% overlapping another client's)",
		histories, ops, float64(ops)/float64(histories), 100*float64(over)/float64(ops))
}

// The model must be able to fail: hand-made histories that no deque could
// produce are rejected, a few legal ones are accepted, and histories
// recorded from deliberately wrong deques are caught.

// op builds a history entry; ops at [c, r] with r < the next c are
// sequential.
func op(client int, call, ret int64, in linIn, out linOut) porcupine.Operation {
	return porcupine.Operation{ClientId: client, Call: call, Return: ret, Input: in, Output: out}
}

var (
	push   = func(v int) linIn { return linIn{kind: linPush, v: v} }
	pop    = linIn{kind: linPop}
	steal  = linIn{kind: linSteal}
	popped = func(v int) linOut { return linOut{v: v, ok: true} }
	none   = linOut{}
	stole  = func(v int) linOut { return linOut{v: v, st: deque.Success} }
	status = func(st deque.Status) linOut { return linOut{st: st} }
	batch  = func(size int) linIn { return linIn{kind: linBatch, limit: size} }
	took   = func(vs ...int) linOut { return linOut{st: deque.Success, took: encode(vs)} }
)

// pushes returns the owner's sequential pushes of 1..n, at [2i, 2i+1].
func pushes(n int) []porcupine.Operation {
	var ops []porcupine.Operation
	for i := range n {
		ops = append(ops, op(0, int64(2*i), int64(2*i+1), push(i+1), none))
	}
	return ops
}

// then appends ops to the owner's pushes of 1..n; their times start at 2n.
func then(n int, ops ...porcupine.Operation) []porcupine.Operation {
	return append(pushes(n), ops...)
}

func TestLinearizabilityModelRejects(t *testing.T) {
	lifo, fifo, queue := dequeModel(false), dequeModel(true), queueModel()
	cases := []struct {
		name  string
		model porcupine.Model
		ok    bool
		ops   []porcupine.Operation
	}{
		{"steal takes the newest", lifo, false, then(2, op(1, 4, 5, steal, stole(2)))},
		{"steal takes the oldest", lifo, true, then(2, op(1, 4, 5, steal, stole(1)))},
		{"LIFO pop takes the oldest", lifo, false, then(2, op(0, 4, 5, pop, popped(1)))},
		{"FIFO pop takes the newest", fifo, false, then(2, op(0, 4, 5, pop, popped(2)))},
		{"item taken twice", lifo, false, then(1, op(1, 2, 5, steal, stole(1)), op(0, 3, 4, pop, popped(1)))},
		{"empty while an item was there", lifo, false, then(1, op(1, 2, 3, steal, status(deque.Empty)), op(0, 4, 5, pop, popped(1)))},
		{"pop reports none while an item was there", lifo, false, then(1, op(0, 2, 3, pop, none), op(1, 4, 5, steal, stole(1)))},
		{"empty during a concurrent push", lifo, true, []porcupine.Operation{
			op(0, 0, 3, push(1), none), op(1, 1, 2, steal, status(deque.Empty)), op(1, 4, 5, steal, stole(1))}},
		{"retry at any time", lifo, true, then(1, op(1, 2, 3, steal, status(deque.Retry)), op(0, 4, 5, pop, popped(1)))},
		{"steal races the owner's last pop", lifo, true, then(1, op(1, 2, 5, steal, stole(1)), op(0, 3, 4, pop, none))},
		{"item stolen before it was pushed", lifo, false, []porcupine.Operation{
			op(1, 0, 1, steal, stole(1)), op(0, 2, 3, push(1), none)}},
		{"batch of more than half", fifo, false, then(3, op(1, 6, 7, batch(8), took(1, 2, 3)))},
		{"batch of half", fifo, true, then(3, op(1, 6, 7, batch(8), took(1, 2)))},
		{"batch of half, rounded up", fifo, true, then(5, op(1, 10, 11, batch(8), took(1, 2, 3)))},
		{"batch over its length", fifo, false, then(4, op(1, 8, 9, batch(1), took(1, 2)))},
		{"batch skips the oldest", fifo, false, then(3, op(1, 6, 7, batch(8), took(2)))},
		{"batch written newest first", fifo, false, then(4, op(1, 8, 9, batch(8), took(2, 1)))},
		{"batch of nothing called success", fifo, false, then(1, op(1, 2, 3, batch(8), took()))},
		{"batch reports empty while an item was there", fifo, false, then(1, op(1, 2, 3, batch(8), status(deque.Empty)))},
		{"batch retries at any time", fifo, true, then(1, op(1, 2, 3, batch(8), status(deque.Retry)), op(0, 4, 5, pop, popped(1)))},
		// Two of two items is more than half; two of three is half,
		// rounded up: linearizable only with the third push first.
		{"batch during a push", fifo, true, then(2, op(0, 4, 7, push(3), none), op(1, 5, 6, batch(8), took(1, 2)))},
		{"batch of two from two items", fifo, false, then(2, op(1, 4, 5, batch(8), took(1, 2)))},
		{"injector is FIFO", queue, false, then(2, op(1, 4, 5, steal, stole(2)))},
		{"injector pushes from two producers", queue, true, []porcupine.Operation{
			op(0, 0, 3, push(1), none), op(1, 1, 2, push(2), none), op(2, 4, 5, steal, stole(2)), op(2, 6, 7, steal, stole(1))}},
		{"injector batch takes all up to its length", queue, true, then(3, op(1, 6, 7, batch(3), took(1, 2, 3)))},
		{"injector batch over its length", queue, false, then(3, op(1, 6, 7, batch(2), took(1, 2, 3)))},
		{"injector batch out of order", queue, false, then(3, op(1, 6, 7, batch(3), took(1, 3, 2)))},
		{"injector batch skips the oldest", queue, false, then(3, op(1, 6, 7, batch(3), took(2, 3)))},
	}
	for _, c := range cases {
		assert.Equal(t, c.ok, porcupine.CheckOperations(c.model, c.ops), "%s: linearizable", c.name)
	}
}

// wrongDeque is a mutex-guarded deque with one deliberate defect.
type wrongDeque struct {
	mu    sync.Mutex
	items []int
	// fifo makes the owner pop the oldest item.
	fifo bool
	// stealNewest makes thieves take the newest item (the owner's end).
	stealNewest bool
	// falseEmpty makes thieves report Empty while one item is left.
	falseEmpty bool
	// dupLast makes thieves read the oldest item without removing it
	// when it is the last one: it is taken twice.
	dupLast bool
	// greedyBatch makes StealInto take min(n, len(dst)) items, not
	// about half.
	greedyBatch bool
	// reversedBatch makes StealInto write its (right-sized) batch newest
	// first.
	reversedBatch bool
}

func (w *wrongDeque) Push(v int) { w.mu.Lock(); w.items = append(w.items, v); w.mu.Unlock() }

func (w *wrongDeque) Pop() (int, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.items) == 0 {
		return 0, false
	}
	if w.fifo {
		v := w.items[0]
		w.items = w.items[1:]
		return v, true
	}
	v := w.items[len(w.items)-1]
	w.items = w.items[:len(w.items)-1]
	return v, true
}

func (w *wrongDeque) Steal() (int, deque.Status) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch n := len(w.items); {
	case n == 0, n == 1 && w.falseEmpty:
		return 0, deque.Empty
	case n == 1 && w.dupLast:
		return w.items[0], deque.Success
	case w.stealNewest:
		v := w.items[n-1]
		w.items = w.items[:n-1]
		return v, deque.Success
	}
	v := w.items[0]
	w.items = w.items[1:]
	return v, deque.Success
}

func (w *wrongDeque) StealInto(dst []int) (int, deque.Status) {
	if !w.greedyBatch && !w.reversedBatch {
		// A batch of one: the steal's own defect.
		v, st := w.Steal()
		if st == deque.Success {
			dst[0] = v
			return 1, st
		}
		return 0, st
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(w.items)
	if n == 0 {
		return 0, deque.Empty
	}
	k := min((n+1)/2, len(dst))
	if w.greedyBatch {
		k = min(n, len(dst))
	}
	copy(dst, w.items[:k])
	if w.reversedBatch {
		slices.Reverse(dst[:k])
	}
	w.items = w.items[k:]
	return k, deque.Success
}

func TestLinearizabilityCatchesWrongDeques(t *testing.T) {
	for _, c := range []struct {
		name string
		fifo bool // FIFO model, batches checked as atomic steps
		make func() *wrongDeque
	}{
		{"steals the newest", false, func() *wrongDeque { return &wrongDeque{stealNewest: true} }},
		{"reports empty with one item left", false, func() *wrongDeque { return &wrongDeque{falseEmpty: true} }},
		{"hands out the last item twice", false, func() *wrongDeque { return &wrongDeque{dupLast: true} }},
		{"takes more than half in a batch", true, func() *wrongDeque { return &wrongDeque{fifo: true, greedyBatch: true} }},
		{"writes a batch newest first", true, func() *wrongDeque { return &wrongDeque{fifo: true, reversedBatch: true} }},
	} {
		model := dequeModel(c.fifo)
		caught := 0
		const histories = 50
		deadline := time.Now().Add(watchdogLimit(t))
		var recorded [][]porcupine.Operation
		for h := range histories {
			recorded = append(recorded, recordDeque(t, deadline, c.make(), c.fifo, uint64(h), 20, 2, 6))
		}
		for _, hist := range recorded {
			if !porcupine.CheckOperations(model, hist) {
				caught++
			}
		}
		assert.NotZero(t, caught, "a deque that %s passed all %d histories: the model cannot fail", c.name, histories)
		t.Logf("a deque that %s: caught in %d of %d histories", c.name, caught, histories)
	}
}
