package tracebuf

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	require.Nil(t, w, "nil recorder returned a worker buffer")
	require.Nil(t, r.Control(), "nil recorder returned a control buffer")
	w.CycleBegin(1)
	w.CycleEnd(1)
	w.StageOpen(1, 1)
	w.StageClose(1)
	w.PacketBegin(1, 0, 0)
	w.PacketEnd()
	w.Steal(0, 1, 1)
	w.StealStamped(0, 1, 1, w.Stamp(), -1)
	require.Zero(t, w.Stamp(), "nil buffer's Stamp")
	w.Park()
	w.Unpark()
	w.WakeSent(1)
	w.WakeReceived(true)
	w.Counter(CounterParked, 0, 1)
	assert.Zero(t, r.Intern("x"), "nil recorder's Intern")
	assert.Zero(t, r.Now(), "nil recorder's Now")
	assert.Zero(t, r.Dropped(), "nil recorder's Dropped")
	assert.Nil(t, r.Snapshot(), "nil recorder's Snapshot")
	assert.Zero(t, r.Workers(), "nil recorder's Workers")
}

func TestEventsRoundTrip(t *testing.T) {
	r := NewRecorder(2, Options{Clock: fakeClock(10)})
	scan := r.Intern("Scan")
	require.Equal(t, NameID(1), scan, "first Intern")
	require.Equal(t, scan, r.Intern("Scan"), "Intern of a known name")
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
	require.Equal(t, 2, s.Workers())
	require.Len(t, s.Control().Events, 4, "control buffer")
	require.Len(t, s.Buffers[1].Events, 5, "worker 1's buffer")
	require.Empty(t, s.Buffers[0].Events, "worker 0's buffer")
	ev := s.Buffers[1].Events
	e := ev[0]
	assert.Equal(t, KindPacketBegin, e.Kind(), "packet begin: %v", e)
	assert.Equal(t, scan, e.Name(), "packet begin: %v", e)
	assert.Equal(t, 2, e.Stage(), "packet begin: %v", e)
	assert.Equal(t, uint64(99), e.Flow(), "packet begin: %v", e)
	assert.Equal(t, "Scan", s.Name(e.Name()), "packet begin: %v", e)
	e = ev[1]
	assert.Equal(t, KindSteal, e.Kind(), "steal: %v", e)
	assert.Equal(t, 0, e.Victim(), "steal: %v", e)
	assert.Equal(t, 5, e.Moved(), "steal: %v", e)
	assert.Equal(t, uint64(123), e.Flow(), "steal: %v", e)
	e = ev[2]
	assert.Equal(t, KindCounter, e.Kind(), "counter: %v", e)
	assert.Equal(t, CounterLocalLen, e.Counter(), "counter: %v", e)
	assert.Equal(t, 1, e.Index(), "counter: %v", e)
	assert.Equal(t, int64(-4), e.Value(), "counter: %v", e)
	e = ev[3]
	assert.Equal(t, KindWakeSent, e.Kind(), "wake: %v", e)
	assert.Equal(t, -1, e.Target(), "wake: %v", e)
	// The woken worker's blocked flag.
	w0 := r.Worker(0)
	w0.WakeReceived(true)
	w0.WakeReceived(false)
	if ev := r.Snapshot().Buffers[0].Events; assert.Len(t, ev, 2, "woken events") {
		assert.Equal(t, KindWakeReceived, ev[0].Kind(), "woken events: %v", ev)
		assert.True(t, ev[0].Blocked(), "woken events: %v, want blocked then not", ev)
		assert.False(t, ev[1].Blocked(), "woken events: %v, want blocked then not", ev)
	}
	ce := s.Control().Events
	e = ce[0]
	assert.Equal(t, KindCycleBegin, e.Kind(), "cycle: %v", e)
	assert.Equal(t, uint64(7), e.Cycle(), "cycle: %v", e)
	e = ce[1]
	assert.Equal(t, KindStageOpen, e.Kind(), "stage: %v", e)
	assert.Equal(t, 2, e.Stage(), "stage: %v", e)
	assert.Equal(t, "Closure", s.Name(e.Name()), "stage: %v", e)
	// All merges by time: the fake clock gives the recording order.
	var got []Kind
	var last int64
	for _, e := range s.All() {
		require.GreaterOrEqual(t, e.Time, last, "All not in time order at %v", e)
		last = e.Time
		got = append(got, e.Kind())
	}
	want := []Kind{KindCycleBegin, KindStageOpen, KindPacketBegin, KindSteal, KindCounter, KindWakeSent, KindPacketEnd, KindStageClose, KindCycleEnd}
	assert.Equal(t, want, got, "All order")
}

func TestStopPolicy(t *testing.T) {
	// 16 events per worker buffer (control gets MaxBytes/16 = 24 bytes, 1 event).
	const perWorker = 16
	maxBytes := 2*perWorker*eventSize + 2*perWorker*eventSize/15 + 64
	r := NewRecorder(2, Options{MaxBytes: maxBytes, Clock: fakeClock(1)})
	capacity := len(r.Worker(0).buf)
	require.GreaterOrEqual(t, capacity, perWorker, "worker buffer capacity")
	w := r.Worker(0)
	for i := 0; i < capacity+10; i++ {
		w.PacketBegin(1, 0, uint64(i))
	}
	require.Equal(t, uint64(10), r.Dropped(), "Recorder.Dropped")
	s := r.Snapshot()
	b := s.Buffers[0]
	require.Len(t, b.Events, capacity, "stop policy keeps the first events")
	require.Equal(t, uint64(10), b.Dropped, "buffer's Dropped")
	require.Equal(t, uint64(0), b.Events[0].Flow(), "stop policy keeps the oldest event")
	require.Equal(t, uint64(capacity-1), b.Events[capacity-1].Flow(), "stop policy's last kept event")
	last := b.Events[capacity-1].Time
	require.Greater(t, b.DropStart, last, "drops start after the last kept event")
	require.GreaterOrEqual(t, b.DropEnd, b.DropStart, "drop bounds")
	require.GreaterOrEqual(t, s.End, b.DropEnd, "snapshot end after the drops")
	require.Equal(t, uint64(10), s.Dropped(), "Snapshot.Dropped")
}

func TestOverwritePolicy(t *testing.T) {
	r := NewRecorder(1, Options{MaxBytes: 64 * eventSize, Overwrite: true, Clock: fakeClock(1)})
	w := r.Worker(0)
	capacity := len(w.buf)
	total := 3*capacity + 5
	for i := 0; i < total; i++ {
		w.PacketBegin(1, 0, uint64(i))
	}
	// Three wraps: two full laps counted.
	assert.Equal(t, uint64(2*capacity), r.Dropped(), "Dropped (lap granular)")
	b := r.Snapshot().Buffers[0]
	require.Equal(t, uint64(total-capacity), b.Dropped, "snapshot's dropped count")
	require.Len(t, b.Events, capacity, "snapshot keeps a full buffer")
	for i, e := range b.Events {
		require.Equal(t, uint64(total-capacity+i), e.Flow(), "event %d (oldest should be overwritten)", i)
	}
}

func TestZeroCapacity(t *testing.T) {
	for _, ow := range []bool{false, true} {
		r := NewRecorder(4, Options{MaxBytes: 1, Overwrite: ow})
		r.Worker(0).PacketBegin(1, 0, 0)
		r.Control().CycleBegin(1)
		assert.Equal(t, uint64(2), r.Dropped(), "overwrite=%v", ow)
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
	require.Len(t, ev, 2)
	require.GreaterOrEqual(t, ev[0].Time, before-slack, "begin before the clock read preceding it")
	require.LessOrEqual(t, ev[1].Time, after+slack, "end after the clock read following it")
	require.GreaterOrEqual(t, ev[1].Time-ev[0].Time, int64(2*time.Millisecond)-slack, "begin and end closer than the sleep between them")
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
	require.Zero(t, n, "hooks allocate per run")
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
		require.GreaterOrEqual(t, e.Time, last, "All out of order at %v", e)
		last = e.Time
		total++
	}
	require.Equal(t, workers*per*2, total, "events")
	require.Len(t, s.Names, 3, "names: \"\" and two types")
}

func TestMisusePanics(t *testing.T) {
	for name, f := range map[string]func(){
		"workers":  func() { NewRecorder(0, Options{}) },
		"maxbytes": func() { NewRecorder(1, Options{MaxBytes: -1}) },
		"index":    func() { NewRecorder(1, Options{MaxBytes: 1024}).Worker(1) },
	} {
		func() {
			defer func() {
				v, ok := recover().(string)
				assert.True(t, ok, "%s: panic value %v, want a string", name, v)
				assert.True(t, strings.HasPrefix(v, "trace: "), "%s: panic %q, want trace: prefix", name, v)
			}()
			f()
		}()
	}
}

func TestStrings(t *testing.T) {
	assert.Equal(t, "steal", KindSteal.String())
	assert.Equal(t, "Kind(200)", Kind(200).String())
	assert.Equal(t, "parked", CounterParked.String())
	assert.Equal(t, "CounterKind(9)", CounterKind(9).String())
	e := Event{Time: 5, kindArg: makeKindArg(KindCounter, uint32(CounterBucketDepth)), arg: 2, val: 9}
	assert.Equal(t, "5 counter bucket_depth[2]=9", e.String(), "Event.String")
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
	require.Len(t, ev, 6, "a steal and its origin per StealStamped")
	require.Empty(t, s.Buffers[0].Events, "Stamp must record nothing")
	require.Empty(t, s.Control().Events, "Stamp must record nothing")
	want := []struct {
		flow uint64
		born int64
		from int
	}{{7, 100, 0}, {8, 100, -1}, {9, 150, 0}}
	for i, w := range want {
		st, o := ev[2*i], ev[2*i+1]
		assert.Equal(t, KindSteal, st.Kind(), "steal %d: %v", i, st)
		assert.Equal(t, w.flow, st.Flow(), "steal %d: %v", i, st)
		assert.Equal(t, 0, st.Victim(), "steal %d: %v", i, st)
		assert.Equal(t, int64(150), st.Time, "steal %d: %v", i, st)
		assert.Equal(t, KindStealOrigin, o.Kind(), "origin %d: %v", i, o)
		assert.Equal(t, w.born, o.Born(), "origin %d: %v", i, o)
		assert.Equal(t, w.from, o.From(), "origin %d: %v", i, o)
		assert.Equal(t, int64(150), o.Time, "origin %d: %v", i, o)
	}
	assert.Equal(t, "150 steal_origin born=100 from=0", ev[1].String())
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
	require.Len(t, ev, 4)
	// Snapshot times count from the recorder's first reading (0 here).
	assert.Equal(t, born, ev[1].Born(), "born rebuilt")
	assert.Equal(t, born2, ev[3].Born(), "born across a wrap rebuilt")
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
	require.Len(t, ev, capacity)
	require.Equal(t, KindSteal, ev[capacity-1].Kind(), "the steal is kept in the last slot: %v", ev[capacity-1])
	require.Equal(t, uint64(5), ev[capacity-1].Flow(), "the first steal is kept: %v", ev[capacity-1])
	require.Equal(t, uint64(3), s.Buffers[0].Dropped, "its origin and the whole second steal dropped")
}

// TestLast: Last is the newest event's time, 0 before any, and wraps with
// the buffer in overwrite mode.
func TestLast(t *testing.T) {
	var now int64
	r := NewRecorder(1, Options{Clock: func() int64 { return now }})
	w := r.Worker(0)
	require.Zero(t, w.Last(), "Last of an empty buffer")
	now = 42
	w.Park()
	now = 50
	require.Equal(t, int64(42), w.Last(), "the event's time, not the clock's")
	var nilBuf *Buf
	require.Zero(t, nilBuf.Last(), "Last on a nil buffer")
}
