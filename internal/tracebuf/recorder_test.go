package tracebuf

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wsched/wsched/internal/watchdog"
)

// fakeClock returns a Clock that advances by step ns per call.
func fakeClock(step int64) func() int64 {
	var t atomic.Int64
	return func() int64 { return t.Add(step) }
}

func TestNilSafe(t *testing.T) {
	var r *Recorder
	w := r.Worker(3)
	if w != nil || r.Control() != nil {
		t.Fatal("nil recorder returned a buffer")
	}
	w.CycleBegin(1)
	w.CycleEnd(1)
	w.StageOpen(1, 1)
	w.StageClose(1)
	w.PacketBegin(1, 0, 0)
	w.PacketEnd()
	w.Steal(0, 1, 1)
	w.StealStamped(0, 1, 1, w.Stamp(), -1)
	if w.Stamp() != 0 {
		t.Fatal("nil buffer's Stamp is not 0")
	}
	w.Park()
	w.Unpark()
	w.WakeSent(1)
	w.WakeReceived(true)
	w.Counter(CounterParked, 0, 1)
	if r.Intern("x") != 0 || r.Now() != 0 || r.Dropped() != 0 || r.Snapshot() != nil || r.Workers() != 0 {
		t.Fatal("nil recorder methods not zero")
	}
}

func TestEventsRoundTrip(t *testing.T) {
	r := NewRecorder(2, Options{Clock: fakeClock(10)})
	scan := r.Intern("Scan")
	if again := r.Intern("Scan"); again != scan || scan != 1 {
		t.Fatalf("Intern: got %d then %d, want 1 twice", scan, again)
	}
	closure := r.Intern("Closure")
	c, w := r.Control(), r.Worker(1)
	c.CycleBegin(7)
	c.StageOpen(2, closure)
	w.PacketBegin(scan, 2, 99)
	w.Steal(0, 5, 123)
	w.Counter(CounterLocalLen, 1, -4)
	w.WakeSent(-1)
	w.PacketEnd()
	c.StageClose(2)
	c.CycleEnd(7)
	s := r.Snapshot()
	if s.Workers() != 2 || len(s.Control().Events) != 4 || len(s.Buffers[1].Events) != 5 || len(s.Buffers[0].Events) != 0 {
		t.Fatalf("unexpected buffer sizes: %+v", s.Buffers)
	}
	ev := s.Buffers[1].Events
	if e := ev[0]; e.Kind() != KindPacketBegin || e.Name() != scan || e.Stage() != 2 || e.Flow() != 99 || s.Name(e.Name()) != "Scan" {
		t.Errorf("packet begin: %v", e)
	}
	if e := ev[1]; e.Kind() != KindSteal || e.Victim() != 0 || e.Moved() != 5 || e.Flow() != 123 {
		t.Errorf("steal: %v", e)
	}
	if e := ev[2]; e.Kind() != KindCounter || e.Counter() != CounterLocalLen || e.Index() != 1 || e.Value() != -4 {
		t.Errorf("counter: %v", e)
	}
	if e := ev[3]; e.Kind() != KindWakeSent || e.Target() != -1 {
		t.Errorf("wake: %v", e)
	}
	// The woken worker's blocked flag.
	w0 := r.Worker(0)
	w0.WakeReceived(true)
	w0.WakeReceived(false)
	if ev := r.Snapshot().Buffers[0].Events; len(ev) != 2 || ev[0].Kind() != KindWakeReceived || !ev[0].Blocked() || ev[1].Blocked() {
		t.Errorf("woken events: %v, want blocked then not", ev)
	}
	ce := s.Control().Events
	if e := ce[0]; e.Kind() != KindCycleBegin || e.Cycle() != 7 {
		t.Errorf("cycle: %v", e)
	}
	if e := ce[1]; e.Kind() != KindStageOpen || e.Stage() != 2 || s.Name(e.Name()) != "Closure" {
		t.Errorf("stage: %v", e)
	}
	// All merges by time: the fake clock gives the recording order.
	var got []Kind
	var last int64
	for _, e := range s.All() {
		if e.Time < last {
			t.Fatalf("All not in time order at %v", e)
		}
		last = e.Time
		got = append(got, e.Kind())
	}
	want := fmt.Sprint([]Kind{KindCycleBegin, KindStageOpen, KindPacketBegin, KindSteal, KindCounter, KindWakeSent, KindPacketEnd, KindStageClose, KindCycleEnd})
	if fmt.Sprint(got) != want {
		t.Errorf("All order\n got %v\nwant %v", got, want)
	}
}

func TestStopPolicy(t *testing.T) {
	// 16 events per worker buffer (control gets MaxBytes/16 = 24 bytes, 1 event).
	const perWorker = 16
	maxBytes := 2*perWorker*eventSize + 2*perWorker*eventSize/15 + 64
	r := NewRecorder(2, Options{MaxBytes: maxBytes, Clock: fakeClock(1)})
	capacity := len(r.Worker(0).buf)
	if capacity < perWorker {
		t.Fatalf("capacity %d", capacity)
	}
	w := r.Worker(0)
	for i := 0; i < capacity+10; i++ {
		w.PacketBegin(1, 0, uint64(i))
	}
	if d := r.Dropped(); d != 10 {
		t.Fatalf("Dropped = %d, want 10", d)
	}
	s := r.Snapshot()
	b := s.Buffers[0]
	if len(b.Events) != capacity || b.Dropped != 10 || b.Events[0].Flow() != 0 || b.Events[capacity-1].Flow() != uint64(capacity-1) {
		t.Fatalf("stop policy kept %d events (first %v), dropped %d", len(b.Events), b.Events[0], b.Dropped)
	}
	if b.DropStart <= b.Events[capacity-1].Time || b.DropEnd < b.DropStart || s.End < b.DropEnd {
		t.Fatalf("drop bounds %d..%d after last %d, end %d", b.DropStart, b.DropEnd, b.Events[capacity-1].Time, s.End)
	}
	if s.Dropped() != 10 {
		t.Fatalf("Snapshot.Dropped = %d", s.Dropped())
	}
}

func TestOverwritePolicy(t *testing.T) {
	r := NewRecorder(1, Options{MaxBytes: 64 * eventSize, Overwrite: true, Clock: fakeClock(1)})
	w := r.Worker(0)
	capacity := len(w.buf)
	total := 3*capacity + 5
	for i := 0; i < total; i++ {
		w.PacketBegin(1, 0, uint64(i))
	}
	if d := r.Dropped(); d != uint64(2*capacity) { // three wraps: two full laps counted
		t.Errorf("Dropped (lap granular) = %d, want %d", d, 2*capacity)
	}
	b := r.Snapshot().Buffers[0]
	if b.Dropped != uint64(total-capacity) || len(b.Events) != capacity {
		t.Fatalf("dropped %d kept %d, want %d and %d", b.Dropped, len(b.Events), total-capacity, capacity)
	}
	for i, e := range b.Events {
		if want := uint64(total - capacity + i); e.Flow() != want {
			t.Fatalf("event %d flow %d, want %d (oldest should be overwritten)", i, e.Flow(), want)
		}
	}
}

func TestZeroCapacity(t *testing.T) {
	for _, ow := range []bool{false, true} {
		r := NewRecorder(4, Options{MaxBytes: 1, Overwrite: ow})
		r.Worker(0).PacketBegin(1, 0, 0)
		r.Control().CycleBegin(1)
		if r.Dropped() != 2 {
			t.Errorf("overwrite=%v: Dropped = %d, want 2", ow, r.Dropped())
		}
	}
}

func TestRealClock(t *testing.T) {
	r := NewRecorder(1, Options{MaxBytes: 1 << 16})
	w := r.Worker(0)
	before := r.Now()
	w.PacketBegin(1, 0, 0)
	time.Sleep(2 * time.Millisecond)
	w.PacketEnd()
	after := r.Now()
	ev := r.Snapshot().Buffers[0].Events
	// Calibration error is bounded by the clock reads around it, unless a
	// preemption lands between two paired reads; allow 500 µs.
	const slack = 500_000
	if ev[0].Time < before-slack || ev[1].Time > after+slack || ev[1].Time-ev[0].Time < int64(2*time.Millisecond)-slack {
		t.Fatalf("times %d, %d outside [%d, %d] or too close", ev[0].Time, ev[1].Time, before, after)
	}
}

func TestHooksDoNotAllocate(t *testing.T) {
	r := NewRecorder(1, Options{MaxBytes: 1 << 20, Overwrite: true})
	w := r.Worker(0)
	n := testing.AllocsPerRun(1000, func() {
		w.PacketBegin(1, 2, 3)
		w.Steal(1, 2, 3)
		w.StealStamped(1, 2, 3, w.Stamp(), 0)
		w.Counter(CounterParked, 0, 1)
		w.PacketEnd()
	})
	if n != 0 {
		t.Fatalf("hooks allocate %v per run", n)
	}
}

// TestConcurrentWorkers has each worker goroutine write its own buffer while
// others intern names; run under -race it checks the ownership model.
func TestConcurrentWorkers(t *testing.T) {
	const workers, per = 4, 2000
	r := NewRecorder(workers, Options{MaxBytes: 1 << 20})
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := r.Worker(i)
			name := r.Intern(fmt.Sprintf("type%d", i%2))
			for j := 0; j < per; j++ {
				w.PacketBegin(name, 0, 0)
				w.PacketEnd()
			}
			_ = r.Dropped()
		}()
	}
	watchdog.Watch(t, 30*time.Second, wg.Wait)
	s := r.Snapshot()
	total := 0
	var last int64
	for _, e := range s.All() {
		if e.Time < last {
			t.Fatal("All out of order")
		}
		last = e.Time
		total++
	}
	if total != workers*per*2 || len(s.Names) != 3 {
		t.Fatalf("got %d events, %d names", total, len(s.Names))
	}
}

func TestMisusePanics(t *testing.T) {
	for name, f := range map[string]func(){
		"workers":  func() { NewRecorder(0, Options{}) },
		"maxbytes": func() { NewRecorder(1, Options{MaxBytes: -1}) },
		"index":    func() { NewRecorder(1, Options{MaxBytes: 1024}).Worker(1) },
	} {
		func() {
			defer func() {
				if v, ok := recover().(string); !ok || len(v) < 7 || v[:7] != "trace: " {
					t.Errorf("%s: panic %v, want trace: prefix", name, v)
				}
			}()
			f()
		}()
	}
}

func TestStrings(t *testing.T) {
	if KindSteal.String() != "steal" || Kind(200).String() != "Kind(200)" || CounterParked.String() != "parked" || CounterKind(9).String() != "CounterKind(9)" {
		t.Fatal("String methods")
	}
	e := Event{Time: 5, kindArg: makeKindArg(KindCounter, uint32(CounterBucketDepth)), arg: 2, val: 9}
	if e.String() != "5 counter bucket_depth[2]=9" {
		t.Fatalf("Event.String = %q", e.String())
	}
}

// TestStealStamped: a stamped steal records a KindSteal and its
// KindStealOrigin at one time; the snapshot converts the birth stamp to
// nanoseconds like a time, clamped to [0, the steal].
func TestStealStamped(t *testing.T) {
	var now int64
	r := NewRecorder(2, Options{Clock: func() int64 { return now }})
	w0, w1, c := r.Worker(0), r.Worker(1), r.Control()
	now = 100
	born0 := w0.Stamp() // spawned on worker 0
	bornC := c.Stamp()  // added from outside
	now = 150
	w1.StealStamped(0, 3, 7, born0, 0)
	w1.StealStamped(0, 1, 8, bornC, -1)
	w1.StealStamped(0, 1, 9, 400, 0) // a stamp later than the steal (clock skew)
	s := r.Snapshot()
	ev := s.Buffers[1].Events
	if len(ev) != 6 || len(s.Buffers[0].Events) != 0 || len(s.Control().Events) != 0 {
		t.Fatalf("events %v; Stamp must record nothing", ev)
	}
	want := []struct {
		flow uint64
		born int64
		from int
	}{{7, 100, 0}, {8, 100, -1}, {9, 150, 0}}
	for i, w := range want {
		st, o := ev[2*i], ev[2*i+1]
		if st.Kind() != KindSteal || st.Flow() != w.flow || st.Victim() != 0 || st.Time != 150 {
			t.Errorf("steal %d: %v", i, st)
		}
		if o.Kind() != KindStealOrigin || o.Born() != w.born || o.From() != w.from || o.Time != 150 {
			t.Errorf("origin %d: %v, want born %d from %d", i, o, w.born, w.from)
		}
	}
	if got := ev[1].String(); got != "150 steal_origin born=100 from=0" {
		t.Errorf("String: %q", got)
	}
}

// TestStealStampedLowBits: a scheduler may keep only the low StampBits bits
// of a stamp; the recorder rebuilds the full time from the steal's clock.
func TestStealStampedLowBits(t *testing.T) {
	var now int64
	r := NewRecorder(1, Options{Clock: func() int64 { return now }})
	w := r.Worker(0)
	const mask = 1<<StampBits - 1
	now = 5<<StampBits + 1000 // the clock is past several wraps of the low bits
	born := w.Stamp()
	now += 123456
	w.StealStamped(0, 1, 1, born&mask, 0)
	now = 7<<StampBits + 10 // stolen just after a wrap of the low bits
	born2 := now - 50
	w.StealStamped(0, 1, 2, born2&mask, 0)
	ev := r.Snapshot().Buffers[0].Events
	if len(ev) != 4 {
		t.Fatalf("events %v", ev)
	}
	// Snapshot times count from the recorder's first reading (0 here).
	if got := ev[1].Born(); got != born {
		t.Errorf("born rebuilt as %d, want %d", got, born)
	}
	if got := ev[3].Born(); got != born2 {
		t.Errorf("born across a wrap rebuilt as %d, want %d", got, born2)
	}
}

// TestStealStampedFull: with one slot left in stop mode the steal is kept
// and its origin dropped and counted.
func TestStealStampedFull(t *testing.T) {
	r := NewRecorder(1, Options{MaxBytes: 16 * 64 * eventSize / 15, Clock: fakeClock(1)})
	w := r.Worker(0)
	capacity := len(w.buf)
	for range capacity - 1 {
		w.PacketEnd()
	}
	w.StealStamped(0, 1, 5, 1, 0)
	w.StealStamped(0, 1, 6, 1, 0)
	s := r.Snapshot()
	ev := s.Buffers[0].Events
	if len(ev) != capacity || ev[capacity-1].Kind() != KindSteal || ev[capacity-1].Flow() != 5 || s.Buffers[0].Dropped != 3 {
		t.Fatalf("last event %v, dropped %d; want the steal kept, 3 dropped", ev[capacity-1], s.Buffers[0].Dropped)
	}
}

// TestLast: Last is the newest event's time, 0 before any, and wraps with
// the buffer in overwrite mode.
func TestLast(t *testing.T) {
	var now int64
	r := NewRecorder(1, Options{Clock: func() int64 { return now }})
	w := r.Worker(0)
	if got := w.Last(); got != 0 {
		t.Fatalf("Last of an empty buffer = %d", got)
	}
	now = 42
	w.Park()
	now = 50
	if got := w.Last(); got != 42 {
		t.Fatalf("Last = %d, want 42 (the event's time, not the clock's)", got)
	}
	var nilBuf *Buf
	if nilBuf.Last() != 0 {
		t.Fatal("Last on a nil buffer")
	}
}
