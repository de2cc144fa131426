package bucket

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wsched/wsched/internal/deque"
)

func TestArrivals(t *testing.T) {
	b := New[int]()
	if b.IsOpen() || !b.IsEnabled() || !b.IsEmpty() {
		t.Fatal("new bucket: want closed, enabled, empty")
	}
	if n, err := b.Add(1); n != 0 || err != nil {
		t.Fatalf("Add to closed = %d, %v; want 0 arrived", n, err)
	}
	if n, err := b.BulkAdd([]int{2, 3}); n != 0 || err != nil {
		t.Fatalf("BulkAdd to closed = %d, %v", n, err)
	}
	b.Open()
	if n, _ := b.Add(4); n != 1 {
		t.Fatalf("Add to open = %d, want 1", n)
	}
	if n, _ := b.BulkAddPriority([]int{5, 6}); n != 2 {
		t.Fatalf("BulkAddPriority to open = %d, want 2", n)
	}
	if n, _ := b.AddPriority(7); n != 1 {
		t.Fatalf("AddPriority to open = %d", n)
	}
	if n, _ := b.BulkAdd(nil); n != 0 {
		t.Fatalf("BulkAdd(nil) = %d", n)
	}
	if b.Len() != 7 || b.PriorityLen() != 3 || b.PriorityEmpty() {
		t.Fatalf("Len %d PriorityLen %d", b.Len(), b.PriorityLen())
	}
	b.Close()
	if n, _ := b.Add(8); n != 0 {
		t.Fatalf("Add after Close = %d", n)
	}
}

func TestTakeOrder(t *testing.T) {
	b := New[int]()
	b.Open()
	b.BulkAdd([]int{1, 2, 3, 4, 5})
	b.AddPriority(100)
	b.AddPriority(101)
	// Take: priority lane first, FIFO within a lane.
	for _, want := range []int{100, 101} {
		if v, st := b.TakePriority(); st != deque.Success || v != want {
			t.Fatalf("TakePriority = %d, %v; want %d", v, st, want)
		}
	}
	if _, st := b.TakePriority(); st != deque.Empty {
		t.Fatalf("TakePriority on empty lane = %v", st)
	}
	local := deque.New[int]()
	v, moved, st := b.TakeBatch(local, 3)
	if st != deque.Success || v != 1 || moved != 2 || local.Len() != 2 {
		t.Fatalf("TakeBatch(3) = %d, %d, %v; local %d", v, moved, st, local.Len())
	}
	if v, st := b.Take(); v != 4 || st != deque.Success {
		t.Fatalf("Take = %d, %v", v, st)
	}
	b.AddPriority(9)
	if v, _ := b.Take(); v != 9 {
		t.Fatalf("Take prefers the priority lane: got %d", v)
	}
	var got []int
	if n := b.Drain(func(v int) { got = append(got, v) }); n != 1 || got[0] != 5 {
		t.Fatalf("Drain = %d, %v", n, got)
	}
	for range 2 {
		local.Pop()
	}
	if !b.IsEmpty() || b.Drain(nil) != 0 {
		t.Fatal("not empty after Drain")
	}
}

func TestSentinel(t *testing.T) {
	b := New[string]()
	if b.HasSentinel() {
		t.Fatal("new bucket has a sentinel")
	}
	if _, ok := b.TakeSentinel(); ok {
		t.Fatal("TakeSentinel on none")
	}
	if !b.SetSentinel("a") || b.SetSentinel("b") {
		t.Fatal("SetSentinel: want first true, second false (at most one)")
	}
	if v, ok := b.TakeSentinel(); !ok || v != "a" || b.HasSentinel() {
		t.Fatalf("TakeSentinel = %q, %v", v, ok)
	}
	if !b.SetSentinel("c") {
		t.Fatal("SetSentinel after Take")
	}
}

// TestDisable: concurrent producers against Disable: every Add either fails
// with ErrDisabled or its packets are drained afterwards, none lost.
func TestDisable(t *testing.T) {
	b := New[int]()
	b.Open()
	var accepted atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := b.BulkAdd([]int{1, 2, 3}); err == nil {
					accepted.Add(3)
				} else if !errors.Is(err, ErrDisabled) {
					t.Error(err)
					return
				}
				if _, err := b.AddPriority(1); err == nil {
					accepted.Add(1)
				}
			}
		}()
	}
	time.Sleep(5 * time.Millisecond)
	var drained int
	watch(t, 30*time.Second, func() {
		b.Disable()
		drained = b.Drain(nil)
		close(stop)
		wg.Wait()
	})
	if b.IsEnabled() {
		t.Fatal("enabled after Disable")
	}
	if int64(drained) != accepted.Load() || !b.IsEmpty() {
		t.Fatalf("accepted %d, drained %d, left %d", accepted.Load(), drained, b.Len())
	}
	if _, err := b.Add(1); !errors.Is(err, ErrDisabled) {
		t.Fatalf("Add when disabled = %v", err)
	}
	b.Enable()
	if n, err := b.Add(1); n != 1 || err != nil {
		t.Fatalf("Add after Enable = %d, %v", n, err)
	}
}

// TestConcurrentExactlyOnce: producers add through every method while
// consumers take through every method; each value arrives exactly once.
func TestConcurrentExactlyOnce(t *testing.T) {
	const producers, per = 4, 20000
	b := New[int]()
	b.Open()
	seen := make([]atomic.Int32, producers*per)
	var taken atomic.Int64
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			base := p * per
			for i := 0; i < per; {
				switch i % 4 {
				case 0:
					b.Add(base + i)
					i++
				case 1:
					b.AddPriority(base + i)
					i++
				case 2:
					b.BulkAdd([]int{base + i})
					i++
				default:
					b.BulkAddPriority([]int{base + i})
					i++
				}
			}
		}()
	}
	done := make(chan struct{})
	record := func(v int) {
		seen[v].Add(1)
		taken.Add(1)
	}
	wait := consume(b, []takeWay{takePriorityFirst, takeBatchOf(8), takeOne}, record, done)
	watch(t, 30*time.Second, func() {
		wg.Wait()
		close(done)
		wait()
	})
	b.Drain(func(v int) { seen[v].Add(1); taken.Add(1) })
	if taken.Load() != producers*per {
		t.Fatalf("took %d, want %d", taken.Load(), producers*per)
	}
	for i := range seen {
		if seen[i].Load() != 1 {
			t.Fatalf("value %d taken %d times", i, seen[i].Load())
		}
	}
}

// TestLaneEmptiness: PriorityEmpty and NormalEmpty each see one lane only;
// IsEmpty sees both.
func TestLaneEmptiness(t *testing.T) {
	b := New[int]()
	if !b.PriorityEmpty() || !b.NormalEmpty() || !b.IsEmpty() {
		t.Fatal("a new bucket is not empty")
	}
	b.AddPriority(1)
	if b.PriorityEmpty() || !b.NormalEmpty() || b.IsEmpty() {
		t.Fatalf("priority packet only: PriorityEmpty %v NormalEmpty %v IsEmpty %v", b.PriorityEmpty(), b.NormalEmpty(), b.IsEmpty())
	}
	b.TakePriority()
	b.Add(2)
	if !b.PriorityEmpty() || b.NormalEmpty() || b.IsEmpty() {
		t.Fatalf("normal packet only: PriorityEmpty %v NormalEmpty %v IsEmpty %v", b.PriorityEmpty(), b.NormalEmpty(), b.IsEmpty())
	}
}

// TestReclaimWithAdds: Reclaim may run while other goroutines add (it
// holds them off or skips); consumers take only between reclaims, as a
// scheduler's parked workers do. Every packet arrives exactly once over
// many rounds of reused blocks.
func TestReclaimWithAdds(t *testing.T) {
	b := New[int]()
	b.Open()
	const rounds, adders, per = 50, 2, 700
	next := 0
	for r := range rounds {
		var wg sync.WaitGroup
		var done atomic.Bool
		for a := range adders {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range per {
					v := next + a*per + i
					if i%2 == 0 {
						b.Add(v)
					} else {
						b.BulkAdd([]int{v})
					}
				}
			}()
		}
		go func() { wg.Wait(); done.Store(true) }()
		for !done.Load() {
			b.Reclaim() // with adds in flight: holds them off or skips
		}
		seen := make(map[int]bool, adders*per)
		b.Drain(func(v int) {
			if seen[v] || v < next || v >= next+adders*per {
				t.Fatalf("round %d: packet %d duplicated or foreign", r, v)
			}
			seen[v] = true
		})
		if len(seen) != adders*per {
			t.Fatalf("round %d: %d packets, want %d", r, len(seen), adders*per)
		}
		b.Reclaim() // quiescent: the drained blocks become reusable
		next += adders * per
	}
}

// TestBulkAdders: every way of adding many packets queues them all, in
// order, on its lane, and reports them all as arrived.
func TestBulkAdders(t *testing.T) {
	const n = 200 // more than three 64-packet runs
	want := make([]int, n)
	for i := range want {
		want[i] = 1000 + i
	}
	bulk := func(prio bool) func(b *Bucket[int]) (int, error) {
		return func(b *Bucket[int]) (int, error) {
			a, err := b.StartBulk(prio)
			if err != nil {
				return 0, err
			}
			for lo := 0; lo < n; lo += 64 {
				a.Push(want[lo:min(lo+64, n)])
			}
			return a.End(), nil
		}
	}
	adders := map[string]func(b *Bucket[int]) (int, error){
		"BulkAdd":         func(b *Bucket[int]) (int, error) { return b.BulkAdd(want) },
		"BulkAddFunc":     func(b *Bucket[int]) (int, error) { return b.BulkAddFunc(n, func(i int) int { return want[i] }) },
		"BulkAddPriority": func(b *Bucket[int]) (int, error) { return b.BulkAddPriority(want) },
		"BulkAddPriorityFunc": func(b *Bucket[int]) (int, error) {
			return b.BulkAddPriorityFunc(n, func(i int) int { return want[i] })
		},
		"Bulk":         bulk(false),
		"BulkPriority": bulk(true),
	}
	for name, add := range adders {
		b := New[int]()
		b.Open()
		if got, err := add(b); got != n || err != nil {
			t.Fatalf("%s = %d, %v; want %d", name, got, err, n)
		}
		if prio, wantPrio := b.PriorityLen() != 0, strings.Contains(name, "Priority"); prio != wantPrio {
			t.Fatalf("%s: priority lane holds %d", name, b.PriorityLen())
		}
		for i := range n {
			if v, st := b.Take(); st != deque.Success || v != want[i] {
				t.Fatalf("%s: take %d = %d, %v; want %d", name, i, v, st, want[i])
			}
		}
		if !b.IsEmpty() {
			t.Fatalf("%s: %d left", name, b.Len())
		}
	}
}

// TestBulkGate: a Bulk holds the gate from StartBulk to End, so Disable
// waits for it; a disabled bucket refuses StartBulk; a closed bucket keeps
// the packets and reports none arrived.
func TestBulkGate(t *testing.T) {
	b := New[int]()
	a, err := b.StartBulk(false)
	if err != nil {
		t.Fatal(err)
	}
	a.Push([]int{1, 2})
	disabled := make(chan struct{})
	go func() { b.Disable(); close(disabled) }()
	select {
	case <-disabled:
		t.Fatal("Disable returned while a Bulk was in progress")
	case <-time.After(50 * time.Millisecond):
	}
	a.Push([]int{3})
	if got := a.End(); got != 0 {
		t.Fatalf("End on a closed bucket = %d, want 0", got)
	}
	select {
	case <-disabled:
	case <-time.After(10 * time.Second):
		t.Fatal("Disable still waits after End")
	}
	if b.Len() != 3 {
		t.Fatalf("Len = %d, want the 3 pushed", b.Len())
	}
	if got := a.End(); got != 0 {
		t.Fatalf("a second End = %d, want 0", got)
	}
	b.Enable()
	if b.gate.Load() != 0 {
		t.Fatalf("gate = %#x after Enable: a second End released it again", b.gate.Load())
	}
	func() {
		defer func() {
			if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "after End") {
				t.Fatalf("Push after End: recover() = %v, want a panic naming the misuse", r)
			}
		}()
		a.Push([]int{4})
	}()
	z, err := b.StartBulk(true)
	if err != nil {
		t.Fatal(err)
	}
	z.End()
	b.Disable()
	z, err = b.StartBulk(true)
	if !errors.Is(err, ErrDisabled) {
		t.Fatalf("StartBulk on a disabled bucket: %v", err)
	}
	if got := z.End(); got != 0 || b.gate.Load() != disabledBit {
		t.Fatalf("End of a refused Bulk = %d, gate %#x; want 0 and the gate untouched", got, b.gate.Load())
	}
}

// TestBulkAddFuncPanic: an at that panics leaves the runs staged before
// it queued and releases the gate, so Disable still returns.
func TestBulkAddFuncPanic(t *testing.T) {
	b := New[int]()
	b.Open()
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("at's panic did not propagate")
			}
		}()
		b.BulkAddFunc(200, func(i int) int {
			if i == 130 {
				panic("at")
			}
			return i
		})
	}()
	if b.Len() != 128 {
		t.Fatalf("after the panic: %d queued, want the two runs staged before it (128)", b.Len())
	}
	done := make(chan struct{})
	go func() { b.Disable(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Disable waits for ever: the panicking add kept the gate")
	}
}

// TestTakeInto: TakeInto takes from the normal lane only, oldest first, at
// most len(dst), and says Empty when the lane is.
func TestTakeInto(t *testing.T) {
	b := New[int]()
	b.Open()
	if _, err := b.BulkAdd([]int{1, 2, 3, 4, 5}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.AddPriority(99); err != nil {
		t.Fatal(err)
	}
	dst := make([]int, 3)
	if n, st := b.TakeInto(dst); n != 3 || st != deque.Success || dst[0] != 1 || dst[1] != 2 || dst[2] != 3 {
		t.Fatalf("TakeInto = %d, %v, %v; want 3, success, [1 2 3]", n, st, dst)
	}
	if n, st := b.TakeInto(dst); n != 2 || st != deque.Success || dst[0] != 4 || dst[1] != 5 {
		t.Fatalf("TakeInto = %d, %v, %v; want 2, success, [4 5 ...]", n, st, dst)
	}
	if n, st := b.TakeInto(dst); n != 0 || st != deque.Empty {
		t.Fatalf("TakeInto on an empty normal lane = %d, %v", n, st)
	}
	if v, st := b.TakePriority(); v != 99 || st != deque.Success {
		t.Fatalf("the priority lane lost its packet: %d, %v", v, st)
	}
}
