package scheduler

import (
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/wsched/wsched/internal/policy"
	"github.com/wsched/wsched/trace"
)

// Config configures a Scheduler. The zero Config is valid: GOMAXPROCS
// workers, one stage, every policy and limit at its default. New validates
// it once; the Scheduler keeps a copy.
type Config struct {
	// Workers is the number of worker goroutines; 0 means GOMAXPROCS.
	Workers int
	// Stages names the stages in order: Stages[i] is StageID i+1. None
	// means one stage, named "main". Unique, non-empty, and not
	// "Unconstrained" (StageID 0, open throughout every cycle).
	Stages []string
	// Wake is whom an AddAll, a stage opening or a lent slice wakes; zero
	// means WakeN. A one-packet Add wakes one worker (under WakeSearcher,
	// only if nobody searches).
	Wake WakePolicy
	// Steal is how much a worker steals from another's deque; zero means
	// StealHalf.
	Steal StealPolicy
	// StealLimit caps a StealHalf steal, 1..128; zero means 128, the most
	// packets a thief takes in one steal (benchmarks/results/DEFAULTS.md
	// has the sweep that chose it).
	StealLimit int
	// Take is how many packets a bucket take moves; zero means TakeGuided.
	Take TakePolicy
	// BucketBatch is the bucket batch of the take policies: the most
	// packets a take moves under TakeFair and TakeFixed, and while the
	// bucket holds at most 2 × Workers × BucketBatch under TakeGuided; zero
	// means 32 (MMTk takes 33, crossbeam's MAX_BATCH of 32 plus the popped
	// one); at most 128 packets move in one take whatever its value.
	BucketBatch int
	// Local is the order of a worker's own queue; zero means LocalPrivate.
	Local LocalPolicy
	// Spins is the number of search rounds (a scan of the buckets and the
	// other workers, then runtime.Gosched) a worker makes before it parks,
	// while some worker still runs a packet; zero means 64 (about 10-30 µs
	// on the 2-vCPU EPYC, below what an OS wake-up costs), a negative value none: a
	// worker that finds nothing in its first scan parks at once. At most
	// 65,536.
	Spins int
	// ParkSpin is how long a parked worker polls its wake-up channel
	// (runtime.Gosched between polls) before it blocks; zero means 200 µs,
	// a negative value none, at most one second. A worker woken while it
	// polls starts within microseconds; one woken after it blocked waits
	// for the Go runtime to wake an OS thread, and on a virtual machine for
	// the host to run an idle virtual CPU (140-210 µs on the 2-vCPU EPYC;
	// 56 µs in MMTk's luindex case). Polling for as long as blocking costs
	// pays at most twice what the better choice made in hindsight would
	// (Karlin, Li, Manasse and Owicki, 1991). Back-to-back cycles of a
	// 32,767-packet spawn tree on 2 workers ran about 2× faster with it
	// (BenchmarkParkSpin); the price is CPU, up to ParkSpin per park per
	// worker, spent yielding to any other runnable goroutine.
	ParkSpin time.Duration
	// MaxQueued bounds the packets queued by Add and AddAll (from outside
	// the workers or from packets) in one stage and not yet taken by a
	// worker, each stage on its own (a packet queued for a later stage
	// cannot be taken until that stage opens, so it must not take the room
	// of the open stage's producers); zero means unbounded, the default,
	// because a garbage collector's work must never wait. An add queues
	// only if all its packets fit: one that would take its stage's queue
	// past MaxQueued returns ErrQueueFull and queues
	// nothing, or with the Block option waits until they fit (a large
	// AddAll may wait while smaller adds take the room first). An AddAll
	// of more than MaxQueued packets can never fit: an error wrapping
	// ErrInvalid. Packets spawned by packets are not counted: they are the
	// cycle's own work.
	MaxQueued int
	// PacketTiming records per-packet-type total, minimum and maximum run
	// times. Off by default: it reads the monotonic clock once per packet
	// (about 33 ns on the 2-vCPU EPYC: BenchmarkSpawnTrivialPacketTiming
	// against BenchmarkSpawnTrivial), several times the rest of the
	// per-packet path.
	// Counts are always recorded.
	PacketTiming bool
	// LearnHeavy makes the scheduler learn which packet types bound their
	// stage and start them first from the next cycle on, with no hint from
	// the caller: it times every packet (as PacketTiming does, whose
	// figures come with it), and at each cycle's normal end marks heavy the
	// types whose mean run in a stage reached HeavyShare of that stage's
	// work per worker (its packets' run time summed, divided by Workers).
	// A type is a Go type, or for a Namer type each name apart: one Go type
	// that carries short and long work under one name is judged by its
	// mean and is rarely marked. The first cycle runs as without the
	// option; from the second on, Add and AddAll queue a heavy type's
	// packets in their stage's priority lane, as the Priority option does
	// (AddAll looks at each element: heavy ones go to the lane, the rest
	// to the bucket in order), so each is taken alone before the stage's
	// other packets. A type leaves the set after two normal cycles in a
	// row below the share; an aborted cycle leaves the set as it was. Not
	// learned: Unconstrained work, a type alone in its stage, schedulers
	// of one worker, and packets that do not pass through a bucket by type
	// (spawns, AddValues' value packets, Lend slices,
	// designated packets, sentinels; a struct packet given to Add or
	// AddAll is learned like any other).
	// At most MaxHeavyTypes types, the longest first. HeavyTypes names
	// them.
	// Cost: 58.7 ns a trivial packet against 11.0 without, 35.4 against
	// 6.0 on 2 workers (BenchmarkSpawnTrivialLearnHeavy, 2-vCPU Xeon VM),
	// nearly all of it PacketTiming's clock reads; nothing allocated.
	// Off by default (benchmarks/results/DEFAULTS.md has the sweep).
	LearnHeavy bool
	// Tracer receives the scheduler's trace events; nil turns tracing off.
	// It must have been made for Workers workers (with Workers 0, for
	// runtime.GOMAXPROCS(0) at New: trace.NewRecorder(runtime.GOMAXPROCS(0),
	// …)), and records one Scheduler: New rejects a Recorder another
	// Scheduler uses.
	Tracer *trace.Recorder
	// RuntimeTrace creates a runtime/trace task per cycle and a region per
	// packet, named by the packet type.
	RuntimeTrace bool
	// PprofLabels sets the pprof goroutine label "wsched_stage" on each
	// worker to the stage of the packet it runs.
	PprofLabels bool
}

// Limits and defaults of the numeric fields (the policies' are in
// internal/policy).
const (
	defaultBucketBatch = policy.DefaultBucketBatch
	defaultSpins       = policy.DefaultSpins
	defaultParkSpin    = policy.DefaultParkSpin
	// maxSpins bounds Spins: a round is a scan of every bucket and deque
	// and a runtime.Gosched, so 65,536 rounds keep a worker that finds
	// nothing searching for tens of milliseconds before it parks, far past
	// what an OS wake-up costs; more is taken for a mistake (and 4×(Spins+1),
	// find's bound on rounds that met contention, must not overflow).
	maxSpins = 1 << 16
	// maxParkSpin bounds ParkSpin: a longer poll burns a CPU for that long
	// after every park that no wake-up ends, so more is taken for a
	// mistake in units.
	maxParkSpin = time.Second
	// designatedCap bounds each worker's designated queue. MMTk uses 16 for
	// one PrepareCollector per worker per GC; 64 leaves room for a few per
	// stage. A full queue makes AddDesignated return ErrQueueFull.
	designatedCap = 64
	// defaultStage names the one stage of a Config without Stages.
	defaultStage = "main"
)

func configError(format string, args ...any) error {
	return fmt.Errorf("%w: Config."+format, append([]any{ErrInvalid}, args...)...)
}

// checkPolicy resolves a policy field: its default when zero, an error
// when it is not one of its family's policies (a conversion from a number
// can make one).
func checkPolicy(field string, k policy.Kind, fam policy.Family, def policy.Kind) (policy.Kind, error) {
	switch {
	case k == policy.Default:
		return def, nil
	case k.Family() != fam:
		return k, configError("%s = %s: unknown %s policy (want %s)", field, familyString(k, fam), strings.ToLower(field),
			strings.Join(policy.Names(fam), ", "))
	}
	return k, nil
}

// validate checks cfg and returns a copy with the defaults filled in.
func (cfg Config) validate() (Config, error) {
	if cfg.Workers < 0 {
		return cfg, configError("Workers = %d: must be >= 1 (or 0 for GOMAXPROCS)", cfg.Workers)
	}
	workersNote := ""
	if cfg.Workers == 0 {
		cfg.Workers = runtime.GOMAXPROCS(0)
		workersNote = " (Workers 0: GOMAXPROCS)"
	}
	if cfg.Workers > maxWorkers {
		return cfg, configError("Workers = %d: at most %d", cfg.Workers, maxWorkers)
	}
	if len(cfg.Stages) == 0 {
		cfg.Stages = []string{defaultStage}
	}
	if len(cfg.Stages) > maxStages {
		return cfg, configError("Stages: %d stages, at most %d", len(cfg.Stages), maxStages)
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
	var err error
	var k policy.Kind
	if k, err = checkPolicy("Wake", policy.Kind(cfg.Wake), policy.FamilyWake, policy.DefaultWake); err != nil {
		return cfg, err
	}
	cfg.Wake = WakePolicy(k)
	if k, err = checkPolicy("Steal", policy.Kind(cfg.Steal), policy.FamilySteal, policy.DefaultSteal); err != nil {
		return cfg, err
	}
	cfg.Steal = StealPolicy(k)
	if k, err = checkPolicy("Take", policy.Kind(cfg.Take), policy.FamilyTake, policy.DefaultTake); err != nil {
		return cfg, err
	}
	cfg.Take = TakePolicy(k)
	if k, err = checkPolicy("Local", policy.Kind(cfg.Local), policy.FamilyLocal, policy.DefaultLocal); err != nil {
		return cfg, err
	}
	cfg.Local = LocalPolicy(k)
	switch {
	case cfg.StealLimit < 0 || cfg.StealLimit > policy.MaxTake:
		return cfg, configError("StealLimit = %d: must be 1..%d (or 0 for %d)", cfg.StealLimit, policy.MaxTake, policy.MaxTake)
	case cfg.StealLimit != 0 && cfg.Steal == StealOne:
		return cfg, configError("StealLimit = %d with Steal = steal-one, which takes one", cfg.StealLimit)
	case cfg.StealLimit == 0:
		cfg.StealLimit = policy.MaxTake
	}
	if cfg.BucketBatch < 0 {
		return cfg, configError("BucketBatch = %d: must be >= 1 (or 0 for %d)", cfg.BucketBatch, defaultBucketBatch)
	}
	if cfg.BucketBatch == 0 {
		cfg.BucketBatch = defaultBucketBatch
	}
	switch {
	case cfg.Spins > maxSpins:
		return cfg, configError("Spins = %d: at most %d (or negative to park after the first scan)", cfg.Spins, maxSpins)
	case cfg.Spins == 0:
		cfg.Spins = defaultSpins
	case cfg.Spins < 0:
		cfg.Spins = 0
	}
	switch {
	case cfg.ParkSpin > maxParkSpin:
		return cfg, configError("ParkSpin = %v: at most %v (or negative to block at once)", cfg.ParkSpin, maxParkSpin)
	case cfg.ParkSpin == 0:
		cfg.ParkSpin = defaultParkSpin
	case cfg.ParkSpin < 0:
		cfg.ParkSpin = -1
	}
	if cfg.MaxQueued < 0 {
		return cfg, configError("MaxQueued = %d: must be >= 1 (or 0 for unbounded)", cfg.MaxQueued)
	}
	if cfg.Tracer != nil && cfg.Tracer.Workers() != cfg.Workers {
		return cfg, configError("Tracer has %d worker buffers, Workers = %d%s: make it with trace.NewRecorder(%d, …)", cfg.Tracer.Workers(), cfg.Workers, workersNote, cfg.Workers)
	}
	return cfg, nil
}

const unconstrainedName = "Unconstrained"

// traceConfig describes the validated cfg for a trace (Recorder.SetConfig):
// what `wsched simulate` replays a trace under unless told otherwise.
func (cfg Config) traceConfig() string {
	return policy.Settings{
		Wake: policy.Kind(cfg.Wake), Steal: policy.Kind(cfg.Steal), Take: policy.Kind(cfg.Take), Local: policy.Kind(cfg.Local),
		StealLimit: cfg.StealLimit, BucketBatch: cfg.BucketBatch, Spins: cfg.Spins, ParkSpin: cfg.ParkSpin,
		MaxQueued: cfg.MaxQueued, LearnHeavy: cfg.LearnHeavy,
	}.String()
}
