package scheduler

import (
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/wsched/wsched/internal/policy"
	"github.com/wsched/wsched/trace"
)

// Policy is one scheduling rule, of one of four kinds: whom an add or a
// stage opening wakes (Config.Wake), how many packets a steal takes
// (Config.Steal), how many a bucket take moves (Config.Take), and the order
// of a worker's own queue (Config.Local). The zero Policy selects the
// field's default. A Policy is its name as text ("wake-n", "take-guided"),
// so flag.TextVar and configuration files read it; New rejects a policy of
// the wrong kind for its field.
//
// A wake policy is also an Option of Add and AddAll, overriding Config.Wake
// for one call.
type Policy uint8

const (
	// WakeOne wakes one parked worker per add (MMTk's add).
	WakeOne = Policy(policy.WakeOne)
	// WakeAll wakes every parked worker (MMTk's bulk_add). In MMTk's luindex
	// case (mmtk-core #1200) early wakers took the few packets in batches
	// away from late ones.
	WakeAll = Policy(policy.WakeAll)
	// WakeN wakes min(packets, parked) workers (MMTk #1589, Rayon). The
	// default: with 16 workers on an idle 16-vCPU host the throttled
	// searcher was 1.56× slower on a bulk add of 4,096 2-µs packets, 10.7%
	// on gcmark, 9.6% on the fan-out and 5.0% on prepare (all proven at
	// 95%), and WakeN was proven slower nowhere
	// (benchmarks/results/DEFAULTS.md).
	WakeN = Policy(policy.WakeN)
	// WakeSearcher wakes one parked worker only if no worker is searching; a
	// searcher that finds work wakes the next (the Go runtime, Tokio).
	WakeSearcher = Policy(policy.WakeSearcher)

	// StealOne takes one packet per steal (MMTk, Rayon).
	StealOne = Policy(policy.StealOne)
	// StealHalf takes ⌈n ÷ 2⌉ of a victim's n packets, at most
	// Config.StealLimit (the Go runtime, Tokio). The default.
	StealHalf = Policy(policy.StealHalf)

	// TakeFair takes min(BucketBatch, ⌈depth ÷ workers⌉) packets from a
	// bucket: at most a worker's fair share, so that the first worker to
	// reach a small stage does not hoard it (mmtk-core #1507: gcmark's
	// 32-packet Release stage ran 3.6× its bound at 16 workers when one
	// take grabbed all 32).
	TakeFair = Policy(policy.TakeFair)
	// TakeFixed takes BucketBatch whenever the bucket holds that many
	// (MMTk's rule).
	TakeFixed = Policy(policy.TakeFixed)
	// TakeGuided takes what TakeFair takes, or ⌈depth ÷ 2·workers⌉ when that
	// is more, up to four times BucketBatch and 128: while a bucket is deep
	// a bulk add costs a quarter of the takes, and as it drains the takes
	// shrink back to the fair share. The default: on the 2-vCPU EPYC it
	// made the 16,384-packet fan-out 9.8% (1 worker) and 25.2% (2 workers)
	// faster than TakeFair, proven, and was proven slower nowhere
	// (benchmarks/results/DEFAULTS.md).
	TakeGuided = Policy(policy.TakeGuided)

	// LocalPrivate runs a worker's spawned packets newest first from a
	// private stack of up to 256 packets, invisible to thieves while every
	// worker is busy; while a worker is idle, every spawn and packet
	// boundary offers all but the newest to the deque that thieves take
	// from (oldest first). The default: a spawn costs plain stores, no
	// atomics.
	LocalPrivate = Policy(policy.LocalPrivate)
	// LocalLIFO runs spawned packets newest first from a deque that thieves
	// see at once: no packet waits behind a long one, at the price of the
	// deque's atomics on every spawn.
	LocalLIFO = Policy(policy.LocalLIFO)
	// LocalFIFO runs spawned packets oldest first, from a deque thieves see
	// at once.
	LocalFIFO = Policy(policy.LocalFIFO)
)

// String returns the policy's name ("wake-n", ...; "default" for the zero
// Policy).
func (p Policy) String() string { return policy.Kind(p).String() }

// MarshalText returns the policy's name; an unknown Policy is an error.
func (p Policy) MarshalText() ([]byte, error) {
	if !policy.Kind(p).Valid() {
		return nil, fmt.Errorf("%w: unknown policy %d", ErrInvalid, uint8(p))
	}
	return []byte(p.String()), nil
}

// UnmarshalText sets p to the policy named text ("default" is the zero
// Policy).
func (p *Policy) UnmarshalText(text []byte) error {
	k, ok := policy.Parse(string(text))
	if !ok {
		return fmt.Errorf("%w: unknown policy %q (want one of: %s, %s, %s, %s, or default)", ErrInvalid, text,
			strings.Join(policy.Names(policy.FamilyWake), ", "), strings.Join(policy.Names(policy.FamilySteal), ", "),
			strings.Join(policy.Names(policy.FamilyTake), ", "), strings.Join(policy.Names(policy.FamilyLocal), ", "))
	}
	*p = Policy(k)
	return nil
}

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
	Wake Policy
	// Steal is how much a worker steals from another's deque; zero means
	// StealHalf.
	Steal Policy
	// StealLimit caps a StealHalf steal, 1..128; zero means 128, the most
	// packets a thief takes in one steal (benchmarks/results/DEFAULTS.md
	// has the sweep that chose it).
	StealLimit int
	// Take is how many packets a bucket take moves; zero means TakeGuided.
	Take Policy
	// BucketBatch is the bucket batch of the take policies: the most
	// packets a take moves under TakeFair and TakeFixed, and while the
	// bucket holds at most 2 × Workers × BucketBatch under TakeGuided; zero
	// means 32 (MMTk takes 33, crossbeam's MAX_BATCH of 32 plus the popped
	// one); at most 128 packets move in one take whatever its value.
	BucketBatch int
	// Local is the order of a worker's own queue; zero means LocalPrivate.
	Local Policy
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
	// the workers or from packets) and not yet taken by a worker; zero
	// means unbounded, the default, because a garbage collector's work must
	// never wait. An add queues only if all its packets fit: one that
	// would take the queue past MaxQueued returns ErrQueueFull and queues
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
	// Tracer receives the scheduler's trace events; nil turns tracing off.
	// It must have been made for Workers workers, and records one
	// Scheduler: New rejects a Recorder another Scheduler uses.
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
	defaultBucketBatch = 32
	defaultSpins       = 64
	defaultParkSpin    = 200 * time.Microsecond
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
// when unknown or of another family.
func checkPolicy(field string, p Policy, fam policy.Family, def policy.Kind) (Policy, error) {
	k := policy.Kind(p)
	switch {
	case k == policy.Default:
		return Policy(def), nil
	case !k.Valid():
		return p, configError("%s = %s: unknown policy", field, p)
	case k.Family() != fam:
		return p, configError("%s = %s: not a %s policy (want %s)", field, p, strings.ToLower(field),
			strings.Join(policy.Names(fam), ", "))
	}
	return p, nil
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
	if cfg.Wake, err = checkPolicy("Wake", cfg.Wake, policy.FamilyWake, policy.DefaultWake); err != nil {
		return cfg, err
	}
	if cfg.Steal, err = checkPolicy("Steal", cfg.Steal, policy.FamilySteal, policy.DefaultSteal); err != nil {
		return cfg, err
	}
	if cfg.Take, err = checkPolicy("Take", cfg.Take, policy.FamilyTake, policy.DefaultTake); err != nil {
		return cfg, err
	}
	if cfg.Local, err = checkPolicy("Local", cfg.Local, policy.FamilyLocal, policy.DefaultLocal); err != nil {
		return cfg, err
	}
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
		return cfg, configError("Tracer has %d worker buffers, Workers = %d", cfg.Tracer.Workers(), cfg.Workers)
	}
	return cfg, nil
}

const unconstrainedName = "Unconstrained"

// traceConfig describes the validated cfg for a trace (Recorder.SetConfig):
// what `wsched simulate` replays a trace under unless told otherwise.
func (cfg Config) traceConfig() string {
	return fmt.Sprintf("wake=%s steal=%s steal_limit=%d take=%s bucket_batch=%d local=%s spins=%d park_spin_ns=%d max_queued=%d",
		cfg.Wake, cfg.Steal, cfg.StealLimit, cfg.Take, cfg.BucketBatch, cfg.Local, cfg.Spins, int64(cfg.ParkSpin), cfg.MaxQueued)
}
