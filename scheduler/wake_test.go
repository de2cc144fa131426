package scheduler

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// holdCycle starts a cycle kept open by a blocker on worker 0 and waits
// until every other worker is parked. It returns a function that ends the
// cycle and checks Run's result.
func holdCycle(t *testing.T, s *Scheduler) (end func()) {
	t.Helper()
	release := make(chan struct{})
	started := make(chan int, 1)
	if err := s.AddDesignated(0, blocker{started: started, release: release}); err != nil {
		t.Fatal(err)
	}
	runErr := make(chan error, 1)
	go func() { runErr <- s.Run(bg) }()
	<-started
	waitParked(t, s, s.Workers()-1)
	return func() {
		close(release)
		var err error
		watch(t, 30*time.Second, func() { err = <-runErr })
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	}
}

// TestWakePolicies: with n-1 workers parked mid-cycle, a BulkAdd of k
// packets wakes 1 (one), all parked (all), min(k, parked) (n), or 1 when
// nobody searches (searcher).
func TestWakePolicies(t *testing.T) {
	const workers = 4
	cases := []struct {
		policy WakePolicy
		k      int
		want   int
	}{
		{WakeOne, 5, 1},
		{WakeAll, 1, workers - 1},
		{WakeN, 2, 2},
		{WakeN, 10, workers - 1},
		{WakeSearcher, 10, 1},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%v-%d", c.policy, c.k), func(t *testing.T) {
			s := newSched(t, Config{Workers: workers, Stages: []string{"a"}, Wake: WakeOne})
			end := holdCycle(t, s)
			before := s.Stats().ExternalWakes
			release := make(chan struct{})
			ps := make([]Packet, c.k)
			for i := range ps {
				ps[i] = blocker{release: release} // keep the woken busy: no chains
			}
			if err := s.BulkAdd(Unconstrained, ps, WithWake(c.policy)); err != nil {
				t.Fatal(err)
			}
			got := int(s.Stats().ExternalWakes - before)
			close(release)
			end()
			if got != c.want {
				t.Fatalf("BulkAdd(%d packets, %v) woke %d, want %d", c.k, c.policy, got, c.want)
			}
		})
	}
}

// TestAddWakesOne: a single Add to an open stage wakes one parked worker;
// to a closed stage, nobody.
func TestAddWakesOne(t *testing.T) {
	s := newSched(t, Config{Workers: 3, Stages: []string{"a", "b"}, Wake: WakeAll})
	end := holdCycle(t, s)
	var n atomic.Int64
	w0 := s.Stats().ExternalWakes
	if err := s.Add(2, counter{&n}); err != nil { // stage 2 is closed
		t.Fatal(err)
	}
	w1 := s.Stats().ExternalWakes
	if err := s.Add(1, counter{&n}); err != nil { // stage 1 is open
		t.Fatal(err)
	}
	w2 := s.Stats().ExternalWakes
	end()
	if w1 != w0 || w2 != w1+1 || n.Load() != 2 {
		t.Fatalf("wakes: closed stage %d, open stage %d; ran %d", w1-w0, w2-w1, n.Load())
	}
}

// TestDesignatedWakesItsWorker: designated work wakes its own worker
// promptly (the MMTk #1160 fix), mid-cycle and at the start of a cycle,
// even while another worker searches (which throttles ordinary wake-ups).
// Without the wake-up nothing would run it until the held cycle ends.
func TestDesignatedWakesItsWorker(t *testing.T) {
	s := newSched(t, Config{Workers: 4, Stages: []string{"a"}})
	end := holdCycle(t, s)
	for i, target := range []int{3, 1, 2, 3} {
		searcher := i == 3
		if searcher {
			s.nSearching.Add(1) // as far as wakers can tell, someone searches
		}
		ran := make(chan int, 1)
		received := s.Stats().Workers[target].WakesReceived
		t0 := time.Now()
		if err := s.AddDesignated(target, fn(func(w *Worker) { ran <- w.ID() })); err != nil {
			t.Fatal(err)
		}
		select {
		case id := <-ran:
			t.Logf("designated for parked worker %d (searcher %v) started after %v", target, searcher, time.Since(t0))
			if id != target {
				t.Fatalf("designated for %d ran on %d", target, id)
			}
		case <-time.After(10 * time.Second): // µs normally; a hang guard, not a speed test
			t.Fatalf("designated work for parked worker %d did not start within 10s", target)
		}
		if searcher {
			s.nSearching.Add(-1)
		}
		waitParked(t, s, s.Workers()-1)
		if got := s.Stats().Workers[target].WakesReceived - received; got != 1 {
			t.Fatalf("worker %d received %d wake-ups for its designated packet, want 1", target, got)
		}
	}
	end()
	// Before Run: each worker gets one; each runs on its own worker.
	var bad atomic.Int64
	for i := range s.Workers() {
		s.AddDesignated(i, fn(func(w *Worker) {
			if w.ID() != i || w.Stage() != Unconstrained {
				bad.Add(1)
			}
		}))
	}
	if err := runCycle(t, s); err != nil || bad.Load() != 0 {
		t.Fatalf("Run = %v, %d on the wrong worker", err, bad.Load())
	}
}

// TestPriorityLane: a priority packet is taken before normal packets and
// alone, never in a batch with them.
func TestPriorityLane(t *testing.T) {
	s := newSched(t, Config{Workers: 1, Stages: []string{"a"}})
	var order []string
	var alone bool
	for i := range 50 {
		s.Add(1, fn(func(*Worker) { order = append(order, fmt.Sprint("n", i)) }))
	}
	s.AddPriority(1, fn(func(w *Worker) {
		order = append(order, "p")
		alone = w.local.IsEmpty() && w.privTail == w.privHead
	}))
	s.BulkAddPriority(1, []Packet{fn(func(*Worker) { order = append(order, "p2") })})
	if err := runCycle(t, s); err != nil {
		t.Fatal(err)
	}
	if len(order) != 52 || order[0] != "p" || order[1] != "p2" || !alone {
		t.Fatalf("order %v, priority taken alone: %v", order[:min(len(order), 4)], alone)
	}
}

// TestPriorityLaneWorkers: with 4 workers and every wake policy, a
// priority packet queued after 200 normal ones in a closed stage is taken
// before the workers are all taken up by normal packets when the stage
// opens (one of the first free workers takes it), and runs alone: its
// worker holds no other packet. Each normal packet waits until the
// priority packet has started; if no worker took it first, every worker
// would end up waiting in a normal packet and the test fails after its
// deadline. (It used to count how many normal packets had started before
// the priority packet did, which a worker preempted between taking and
// running it could push past any bound: 16 once, under -race with four
// workers on two CPUs.)
func TestPriorityLaneWorkers(t *testing.T) {
	const workers, normal = 4, 200
	for _, wake := range []WakePolicy{WakeOne, WakeAll, WakeN, WakeSearcher} {
		s := newSched(t, Config{Workers: workers, Stages: []string{"a", "b"}, Wake: wake})
		for range 3 {
			var started, timedOut atomic.Bool
			alone := false
			ps := make([]Packet, normal)
			for i := range ps {
				ps[i] = fn(func(*Worker) {
					for deadline := time.Now().Add(10 * time.Second); !started.Load() && !timedOut.Load(); {
						if time.Now().After(deadline) {
							timedOut.Store(true)
							return
						}
						runtime.Gosched()
					}
				})
			}
			if err := s.BulkAdd(2, ps); err != nil {
				t.Fatal(err)
			}
			if err := s.AddPriority(2, fn(func(w *Worker) {
				started.Store(true)
				alone = w.local.IsEmpty() && w.privTail == w.privHead
			})); err != nil {
				t.Fatal(err)
			}
			s.Add(1, sleeper{time.Millisecond}) // stage 1: the others park
			if err := runCycle(t, s); err != nil {
				t.Fatal(err)
			}
			if timedOut.Load() || !alone {
				t.Fatalf("%v: every worker was busy with normal packets before one took the priority packet (%v), or it did not run alone (alone %v)", wake, timedOut.Load(), alone)
			}
		}
	}
}

// TestSentinelLoop: a sentinel that re-arms runs once per drain of its
// stage, and the next stage opens only after the last round.
func TestSentinelLoop(t *testing.T) {
	s := newSched(t, Config{Workers: 3, Stages: []string{"loop", "after"}})
	var rounds, work, afterSawRounds atomic.Int64
	var sentinel fn
	sentinel = func(w *Worker) {
		if rounds.Add(1) < 5 {
			for range 10 {
				w.Spawn(counter{&work})
			}
			if err := s.SetSentinel(1, sentinel); err != nil {
				t.Error(err)
			}
		}
	}
	s.SetSentinel(1, sentinel) // stage 1 has no other packets: the sentinel opens it
	s.Add(2, fn(func(*Worker) { afterSawRounds.Store(rounds.Load()) }))
	if err := runCycle(t, s); err != nil {
		t.Fatal(err)
	}
	if rounds.Load() != 5 || work.Load() != 40 || afterSawRounds.Load() != 5 {
		t.Fatalf("rounds %d work %d; the later stage saw %d rounds", rounds.Load(), work.Load(), afterSawRounds.Load())
	}
	st := s.Stats()
	if st.Stages[1].Opens != 1 || st.Stages[2].Opens != 1 || st.Stages[1].LastMakespan <= 0 {
		t.Fatalf("stage stats %+v", st.Stages)
	}
}

// TestSpawnParallelism: one packet spawns many slow children while the
// other workers are parked; under every wake × steal pair the surplus rule
// wakes them, so every worker runs children. (A thief that took one packet
// and left the victim's surplus behind used to wake nobody: under StealOne
// with WakeOne or WakeN two of four workers ran everything.)
func TestSpawnParallelism(t *testing.T) {
	const workers, children = 4, 200
	for _, wake := range []WakePolicy{WakeOne, WakeAll, WakeN, WakeSearcher} {
		for _, steal := range []StealPolicy{StealOne(), StealHalf(), StealBatch(4)} {
			t.Run(fmt.Sprintf("%v/%v", wake, steal), func(t *testing.T) {
				s := newSched(t, Config{Workers: workers, Stages: []string{"a"}, Wake: wake, Steal: steal})
				var cur, peak, n atomic.Int64
				child := fn(func(*Worker) {
					c := cur.Add(1)
					for p := peak.Load(); c > p && !peak.CompareAndSwap(p, c); p = peak.Load() {
					}
					time.Sleep(time.Millisecond) // 50 ms of work per worker: time for the wake chain under load
					cur.Add(-1)
					n.Add(1)
				})
				s.Add(1, fn(func(w *Worker) {
					for range children { // a few µs: done before anyone wakes
						w.Spawn(child)
					}
				}))
				if err := runCycle(t, s); err != nil {
					t.Fatal(err)
				}
				st := s.Stats()
				per := make([]uint64, workers)
				for i, w := range st.Workers {
					per[i] = w.Packets
				}
				t.Logf("peak concurrency %d, packets per worker %v", peak.Load(), per)
				if n.Load() != children {
					t.Fatalf("ran %d children, want %d", n.Load(), children)
				}
				for i, k := range per {
					if k == 0 {
						t.Fatalf("worker %d ran nothing (per worker %v, peak %d)", i, per, peak.Load())
					}
				}
			})
		}
	}
}

// TestWakeSearcher: the throttled searcher wakes nobody while a worker
// searches (WakeOne does), and a woken worker that finds work wakes the
// next, so a burst of packets taken one at a time reaches every parked
// worker; WakeOne, without that chain, leaves the others parked.
func TestWakeSearcher(t *testing.T) {
	t.Run("throttle", func(t *testing.T) {
		s := newSched(t, Config{Workers: 4, Stages: []string{"a"}, Wake: WakeSearcher})
		end := holdCycle(t, s)
		var n atomic.Int64
		s.nSearching.Add(1) // a searcher, as far as producers can tell
		w0 := s.Stats().ExternalWakes
		if err := s.Add(Unconstrained, counter{&n}); err != nil {
			t.Fatal(err)
		}
		if err := s.BulkAdd(Unconstrained, []Packet{counter{&n}, counter{&n}}); err != nil {
			t.Fatal(err)
		}
		w1 := s.Stats().ExternalWakes
		if err := s.BulkAdd(Unconstrained, []Packet{counter{&n}}, WithWake(WakeOne)); err != nil {
			t.Fatal(err)
		}
		w2 := s.Stats().ExternalWakes
		s.nSearching.Add(-1)
		end()
		if w1 != w0 || w2 != w1+1 || n.Load() != 4 {
			t.Fatalf("with a searcher: searcher policy woke %d, WakeOne %d (want 0, 1); ran %d", w1-w0, w2-w1, n.Load())
		}
	})
	for _, c := range []struct {
		policy WakePolicy
		want   int // blockers started
	}{{WakeSearcher, 3}, {WakeOne, 1}} {
		t.Run(fmt.Sprintf("chain-%v", c.policy), func(t *testing.T) {
			// BucketBatch 1: each worker takes one packet, no deque surplus.
			s := newSched(t, Config{Workers: 4, Stages: []string{"a"}, Wake: c.policy, BucketBatch: 1})
			end := holdCycle(t, s)
			release := make(chan struct{})
			started := make(chan int, 3)
			ps := []Packet{blocker{started, release}, blocker{started, release}, blocker{started, release}}
			if err := s.BulkAdd(Unconstrained, ps); err != nil {
				t.Fatal(err)
			}
			got := 0
			for timeout := time.After(10 * time.Second); got < c.want; got++ {
				select {
				case <-started:
				case <-timeout:
					t.Fatalf("%v: %d of 3 blockers started in 10s, want %d", c.policy, got, c.want)
				}
			}
			select { // no more than want start (they would within ms)
			case <-started:
				got++
			case <-time.After(50 * time.Millisecond):
			}
			close(release)
			end()
			if got != c.want {
				t.Fatalf("%v: %d of 3 blockers started, want %d", c.policy, got, c.want)
			}
		})
	}
}

// TestIdleCPU: parked workers use no CPU. Over one second an idle
// scheduler of 4 workers, between cycles and inside a cycle held open by a
// blocked packet, costs well under 50 ms of CPU.
func TestIdleCPU(t *testing.T) {
	s := newSched(t, Config{Workers: 4, Stages: []string{"a"}})
	if err := runCycle(t, s); err != nil {
		t.Fatal(err)
	}
	measure := func(what string) {
		cpu0 := processCPU()
		time.Sleep(time.Second)
		cpu := processCPU() - cpu0
		t.Logf("%s: %v CPU in 1s", what, cpu)
		if cpu > 50*time.Millisecond {
			t.Errorf("%s: %v CPU in 1s, want < 50ms", what, cpu)
		}
	}
	measure("between cycles")
	end := holdCycle(t, s)
	measure("in a held cycle")
	end()
}

// TestNoLeak: Close stops every goroutine the scheduler started.
func TestNoLeak(t *testing.T) {
	opt := goleak.IgnoreCurrent()
	s, err := New(Config{Workers: 3, Stages: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	s.Add(1, counter{&n})
	if err := runCycle(t, s); err != nil {
		t.Fatal(err)
	}
	s.Close()
	goleak.VerifyNone(t, opt)
	// Close without a cycle ever run.
	s2, _ := New(Config{Workers: 2, Stages: []string{"a"}})
	s2.Close()
	goleak.VerifyNone(t, opt)
}

// TestParkSpinWake: a worker woken while it polls (Config.ParkSpin) takes
// its token without blocking, and counts it in SpinWakes; with NoParkSpin
// it blocks, and the same wake-up counts nothing. Either way the packet
// runs on the woken worker.
func TestParkSpinWake(t *testing.T) {
	for _, c := range []struct {
		spin time.Duration
		want uint64
	}{{time.Second, 1}, {NoParkSpin, 0}} {
		s := newSched(t, Config{Workers: 2, Stages: []string{"a"}, ParkSpin: c.spin})
		end := holdCycle(t, s) // worker 0 blocks; worker 1 parks
		// Give worker 1 time to pass P4 and P5 into P6 (microseconds).
		time.Sleep(5 * time.Millisecond)
		before := s.Stats().Workers[1].SpinWakes // published when it parked
		ran := make(chan int, 1)
		if err := s.Add(1, fn(func(w *Worker) { ran <- w.ID() })); err != nil {
			t.Fatal(err)
		}
		var id int
		watch(t, 30*time.Second, func() { id = <-ran })
		end()
		got := s.Stats().Workers[1].SpinWakes - before
		if id != 1 || got != c.want {
			t.Fatalf("ParkSpin %v: ran on worker %d, which took %d wake-ups polling; want worker 1, %d",
				c.spin, id, got, c.want)
		}
	}
}

// TestParkSpinKeepsStagesMoving: a polling worker is parked as far as the
// protocol goes, so the last worker to park still ends its stage and the
// cycle at once: forty three-stage cycles with a one-second ParkSpin take
// nowhere near the forty seconds they would if a stage waited for a poll
// to time out.
func TestParkSpinKeepsStagesMoving(t *testing.T) {
	s := newSched(t, Config{Workers: 2, Stages: []string{"a", "b", "c"}, ParkSpin: time.Second})
	var n atomic.Int64
	start := time.Now()
	for range 40 {
		for st := StageID(1); st <= 3; st++ {
			if err := s.Add(st, counter{&n}); err != nil {
				t.Fatal(err)
			}
		}
		if err := runCycle(t, s); err != nil {
			t.Fatal(err)
		}
	}
	if el := time.Since(start); n.Load() != 120 || el > 10*time.Second {
		t.Fatalf("ran %d of 120 packets in %v", n.Load(), el)
	}
}

// TestParkSpinYields: a polling worker yields the CPU between polls, so
// the rest of the program keeps its CPU while workers poll. With
// GOMAXPROCS 1 and both workers polling (ParkSpin one second), a
// goroutine that computes for about 30 ms must take about as long as it
// does with no worker polling: without the yield the runtime would share
// the one CPU among it and the two pollers in 10 ms slices, and it would
// take about three times as long (113 against 32 ms when we removed the
// yield). A round compares the best of three runs each way and passes
// under 2×; a shared machine's noise gets three rounds.
func TestParkSpinYields(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	// Calibrate a computation of about 30 ms.
	iters := 1 << 20
	for compute(iters) < 30*time.Millisecond && iters < 1<<30 {
		iters *= 2
	}
	var n atomic.Int64
	var base, polled time.Duration
	for round := range 3 {
		// Baseline: a scheduler whose workers block at once.
		quiet := newSched(t, Config{Workers: 2, Stages: []string{"a"}, ParkSpin: NoParkSpin})
		if err := quiet.Add(1, counter{&n}); err != nil {
			t.Fatal(err)
		}
		if err := runCycle(t, quiet); err != nil {
			t.Fatal(err)
		}
		base = min(compute(iters), compute(iters), compute(iters))
		quiet.Close()
		s := newSched(t, Config{Workers: 2, Stages: []string{"a"}, ParkSpin: time.Second})
		polled = time.Duration(1 << 62)
		for range 3 {
			// A cycle leaves both workers parked and polling for a second.
			if err := s.Add(1, counter{&n}); err != nil {
				t.Fatal(err)
			}
			if err := runCycle(t, s); err != nil {
				t.Fatal(err)
			}
			polled = min(polled, compute(iters))
		}
		s.Close()
		t.Logf("round %d: computation %v beside blocked workers, %v beside two polling", round, base, polled)
		if polled <= 2*base {
			return
		}
	}
	t.Fatalf("a %v computation took %v while two workers polled on the same CPU, in each of three rounds", base, polled)
}

var computeSink uint64

// compute runs iters xorshift steps and returns how long they took.
func compute(iters int) time.Duration {
	start := time.Now()
	computeSink += xorshift(iters)
	return time.Since(start)
}
