// Package policy holds the scheduler's policy decisions as pure functions
// of counts: how many packets a bucket take moves, how many parked workers
// an add or a stage opening wakes, how many packets a steal takes, whether
// a take is held privately. The scheduler (package scheduler) calls them on
// its hot paths and `wsched simulate` (package trace/simulate) calls them
// in its replay, so that a simulated run makes exactly the decisions a real
// one makes: there is one decision code, not two that can drift.
//
// Every decision function on a hot path here is small enough to inline
// and allocates nothing (go build -gcflags=-m ./internal/policy/). The
// exceptions run once a cycle or less: Kind.String and Settings.String,
// which name policies in messages and traces, and PickHeavy and
// CarryHeavy, the learned-heavy choice made at a cycle's end, which
// allocate nothing into buffers with room (TestHeavyAllocs).
package policy

import (
	"cmp"
	"slices"
	"strconv"
	"time"
)

// Kind is one policy of one of four families: wake (whom an add or a stage
// opening wakes), steal (how many packets a steal takes), take (how many a
// bucket take moves) and local (the order of a worker's own queue). The
// zero Kind, Default, stands for the family's default.
type Kind uint8

const (
	Default Kind = iota
	WakeOne
	WakeAll
	WakeN
	WakeSearcher
	StealOne
	StealHalf
	TakeFair
	TakeFixed
	TakeGuided
	LocalPrivate
	LocalLIFO
	LocalFIFO
	end
)

// Family is a Kind's family.
type Family uint8

const (
	FamilyNone Family = iota
	FamilyWake
	FamilySteal
	FamilyTake
	FamilyLocal
)

var names = [...]string{
	Default:      "default",
	WakeOne:      "wake-one",
	WakeAll:      "wake-all",
	WakeN:        "wake-n",
	WakeSearcher: "wake-searcher",
	StealOne:     "steal-one",
	StealHalf:    "steal-half",
	TakeFair:     "take-fair",
	TakeFixed:    "take-fixed",
	TakeGuided:   "take-guided",
	LocalPrivate: "local-private",
	LocalLIFO:    "local-lifo",
	LocalFIFO:    "local-fifo",
}

var families = [...]Family{
	WakeOne: FamilyWake, WakeAll: FamilyWake, WakeN: FamilyWake, WakeSearcher: FamilyWake,
	StealOne: FamilySteal, StealHalf: FamilySteal,
	TakeFair: FamilyTake, TakeFixed: FamilyTake, TakeGuided: FamilyTake,
	LocalPrivate: FamilyLocal, LocalLIFO: FamilyLocal, LocalFIFO: FamilyLocal,
	end: FamilyNone,
}

// Valid reports whether k is Default or a known policy.
func (k Kind) Valid() bool { return k < end }

// Family returns k's family (FamilyNone for Default or an unknown Kind).
func (k Kind) Family() Family {
	if k >= end {
		return FamilyNone
	}
	return families[k]
}

// String returns k's name ("wake-n", "take-guided", ...), or "policy(N)"
// for an unknown Kind.
func (k Kind) String() string {
	if k < end {
		return names[k]
	}
	return "policy(" + strconv.Itoa(int(k)) + ")"
}

// Parse returns the Kind named s, and false if there is none.
func Parse(s string) (Kind, bool) {
	for i, n := range names {
		if s == n {
			return Kind(i), true
		}
	}
	return 0, false
}

// Names returns the names of family f's policies, for messages.
func Names(f Family) []string {
	var out []string
	for k := Kind(1); k < end; k++ {
		if families[k] == f {
			out = append(out, names[k])
		}
	}
	return out
}

// Defaults, each justified where the scheduler documents its Config field
// and chosen by the sweeps in
// benchmarks/results/DEFAULTS.md.
const (
	DefaultWake  = WakeN
	DefaultSteal = StealHalf
	DefaultTake  = TakeGuided
	DefaultLocal = LocalPrivate
)

// Resolve returns k, or def when k is Default.
func Resolve(k, def Kind) Kind {
	if k == Default {
		return def
	}
	return k
}

// MaxTake is the most packets one bucket take or one steal moves: one
// block of a bucket's queue, and the size of a worker's private array for
// a taken or stolen batch. The Go runtime and Tokio steal at most as many
// (half of a 256-slot run queue).
const MaxTake = 128

// GuidedFactor bounds a guided take at this many times the bucket batch
// (and at MaxTake): with the default batch of 32, one bucket block of 128,
// and a small batch keeps takes small.
const GuidedFactor = 4

// MinHeld is the fewest packets, beyond the one run at once, that a worker
// keeps private from a full take or a steal; fewer go to its deque at once.
// Near the end of a stage a packet held behind a long one keeps an idle
// worker waiting for the whole long packet (examples/prepare's
// configuration (d) on 2 workers: holding every take of 8 or more ran its
// Prepare stage 1.09–1.14× its bound against 1.035–1.055).
const MinHeld = 8

// TakeLimit is how many packets a take from a bucket's normal lane may
// move under take (TakeFair, TakeFixed or TakeGuided), for a bucket batch
// of batch, a lane depth packets deep and workers workers; at least 1 and
// at most min(MaxTake, GuidedFactor × batch).
//
//   - TakeFixed takes batch (MMTk's rule).
//   - TakeFair takes min(batch, ⌈depth ÷ workers⌉): at most the worker's
//     fair share, so that the first worker to reach a small stage does not
//     hoard it while the others wake (mmtk-core #1507).
//   - TakeGuided takes what TakeFair takes, or ⌈depth ÷ 2·workers⌉ when
//     that is more, up to GuidedFactor × batch and MaxTake: guided
//     self-scheduling with factoring's factor of two. While a bucket is
//     deep a take moves up to four batches; as it drains, takes shrink
//     back to the fair share, so the end of a stage is unchanged.
func TakeLimit(take Kind, batch, depth, workers int) int {
	batch = min(batch, MaxTake)
	if take == TakeFixed {
		return max(batch, 1)
	}
	limit := max(1, min(batch, (depth+workers-1)/workers)) // the fair share
	if take == TakeGuided {
		if g := (depth + 2*workers - 1) / (2 * workers); g > limit {
			limit = min(g, GuidedFactor*batch, MaxTake)
		}
	}
	return limit
}

// HoldTake reports whether a worker keeps a bucket take of got packets
// (the one it runs included) private: only a full take, one that the
// fair share did not cut (got ≥ min(batch, MaxTake)), with at least
// MinHeld packets beyond the one it runs. Others go to its deque, where
// idle workers can take them.
func HoldTake(got, batch int) bool {
	return got >= min(batch, MaxTake) && got-1 >= MinHeld
}

// HoldSteal reports whether a thief keeps a stolen batch of got packets
// private: with at least MinHeld beyond the one it runs.
func HoldSteal(got int) bool { return got-1 >= MinHeld }

// StealLimit is the most packets one steal takes under steal (StealOne or
// StealHalf) with a limit of limit (1..MaxTake) for StealHalf. A steal
// under StealHalf takes ⌈n ÷ 2⌉ of a victim's n packets, at most that.
func StealLimit(steal Kind, limit int) int {
	if steal == StealOne {
		return 1
	}
	return limit
}

// StealCount is how many of a victim's n packets a steal with limit
// takes: ⌈n ÷ 2⌉, at most limit (so 1 under StealOne's limit of 1).
func StealCount(n, limit int) int { return min((n+1)/2, limit) }

// AddWakes is how many parked workers an add of k visible packets wakes
// under wake, with parked workers parked and searching searching: WakeOne
// one, WakeAll all, WakeN min(k, parked), WakeSearcher one if nobody
// searches. A one-packet add uses SingleWake(wake).
func AddWakes(wake Kind, k, parked, searching int) int {
	switch wake {
	case WakeAll:
		return parked
	case WakeN:
		return min(k, parked)
	case WakeSearcher:
		if searching != 0 {
			return 0
		}
	}
	return min(1, parked)
}

// SingleWake is the policy of a one-packet add under the scheduler's wake
// policy wake: one worker, throttled under WakeSearcher.
func SingleWake(wake Kind) Kind {
	if wake == WakeSearcher {
		return WakeSearcher
	}
	return WakeOne
}

// OpenWakes is how many workers a stage opening with k visible packets
// wakes under wake, on workers workers (the opener included when it
// resumes itself): WakeAll every worker, WakeN k, WakeOne and WakeSearcher
// one (the rest follow as work spreads).
func OpenWakes(wake Kind, k, workers int) int {
	switch wake {
	case WakeAll:
		return workers
	case WakeN:
		return k
	}
	return 1
}

// Surplus reports whether a worker whose deque gained packets (or a thief
// that left packets behind) wakes one parked worker: when some worker is
// parked and none searches.
func Surplus(parked, searching int) bool { return parked != 0 && searching == 0 }

// WantsWork reports whether a worker with local packets in its deque
// should offer more, or hand a child off instead of running it inline:
// some worker is idle (parked or searching) and the deque holds fewer
// packets than there are idle workers.
func WantsWork(idle, local int) bool { return idle != 0 && local < idle }

// Offer is what a worker offers to idle workers at a spawn or a packet
// boundary (the scheduler's offerAll), with priv packets on its private
// stack, a held batch if held, local packets in its deque and idle
// workers parked or searching: nothing unless WantsWork(idle, local);
// then every private packet but the newest, if it has two or more
// (movePriv), and the held batch (exposeHeld) if it has one and no
// private packet moved or the deque still holds fewer than idle.
func Offer(priv int, held bool, idle, local int) (movePriv, exposeHeld bool) {
	if !WantsWork(idle, local) {
		return false, false
	}
	movePriv = priv >= 2
	if movePriv {
		local += priv - 1
	}
	return movePriv, held && (!movePriv || WantsWork(idle, local))
}

// GiveUp reports whether a searching worker parks after its spins-th
// empty search round, with maxSpins allowed (Config.Spins) and idle of
// workers workers parked or searching: after maxSpins+1 rounds, or at
// once when no worker runs a packet (nobody could produce work).
func GiveUp(spins, maxSpins, idle, workers int) bool { return spins > maxSpins || idle >= workers }

// Polling reports whether a worker parked for parked nanoseconds still
// polls for its wake-up token, with Config.ParkSpin parkSpin ns (≤ 0:
// it blocks at once): a wake-up then reaches it in microseconds, where a
// blocked one waits for the OS to run its thread.
func Polling(parked, parkSpin int64) bool { return parkSpin > 0 && parked < parkSpin }

// Source is a place a worker takes its next packet from.
type Source uint8

// Sources, in FindOrder.
const (
	SourceDesignated   Source = iota + 1 // its designated queue (AddDesignated)
	SourcePrivate                        // its private stack, newest first (LocalPrivate)
	SourceHeld                           // the rest of its last full bucket take or stolen batch, oldest first
	SourceDeque                          // its deque (Pop: oldest first under LocalPrivate and LocalFIFO)
	SourcePriorityLane                   // an open bucket's priority lane, one packet, stages in order
	SourceNormalLane                     // an open bucket's normal lane, TakeLimit packets, stages in order
	SourceSteal                          // another worker's deque, from a random one, StealLimit packets
)

// FindOrder is the order in which a worker looks for its next packet:
// after a packet, the first four (its own queues, without searching);
// when they are empty, all of them, the buckets and steals in search
// rounds. The scheduler's search is written in this order and
// its TestFindOrder checks it; `wsched simulate` walks this table.
var FindOrder = [...]Source{SourceDesignated, SourcePrivate, SourceHeld, SourceDeque, SourcePriorityLane, SourceNormalLane, SourceSteal}

// The numeric defaults and limits that the scheduler and the replay both
// use (scheduler.Config's defaults and bounds): one definition, so that a
// replay at the defaults is a run at the defaults.
const (
	DefaultBucketBatch = 32
	DefaultSpins       = 64
	DefaultParkSpin    = 200 * time.Microsecond
	// PrivCap is a worker's private stack's size under LocalPrivate: 256
	// packets (6 KiB), the Go runtime's local run queue's. When it is
	// full, half of it moves to the worker's deque.
	PrivCap = 256
	// MaxWorkers bounds Config.Workers: the scheduler's task word keeps a
	// spawn's worker in 12 bits beside two codes (package scheduler checks
	// that it fits at compile time).
	MaxWorkers = 1<<12 - 2
	// MaxStage is the largest StageID (11 bits in the task word).
	MaxStage = 1<<11 - 1
)

// Settings are the scheduler configuration a trace records (its "wsched
// config" argument) and `wsched simulate` replays under unless told
// otherwise: the scheduler writes its own, resolved, and a replay that
// records writes the one it ran.
type Settings struct {
	Wake, Steal, Take, Local Kind
	StealLimit, BucketBatch  int
	Spins                    int
	ParkSpin                 time.Duration
	MaxQueued                int
	LearnHeavy               bool
}

// String is Settings as a trace records them: space-separated key=value
// pairs, the keys wake, steal, steal_limit, take, bucket_batch, local,
// spins, park_spin_ns, max_queued and learn_heavy.
func (c Settings) String() string {
	return "wake=" + c.Wake.String() + " steal=" + c.Steal.String() +
		" steal_limit=" + strconv.Itoa(c.StealLimit) + " take=" + c.Take.String() +
		" bucket_batch=" + strconv.Itoa(c.BucketBatch) + " local=" + c.Local.String() +
		" spins=" + strconv.Itoa(c.Spins) + " park_spin_ns=" + strconv.FormatInt(int64(c.ParkSpin), 10) +
		" max_queued=" + strconv.Itoa(c.MaxQueued) + " learn_heavy=" + strconv.FormatBool(c.LearnHeavy)
}

// Learned heavy packets (scheduler.Config.LearnHeavy, and `wsched
// simulate`'s learn_heavy): at each cycle's normal end the packet types
// whose mean run in a stage reached HeavyShare of that stage's work per
// worker are marked heavy, at most MaxHeavyTypes, the longest mean first;
// one that drops below the share stays for one more cycle (CarryHeavy).
// The scheduler's heavy.go documents the model and its costs.

// HeavyShare is the share of a stage's work per worker (its packets' run
// time summed, divided by the workers) that a packet type's mean run in
// the stage must reach to be marked heavy.
const HeavyShare = 0.5

// MaxHeavyTypes is the most packet types marked heavy at once: a stage
// with more heavy types than this has no few packets that bound it.
const MaxHeavyTypes = 8

// TypeTime is one packet type's runs in one stage of a cycle: how many,
// and their total run time.
type TypeTime struct {
	Stage int
	N     int64
	Total time.Duration
}

// PickHeavy appends to out the indices of ts (one entry per type and
// stage) whose mean run reached HeavyShare of their stage's work per
// worker, the longest mean first, at most MaxHeavyTypes; work[st] is the
// total run time of stage st's packets, workers the workers. Never
// picked: Unconstrained work (stage 0, which runs beside every stage), a
// type alone in its stage (nothing to place it before), any type on one
// worker (order does not change when a stage ends).
func PickHeavy(ts []TypeTime, work []time.Duration, workers int, out []int) []int {
	first := len(out)
	if workers <= 1 {
		return out
	}
	for i, c := range ts {
		if c.Stage == 0 || c.N == 0 || c.Stage >= len(work) || c.Total == work[c.Stage] {
			continue
		}
		share := float64(work[c.Stage]) / float64(workers)
		if float64(c.Total)/float64(c.N) >= HeavyShare*share {
			out = append(out, i)
		}
	}
	picked := out[first:]
	mean := func(i int) time.Duration { return ts[i].Total / time.Duration(ts[i].N) }
	slices.SortStableFunc(picked, func(a, b int) int { return cmp.Compare(mean(b), mean(a)) })
	return out[:first+min(len(picked), MaxHeavyTypes)]
}

// Heavy is one member of a learned heavy set: a packet type (Key: a type
// word and name in the scheduler, a name in a replay), the stage where it
// was heavy, and whether it was below the share in the last cycle (kept
// from the set before by CarryHeavy).
type Heavy[K comparable] struct {
	Key    K
	Stage  int
	Missed bool
}

// CarryHeavy appends to next (the types PickHeavy picked from the cycle
// that just ended) those of old (the set before it) that next lacks and
// that had not missed already, marked Missed, while next holds fewer than
// MaxHeavyTypes: a type leaves the set after two cycles in a row below
// the share, not one, since one run of another type stretched by a
// preemption (milliseconds on a busy host) inflates its stage's work for
// one cycle.
func CarryHeavy[K comparable](next, old []Heavy[K]) []Heavy[K] {
	n := len(next)
	for _, o := range old {
		if o.Missed || len(next) == MaxHeavyTypes {
			continue
		}
		found := false
		for _, e := range next[:n] {
			if e.Key == o.Key && e.Stage == o.Stage {
				found = true
				break
			}
		}
		if !found {
			next = append(next, Heavy[K]{Key: o.Key, Stage: o.Stage, Missed: true})
		}
	}
	return next
}
