package scheduler

import (
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/wsched/wsched/deque"
	"github.com/wsched/wsched/trace"
)

// Defaults for the zero fields of Config. Each is justified where it stands.
const (
	// DefaultWake is the wake policy of a zero Config.Wake: wake as many
	// parked workers as packets arrived (MMTk #1589's proposal, Rayon's
	// rule). Chosen by the sweep in benchmarks/results/DEFAULTS.md: with 16
	// workers on an idle 16-vCPU host, the throttled searcher was 1.56×
	// slower than WakeN on a bulk add of 4,096 2-µs packets, 10.7% on
	// gcmark, 9.6% on fan-out and 5.0% on prepare (all proven at 95%),
	// because it wakes workers one after another; wake-all gains as much
	// but makes a wide spawner 2× slower (every sleeper fights over one
	// deque). WakeN was proven slower than the searcher nowhere; with 2
	// workers no policy differs (there is one worker to wake).
	DefaultWake = WakeN

	// DefaultBucketBatch is the bucket batch limit: a worker takes up to 32
	// packets from a bucket at once (up to 128 from a deep one under the
	// default TakeGuided), one to run and the rest held or into its local
	// deque. MMTk takes 33 (crossbeam's MAX_BATCH of 32 plus the popped
	// one); 32 keeps a worker's grab within one Injector block of 128.
	DefaultBucketBatch = 32

	// DefaultTake is the take policy of a zero Config.Take: TakeGuided,
	// the fair share while a bucket is short and up to four batches at
	// once while it is deep. On the 2-vCPU EPYC (bench, one binary run
	// with each policy alternately, four rounds of 5 invocations) it made
	// the 16,384-packet fan-out 9.8% (1 worker) and 25.2% (2 workers)
	// faster and a 16,383-child spawn 9.9% and 18.9%, all proven, and was
	// proven slower on nothing; see benchmarks/results/DEFAULTS.md.
	DefaultTake = TakeGuided

	// DefaultSpins is the number of search rounds (each a full scan of the
	// buckets and the other workers, then runtime.Gosched) before a worker
	// parks. 64 rounds are ~10-30 µs here, below the ~50 µs an OS wake-up
	// costs, so a worker that would be woken again at once stays awake.
	DefaultSpins = 64

	// DefaultParkSpin is how long a parked worker polls for its wake-up
	// token before it blocks (Config.ParkSpin): about what a blocked
	// worker's wake-up costs on the project's virtual machine (180 µs).
	// Spinning for as long as blocking costs is the classic spin-then-block
	// rule (Karlin, Li, Manasse and Owicki, SOSP 1991): it never pays more
	// than twice what the better choice, made in hindsight, would have.
	// Chosen in benchmarks/results/DEFAULTS.md: on the 2-vCPU EPYC,
	// back-to-back cycles of a 32,767-packet spawn tree on 2 workers ran
	// about 2× faster than without the poll (BenchmarkParkSpin, medians 631
	// → 305 µs a cycle; 50 µs 350); in the harness, fork-join on 2 workers
	// was 13% faster than without it (proven; 50 µs 8%, not proven) and 200
	// µs had the sweep's lowest geometric mean; with a millisecond between
	// cycles, where no poll can help, each cycle cost about 250 µs more
	// CPU, while back-to-back operations in the harness used less (fan-out
	// −35%: no futex calls, no runtime spinning for an idle thread).
	DefaultParkSpin = 200 * time.Microsecond

	// maxParkSpin bounds Config.ParkSpin: a longer poll burns a CPU for
	// that long after every park that no wake-up ends (the longest value
	// measured, 1 ms, had a 9% lower median than 200 µs on fork-join and
	// the same on the fan-out), so more is taken for a mistake in units.
	maxParkSpin = time.Second

	// designatedCap bounds each worker's designated queue. MMTk uses 16 for
	// one PrepareCollector per worker per GC; 64 leaves room for a few per
	// stage. A full queue makes AddDesignated return ErrDesignatedFull
	// rather than grow without bound.
	designatedCap = 64
)

// NoParkSpin as Config.ParkSpin makes a parking worker block at once.
const NoParkSpin time.Duration = -1

// ErrInvalidConfig is wrapped by every error New returns for a bad Config.
var ErrInvalidConfig = errors.New("scheduler: invalid Config")

// WakePolicy says whom BulkAdd and BulkAddPriority (and a stage opening)
// wake. The zero value, WakeDefault, means DefaultWake.
type WakePolicy uint8

const (
	// WakeDefault selects DefaultWake.
	WakeDefault WakePolicy = iota
	// WakeOne wakes one parked worker (MMTk's add).
	WakeOne
	// WakeAll wakes every parked worker (MMTk's bulk_add).
	WakeAll
	// WakeN wakes min(packets, parked) workers (MMTk #1589, Rayon).
	WakeN
	// WakeSearcher wakes one parked worker only if no worker is searching;
	// a searcher that finds work wakes the next (Go runtime, Tokio).
	WakeSearcher
	wakeEnd
)

var wakeNames = [...]string{"default", "one", "all", "n", "searcher"}

// String returns "default", "one", "all", "n" or "searcher".
func (p WakePolicy) String() string { return enumName(wakeNames[:], p, "WakePolicy") }

// ParseWakePolicy parses the names String returns.
func ParseWakePolicy(s string) (WakePolicy, error) {
	if p, ok := parseEnum[WakePolicy](wakeNames[:], s); ok {
		return p, nil
	}
	return 0, fmt.Errorf("scheduler: unknown wake policy %q (want one, all, n or searcher)", s)
}

// enumName is the name of p among names, or type(p) for a value past them.
func enumName[P ~uint8](names []string, p P, typ string) string {
	if int(p) < len(names) {
		return names[p]
	}
	return typ + "(" + strconv.Itoa(int(p)) + ")"
}

// parseEnum is the value whose name among names is s.
func parseEnum[P ~uint8](names []string, s string) (P, bool) {
	for i, n := range names {
		if s == n {
			return P(i), true
		}
	}
	return 0, false
}

func (p WakePolicy) resolve() WakePolicy {
	if p == WakeDefault {
		return DefaultWake
	}
	return p
}

// TakePolicy says how many packets a worker takes from a bucket's normal
// lane at once (one to run, the rest held or queued on its deque; the
// priority lane always gives one). The zero value, TakeDefault, means
// DefaultTake. d is the bucket's depth and n the number of workers.
type TakePolicy uint8

const (
	// TakeDefault selects DefaultTake.
	TakeDefault TakePolicy = iota
	// TakeFair takes min(BucketBatch, ⌈d ÷ n⌉): at most the worker's fair
	// share, so that the first worker to reach a small stage does not
	// hoard it while the others wake (MMTk's local-cache hoarding,
	// mmtk-core #1507: gcmark's 32-packet Release stage ran 3.6× its
	// lower bound at 16 workers when one take grabbed all 32).
	TakeFair
	// TakeFixed takes BucketBatch whenever the bucket holds that many, as
	// MMTk does.
	TakeFixed
	// TakeGuided takes what TakeFair takes, or ⌈d ÷ 2n⌉ when that is
	// more, up to four times BucketBatch and at most MaxSteal (one bucket
	// block): while the bucket is deep, a bulk add of thousands of packets
	// costs a quarter of the takes (each an atomic on a line every worker
	// writes) with the default batch of 32; as the bucket drains the
	// takes shrink back to TakeFair's, so the end of a stage, where
	// balance is decided, is unchanged. It applies while d > 2n ×
	// BucketBatch (from 129 packets on 2 workers with the default batch).
	// Guided self-scheduling (Polychronopoulos and Kuck, 1987) with the
	// factor of two of factoring (Hummel, Schonberg and Flynn, 1992).
	TakeGuided
	takeEnd
)

var takeNames = [...]string{"default", "fair", "fixed", "guided"}

// String returns "default", "fair", "fixed" or "guided".
func (p TakePolicy) String() string { return enumName(takeNames[:], p, "TakePolicy") }

// ParseTakePolicy parses the names String returns.
func ParseTakePolicy(s string) (TakePolicy, error) {
	if p, ok := parseEnum[TakePolicy](takeNames[:], s); ok {
		return p, nil
	}
	return 0, fmt.Errorf("scheduler: unknown take policy %q (want default, fair, fixed or guided)", s)
}

// StealKind is the kind of a StealPolicy. The zero value means StealHalf.
type StealKind uint8

const (
	// StealKindDefault selects StealHalf().
	StealKindDefault StealKind = iota
	// StealKindOne takes one packet per steal (MMTk, Rayon).
	StealKindOne
	// StealKindHalf takes ⌈n/2⌉ packets of a victim's n, at most
	// MaxSteal (Go runtime, Tokio: half of a 256-slot run queue).
	StealKindHalf
	// StealKindBatch takes ⌈n/2⌉ packets, at most Limit (<= MaxSteal).
	StealKindBatch
)

// StealPolicy says how many packets a worker takes from another worker's
// deque. Build one with StealOne, StealHalf or StealBatch; the zero value
// means StealHalf().
type StealPolicy struct {
	Kind  StealKind
	Limit int // StealKindBatch only: most packets per steal, 1..MaxSteal
}

// StealOne steals one packet at a time.
func StealOne() StealPolicy { return StealPolicy{Kind: StealKindOne} }

// StealHalf steals half of the victim's packets (rounded up), at most
// MaxSteal.
func StealHalf() StealPolicy { return StealPolicy{Kind: StealKindHalf} }

// MaxSteal is the most packets one steal takes: a thief runs its batch
// from a private array of this size (as it runs a bucket take), not from
// its deque, so that taking the batch back costs no locked instruction per
// packet. The Go runtime and Tokio steal at most as many (half of a
// 256-slot run queue), and it is the size of one bucket block (deque.MaxTake).
// (A 16,383-child spawn on 2 workers: 524 → 413 µs, −21.1%, with batches
// stolen into the array against uncapped halves into the deque; the
// 16-worker sweep found halves capped at 32 or 64 as fast as uncapped ones
// everywhere: benchmarks/results/DEFAULTS.md.)
const MaxSteal = deque.MaxTake

// StealBatch steals half of the victim's packets, at most limit
// (1..MaxSteal).
func StealBatch(limit int) StealPolicy { return StealPolicy{Kind: StealKindBatch, Limit: limit} }

// String returns "default", "one", "half" or "batch:LIMIT".
func (p StealPolicy) String() string {
	switch p.Kind {
	case StealKindDefault:
		return "default"
	case StealKindOne:
		return "one"
	case StealKindHalf:
		return "half"
	case StealKindBatch:
		return "batch:" + strconv.Itoa(p.Limit)
	}
	return "StealKind(" + strconv.Itoa(int(p.Kind)) + ")"
}

// ParseStealPolicy parses "one", "half" or "batch:LIMIT".
func ParseStealPolicy(s string) (StealPolicy, error) {
	switch s {
	case "one":
		return StealOne(), nil
	case "half":
		return StealHalf(), nil
	case "default":
		return StealPolicy{}, nil
	}
	if rest, ok := strings.CutPrefix(s, "batch:"); ok {
		n, err := strconv.Atoi(rest)
		if err != nil || n < 1 || n > MaxSteal {
			return StealPolicy{}, fmt.Errorf("scheduler: bad steal batch limit in %q (want batch:N, 1 <= N <= %d)", s, MaxSteal)
		}
		return StealBatch(n), nil
	}
	return StealPolicy{}, fmt.Errorf("scheduler: unknown steal policy %q (want one, half or batch:N)", s)
}

// limit is the most packets one steal of the policy takes (one: 1).
func (p StealPolicy) limit() int {
	switch p.Kind {
	case StealKindOne:
		return 1
	case StealKindBatch:
		return p.Limit
	}
	return MaxSteal
}

// Config configures a Scheduler. Zero fields take the documented defaults.
// New validates it once; the Scheduler keeps a copy, so later changes to
// the caller's Config have no effect.
type Config struct {
	// Workers is the number of worker goroutines; 0 means GOMAXPROCS.
	Workers int
	// Stages names the user stages in order: StageID 1 is Stages[0]. At
	// least one; unique, non-empty, and not "Unconstrained" (StageID 0).
	Stages []string
	// Wake is the default wake policy of BulkAdd, BulkAddPriority and
	// stage openings; WakeDefault means DefaultWake.
	Wake WakePolicy
	// Steal is how workers steal from each other; zero means StealHalf().
	Steal StealPolicy
	// BucketBatch is the most packets a worker takes from a bucket at once
	// (TakeFair, TakeFixed), or while the bucket holds at most 2 × Workers
	// × BucketBatch packets (TakeGuided, which takes up to four times as
	// many from a deeper one); 0 means DefaultBucketBatch.
	BucketBatch int
	// Take says how many packets a bucket take moves, given
	// BucketBatch and the bucket's depth; TakeDefault means DefaultTake.
	Take TakePolicy
	// Spins is the number of search rounds before a worker parks; 0 means
	// DefaultSpins.
	Spins int
	// ParkSpin is how long a parked worker polls its wake-up channel
	// (runtime.Gosched between polls) before it blocks on it; 0 means
	// DefaultParkSpin, a negative value (NoParkSpin) blocks at once, and
	// at most one second is allowed. A worker woken while it polls starts
	// within microseconds; one woken after it blocked waits for the Go
	// runtime to wake an OS thread, and on a virtual machine for the host
	// to run an idle virtual CPU again (140–210 µs on the 2-vCPU EPYC:
	// `wsched analyze` of the demo's prepare-b trace splits the two; 56 µs
	// in MMTk's luindex case). The worker is parked all
	// the while as far as the scheduler is concerned (it counts towards
	// the end of a stage or cycle, and wakers choose it as before): the
	// poll only changes how fast it answers. The price is CPU: up to
	// ParkSpin per park per worker, spent yielding to any other runnable
	// goroutine. See WorkerStats.SpinWakes.
	ParkSpin time.Duration
	// LocalFIFO makes each worker run its own spawned packets oldest first.
	// By default (false) a worker runs them newest first, through a
	// private stack of up to 256 packets in front of its deque (see
	// Worker.Spawn); packets it offered to thieves and got back come out of
	// that deque oldest first, as thieves take them. FIFO has no private
	// stack.
	LocalFIFO bool
	// NoLIFOSlot sends every Spawn to the deque, where thieves see it at
	// once, and makes that deque LIFO. By default spawned packets wait on
	// the worker's private stack while no worker is idle, and the newest
	// waits there until the spawning packet returns or spawns again (see
	// Worker.Spawn); a packet that spawns and then computes for long hides
	// them meanwhile from workers that become idle. Costs about 2-3×
	// SpawnTrivial per spawned packet here (scheduler/doc.go).
	NoLIFOSlot bool
	// PacketTiming records per-packet-type total/min/max run times. Off by
	// default: it reads the monotonic clock once per packet (≈ 33 ns here,
	// see doc.go), several times the rest of the per-packet path. Counts are
	// always recorded.
	PacketTiming bool
	// Tracer receives the scheduler's trace events; nil turns tracing off.
	// It must have been created with Workers workers, and records one
	// Scheduler: New rejects a Recorder that another Scheduler uses.
	Tracer *trace.Recorder
	// RuntimeTrace creates a runtime/trace task per cycle and a region per
	// packet, named by the packet type.
	RuntimeTrace bool
	// PprofLabels sets the pprof goroutine label "wsched_stage" on each
	// worker to the stage of the packet it runs.
	PprofLabels bool
}

func configError(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, args...)...)
}

// validate checks cfg and returns a copy with the defaults filled in.
func (cfg Config) validate() (Config, error) {
	if cfg.Workers < 0 {
		return cfg, configError("Workers = %d: must be >= 1 (or 0 for GOMAXPROCS)", cfg.Workers)
	}
	if cfg.Workers == 0 {
		cfg.Workers = runtime.GOMAXPROCS(0)
	}
	if cfg.Workers > maxWorkers {
		return cfg, configError("Workers = %d: at most %d", cfg.Workers, maxWorkers)
	}
	if len(cfg.Stages) == 0 {
		return cfg, configError("no Stages: need at least one")
	}
	if len(cfg.Stages) > maxStages {
		return cfg, configError("%d Stages: at most %d", len(cfg.Stages), maxStages)
	}
	seen := make(map[string]int, len(cfg.Stages))
	for i, name := range cfg.Stages {
		switch {
		case name == "":
			return cfg, configError("Stages[%d] is empty", i)
		case name == unconstrainedName:
			return cfg, configError("Stages[%d] = %q is reserved for StageID 0", i, name)
		}
		if j, dup := seen[name]; dup {
			return cfg, configError("Stages[%d] = %q duplicates Stages[%d]", i, name, j)
		}
		seen[name] = i
	}
	cfg.Stages = append([]string(nil), cfg.Stages...)
	if cfg.Wake >= wakeEnd {
		return cfg, configError("Wake = %d: unknown wake policy", uint8(cfg.Wake))
	}
	cfg.Wake = cfg.Wake.resolve()
	switch cfg.Steal.Kind {
	case StealKindDefault:
		if cfg.Steal.Limit != 0 {
			return cfg, configError("Steal.Limit = %d without a Steal.Kind", cfg.Steal.Limit)
		}
		cfg.Steal = StealHalf()
	case StealKindOne, StealKindHalf:
		if cfg.Steal.Limit != 0 {
			return cfg, configError("Steal.Limit = %d: only StealBatch takes a limit", cfg.Steal.Limit)
		}
	case StealKindBatch:
		if cfg.Steal.Limit < 1 || cfg.Steal.Limit > MaxSteal {
			return cfg, configError("StealBatch limit = %d: must be 1..%d (MaxSteal)", cfg.Steal.Limit, MaxSteal)
		}
	default:
		return cfg, configError("Steal.Kind = %d: unknown steal policy", uint8(cfg.Steal.Kind))
	}
	if cfg.BucketBatch < 0 {
		return cfg, configError("BucketBatch = %d: must be >= 1 (or 0 for %d)", cfg.BucketBatch, DefaultBucketBatch)
	}
	if cfg.BucketBatch == 0 {
		cfg.BucketBatch = DefaultBucketBatch
	}
	switch {
	case cfg.Take >= takeEnd:
		return cfg, configError("Take = %d: unknown take policy", uint8(cfg.Take))
	case cfg.Take == TakeDefault:
		cfg.Take = DefaultTake
	}
	if cfg.Spins < 0 {
		return cfg, configError("Spins = %d: must be >= 1 (or 0 for %d)", cfg.Spins, DefaultSpins)
	}
	if cfg.Spins == 0 {
		cfg.Spins = DefaultSpins
	}
	switch {
	case cfg.ParkSpin > maxParkSpin:
		return cfg, configError("ParkSpin = %v: at most %v (or negative to block at once)", cfg.ParkSpin, maxParkSpin)
	case cfg.ParkSpin == 0:
		cfg.ParkSpin = DefaultParkSpin
	case cfg.ParkSpin < 0:
		cfg.ParkSpin = NoParkSpin
	}
	if cfg.Tracer != nil && cfg.Tracer.Workers() != cfg.Workers {
		return cfg, configError("Tracer has %d worker buffers, Workers = %d", cfg.Tracer.Workers(), cfg.Workers)
	}
	return cfg, nil
}

const unconstrainedName = "Unconstrained"
