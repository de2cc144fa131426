package scheduler

import (
	"flag"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestZeroConfig: Config{} is a working one-stage scheduler with
// GOMAXPROCS workers, and Add without options queues into its stage.
func TestZeroConfig(t *testing.T) {
	s := newSched(t, Config{})
	assert.Equal(t, runtime.GOMAXPROCS(0), s.Workers())
	var n atomic.Int64
	require.NoError(t, s.Add(counter{&n}))
	require.NoError(t, s.AddAll(counters(99, &n)))
	require.NoError(t, runCycle(t, s))
	assert.EqualValues(t, 100, n.Load())
	st := s.Stats()
	require.Len(t, st.Stages, 2)
	assert.Equal(t, "Unconstrained", st.Stages[0].Name)
	assert.Equal(t, "main", st.Stages[1].Name)
	assert.EqualValues(t, 1, st.Stages[1].Opens)
}

// logPacket records the order packets ran in.
type logPacket struct {
	mu  sync.Mutex
	got []string
}

func (l *logPacket) add(s string) {
	l.mu.Lock()
	l.got = append(l.got, s)
	l.mu.Unlock()
}

// packet returns a packet that logs name.
func (l *logPacket) packet(name string) Packet {
	return Func(name, func(*Worker) error { l.add(name); return nil })
}

// TestStageOption: a StageID option queues into that stage, which runs
// after the earlier ones are drained; stage 1 is the default and stage 0
// (Unconstrained) runs throughout. A packet queues into a later stage of
// its own cycle through w.Scheduler().
func TestStageOption(t *testing.T) {
	s := newSched(t, Config{Workers: 2, Stages: []string{"one", "two"}})
	var l logPacket
	for range 20 {
		require.NoError(t, s.Add(l.packet("two"), StageID(2)))
	}
	for range 20 {
		require.NoError(t, s.Add(l.packet("one")))
	}
	require.NoError(t, s.Add(l.packet("zero"), Unconstrained))
	require.NoError(t, s.Add(Func("adder", func(w *Worker) error {
		l.add("one")
		return w.Scheduler().AddAll([]Packet{l.packet("two"), l.packet("two")}, StageID(2))
	}), StageID(1)))
	require.NoError(t, runCycle(t, s))
	require.Len(t, l.got, 20+20+1+1+2)
	last1, first2, twos := -1, len(l.got), 0
	for i, name := range l.got {
		switch name {
		case "one":
			last1 = i
		case "two":
			first2 = min(first2, i)
			twos++
		}
	}
	assert.Less(t, last1, first2, "a stage-2 packet ran before stage 1 was drained: %v", l.got)
	assert.Equal(t, 22, twos)
}

// TestPriorityOption: on one worker, priority packets (Add and AddAll)
// run before the normal packets queued before them.
func TestPriorityOption(t *testing.T) {
	s := newSched(t, Config{Workers: 1})
	var l logPacket
	for i := range 5 {
		require.NoError(t, s.Add(l.packet(fmt.Sprint("normal", i))))
	}
	require.NoError(t, s.Add(l.packet("prio-a"), Priority))
	require.NoError(t, s.AddAll([]Packet{l.packet("prio-b"), l.packet("prio-c")}, Priority))
	require.NoError(t, s.Add(l.packet("prio-d"), Priority, StageID(1)))
	require.NoError(t, runCycle(t, s))
	require.Len(t, l.got, 9)
	assert.ElementsMatch(t, []string{"prio-a", "prio-b", "prio-c", "prio-d"}, l.got[:4], "order %v", l.got)
}

// TestLendOption: AddAll with Lend queues a slice without copying it (no
// allocation), every element runs once per lending, and a nil element
// (not looked at by AddAll) ends the cycle with a *CycleError wrapping
// ErrInvalid named "nil lent element".
func TestLendOption(t *testing.T) {
	t.Run("no-copy", func(t *testing.T) {
		s := newSched(t, Config{Workers: 2})
		runs := make([]atomic.Int32, 10_000)
		ps := make([]Packet, len(runs))
		for i := range ps {
			ps[i] = leafTree{lo: i, hi: i + 1, runs: runs, nodes: new(atomic.Int64)}
		}
		lendings := 1
		if !raceEnabled {
			allocs := testing.AllocsPerRun(10, func() {
				if err := s.AddAll(ps, Lend); err != nil {
					panic(err)
				}
			})
			assert.Zero(t, allocs, "AddAll with Lend allocated")
			lendings = 11 // AllocsPerRun's warm-up, then 10
		} else {
			require.NoError(t, s.AddAll(ps, Lend))
		}
		require.NoError(t, runCycle(t, s))
		for i := range runs {
			if r := runs[i].Load(); r != int32(lendings) { // plain test first: testify per element is slow
				require.EqualValues(t, lendings, r, "element %d", i)
			}
		}
	})
	t.Run("nil-element", func(t *testing.T) {
		s := newSched(t, Config{Workers: 1})
		var n atomic.Int64
		require.NoError(t, s.AddAll([]Packet{counter{&n}, nil, counter{&n}}, Lend))
		err := runCycle(t, s)
		require.ErrorIs(t, err, ErrInvalid)
		var ce *CycleError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, "nil lent element", ce.Packet)
		assert.Contains(t, ce.Error(), "nil Packet at index 1 of a slice lent to AddAll")
		assert.EqualValues(t, 1, n.Load(), "the element before the nil one")
		assert.EqualValues(t, 1, ce.Dropped, "the element after it")
	})
}

// TestWakeOption: a WakePolicy option decides whom that one add wakes,
// whatever Config.Wake says. A designated packet adds while the other
// three workers are parked; the wake-ups it sends are external ones (it
// is not the scheduler's own queueing), counted beside the one Run sent
// for the designated packet.
func TestWakeOption(t *testing.T) {
	cases := []struct {
		name  string
		cfg   WakePolicy
		all   bool // AddAll of 8 packets, else Add of one
		opts  []Option
		wakes uint64
	}{
		{"AddAll/WakeAll", WakeOne, true, []Option{WakeAll}, 3},
		{"AddAll/default-WakeOne", WakeOne, true, nil, 1},
		{"AddAll/WakeOne", WakeAll, true, []Option{WakeOne}, 1},
		{"AddAll/WakeN", WakeOne, true, []Option{WakeN}, 3},
		{"Add/WakeAll", WakeN, false, []Option{WakeAll}, 3},
		{"Add/default", WakeAll, false, nil, 1},
		// An option equal to Config.Wake is still this add's policy.
		{"Add/WakeAll-as-configured", WakeAll, false, []Option{WakeAll}, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newSched(t, Config{Workers: 4, Wake: c.cfg})
			var n atomic.Int64
			var addErr error
			require.NoError(t, s.AddDesignated(0, Func("adder", func(w *Worker) error {
				for w.s.nParked.Load() != 3 {
					runtime.Gosched()
				}
				if c.all {
					addErr = w.Scheduler().AddAll(counters(8, &n), c.opts...)
				} else {
					addErr = w.Scheduler().Add(counter{&n}, c.opts...)
				}
				return nil
			})))
			require.NoError(t, runCycle(t, s))
			require.NoError(t, addErr)
			st := s.Stats()
			assert.Equal(t, 1+c.wakes, st.ExternalWakes, "Run's wake-up and the add's")
		})
	}
}

// TestOptionErrors: options that do not apply, unknown stages, nil
// packets: each call fails with an error wrapping ErrInvalid that says
// what was wrong, and queues nothing.
func TestOptionErrors(t *testing.T) {
	s := newSched(t, Config{Workers: 2, Stages: []string{"one", "two"}})
	var n atomic.Int64
	p := counter{&n}
	ps := counters(3, &n)
	cases := []struct {
		name string
		err  error
		msg  string
	}{
		{"Add/Lend", s.Add(p, Lend), "Lend applies to AddAll"},
		{"AddAll/Lend+Priority", s.AddAll(ps, Lend, Priority), "Lend with Priority"},
		{"Add/unknown wake policy", s.Add(p, WakePolicy(200)), "wake-policy(200) is not a wake policy"},
		{"AddAll/a take policy's value", s.AddAll(ps, WakePolicy(TakeFair)), "wake-policy(7) is not a wake policy"},
		{"Add/unknown stage", s.Add(p, StageID(3)), "StageID 3: unknown stage"},
		{"Add/negative stage", s.Add(p, StageID(-1)), "StageID -1: unknown stage"},
		{"AddAll/unknown stage", s.AddAll(ps, StageID(9), Lend), "StageID 9: unknown stage"},
		{"Add/nil", s.Add(nil), "nil Packet"},
		{"Add/nil with bad stage", s.Add(nil, StageID(7)), "unknown stage"},
		{"AddAll/nil element", s.AddAll([]Packet{p, p, nil}), "nil Packet at index 2"},
	}
	for _, c := range cases {
		assert.ErrorIs(t, c.err, ErrInvalid, c.name)
		assert.ErrorContains(t, c.err, c.msg, c.name)
	}
	// A nil Option is no option, and the zero WakePolicy changes nothing.
	require.NoError(t, s.Add(p, nil))
	require.NoError(t, s.Add(p, WakePolicy(0)))
	require.NoError(t, runCycle(t, s))
	assert.EqualValues(t, 2, n.Load(), "only the valid adds' packets ran")
	assert.EqualValues(t, 2, s.Stats().Ran)
}

// TestPolicyText: every policy's name round-trips through MarshalText
// and UnmarshalText of its family's type; flag.TextVar reads and prints
// them; unknown names, names of other families and values outside the
// family are errors wrapping ErrInvalid.
func TestPolicyText(t *testing.T) {
	type textPolicy interface {
		fmt.Stringer
		MarshalText() ([]byte, error)
	}
	roundTrip := func(p textPolicy, name string, back func([]byte) (any, error)) {
		text, err := p.MarshalText()
		require.NoError(t, err)
		assert.Equal(t, name, string(text))
		assert.Equal(t, name, p.String())
		q, err := back(text)
		require.NoError(t, err)
		assert.Equal(t, p, q)
	}
	for p, name := range map[WakePolicy]string{0: "default", WakeOne: "wake-one", WakeAll: "wake-all", WakeN: "wake-n", WakeSearcher: "wake-searcher"} {
		roundTrip(p, name, func(b []byte) (any, error) { q := WakeAll; err := q.UnmarshalText(b); return q, err })
	}
	for p, name := range map[StealPolicy]string{0: "default", StealOne: "steal-one", StealHalf: "steal-half"} {
		roundTrip(p, name, func(b []byte) (any, error) { q := StealOne; err := q.UnmarshalText(b); return q, err })
	}
	for p, name := range map[TakePolicy]string{0: "default", TakeFair: "take-fair", TakeFixed: "take-fixed", TakeGuided: "take-guided"} {
		roundTrip(p, name, func(b []byte) (any, error) { q := TakeFair; err := q.UnmarshalText(b); return q, err })
	}
	for p, name := range map[LocalPolicy]string{0: "default", LocalPrivate: "local-private", LocalLIFO: "local-lifo", LocalFIFO: "local-fifo"} {
		roundTrip(p, name, func(b []byte) (any, error) { q := LocalFIFO; err := q.UnmarshalText(b); return q, err })
	}

	var cfg Config
	fs := flag.NewFlagSet("policies", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.TextVar(&cfg.Wake, "wake", WakeN, "wake policy")
	fs.TextVar(&cfg.Take, "take", TakeGuided, "take policy")
	fs.TextVar(&cfg.Local, "local", LocalPolicy(0), "local policy")
	assert.Equal(t, "wake-n", fs.Lookup("wake").DefValue)
	require.NoError(t, fs.Parse([]string{"-wake", "wake-all", "-take=take-fair"}))
	assert.Equal(t, WakeAll, cfg.Wake)
	assert.Equal(t, TakeFair, cfg.Take)
	assert.Equal(t, LocalPolicy(0), cfg.Local)
	cfg.Workers = 1
	s := newSched(t, cfg)
	assert.Equal(t, WakeAll, s.s.cfg.Wake)
	assert.Equal(t, LocalPrivate, s.s.cfg.Local, "the zero LocalPolicy is the field's default")
	assert.Error(t, fs.Parse([]string{"-wake=wake-some"}))
	assert.Equal(t, WakeAll, cfg.Wake, "a failed parse leaves the value")

	p := StealOne
	err := p.UnmarshalText([]byte("wake-some"))
	require.ErrorIs(t, err, ErrInvalid)
	assert.ErrorContains(t, err, `"wake-some" is not a steal policy (want one of: steal-one, steal-half, or default)`)
	assert.Equal(t, StealOne, p)
	for _, bad := range []string{"", "Steal-One", "steal_one", " steal-one", "wake-all", "take-fair", "local-lifo"} {
		assert.ErrorIs(t, p.UnmarshalText([]byte(bad)), ErrInvalid, "%q", bad)
		assert.Equal(t, StealOne, p, "a refused name leaves the value")
	}
	_, err = StealPolicy(200).MarshalText()
	assert.ErrorIs(t, err, ErrInvalid)
	assert.Equal(t, "steal-policy(200)", StealPolicy(200).String())
	assert.Equal(t, "local-policy(3)", LocalPolicy(WakeN).String(), "a wake policy's value converted")
}

// TestConfigPolicyKind: New rejects a value outside its field's family (a
// conversion from a number), naming the field.
func TestConfigPolicyKind(t *testing.T) {
	cases := []struct {
		cfg Config
		msg string
	}{
		{Config{Wake: WakePolicy(StealHalf)}, "Config.Wake = wake-policy(6): unknown wake policy"},
		{Config{Steal: StealPolicy(WakeAll)}, "Config.Steal = steal-policy(2): unknown steal policy"},
		{Config{Take: TakePolicy(LocalFIFO)}, "Config.Take = take-policy(12): unknown take policy"},
		{Config{Local: LocalPolicy(TakeFair)}, "Config.Local = local-policy(7): unknown local policy"},
		{Config{Wake: WakePolicy(99)}, "Config.Wake = wake-policy(99): unknown wake policy"},
		{Config{MaxQueued: -1}, "Config.MaxQueued = -1"},
	}
	for _, c := range cases {
		c.cfg.Workers = 1
		s, err := New(c.cfg)
		assert.Nil(t, s)
		assert.ErrorIs(t, err, ErrInvalid, c.msg)
		assert.ErrorContains(t, err, c.msg)
	}
}

// TestZeroScheduler: every method of a zero Scheduler (or a nil one)
// panics with a message that says to use New.
func TestZeroScheduler(t *testing.T) {
	var z Scheduler
	var nilS *Scheduler
	calls := map[string]func(){
		"Run":           func() { z.Run(bg) },
		"Add":           func() { z.Add(counter{}) },
		"AddAll":        func() { z.AddAll(nil) },
		"AddDesignated": func() { z.AddDesignated(0, counter{}) },
		"SetSentinel":   func() { z.SetSentinel(1, counter{}) },
		"Close":         func() { z.Close() },
		"Stats":         func() { z.Stats() },
		"Workers":       func() { z.Workers() },
		"nil Run":       func() { nilS.Run(bg) },
	}
	for name, f := range calls {
		msg := panicMsg(f)
		assert.Contains(t, msg, "scheduler.New", name)
		assert.Contains(t, msg, "zero Scheduler", name)
	}
}
