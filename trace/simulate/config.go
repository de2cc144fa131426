package simulate

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wsched/wsched/internal/policy"
)

// Config is a scheduler configuration to replay under: the fields of
// scheduler.Config that the replay's decisions read, resolved (no zero
// defaults), plus what a replay may change in the workload.
type Config struct {
	Workers     int
	Wake        policy.Kind
	Steal       policy.Kind
	StealLimit  int
	Take        policy.Kind
	BucketBatch int
	Local       policy.Kind
	Spins       int
	ParkSpin    time.Duration // ≤ 0: no poll
	// WakeCalls replaces the wake option of every add call that chose
	// one (an AddAll(..., scheduler.WakeN)): Default keeps each call's.
	WakeCalls policy.Kind
	// Priority names packet types to queue in their stage's priority lane
	// (their add call is split: these packets go to the priority lane,
	// the rest as recorded), the fix for a known-heavy packet queued late.
	Priority []string
	// LearnHeavy replays scheduler.Config.LearnHeavy: from each cycle's
	// packet costs the replay picks the heavy packet types as the
	// scheduler does (policy.PickHeavy and CarryHeavy, a type being a
	// packet name), and in the cycles after it queues their packets of
	// Add and AddAll calls (How AddNormal) to their stage in the priority
	// lane, one add each. A trace does not tell AddValues' calls from
	// AddAll's, nor a value packet from another: the replay learns and
	// routes value packets too, where the scheduler leaves them as added
	// (they count in their stage's work only).
	LearnHeavy bool
	// Seed seeds the steal victims' choice (each worker's generator, as
	// the scheduler seeds it, xor Seed).
	Seed uint64
}

// DefaultConfig is scheduler.Config's defaults (Workers 0: the recorded
// number).
func DefaultConfig() Config {
	return Config{
		Wake: policy.DefaultWake, Steal: policy.DefaultSteal, StealLimit: policy.MaxTake,
		Take: policy.DefaultTake, BucketBatch: policy.DefaultBucketBatch, Local: policy.DefaultLocal,
		Spins: policy.DefaultSpins, ParkSpin: policy.DefaultParkSpin,
	}
}

// set sets the field a trace's "wsched config" argument names (the
// scheduler's traceConfig keys); unknown keys are ignored.
func (c *Config) set(key, val string) error {
	num := func(lo, hi int64) (int64, error) {
		n, err := strconv.ParseInt(val, 10, 64)
		if err != nil || n < lo || n > hi {
			return 0, fmt.Errorf("config %s=%q: want an integer in [%d, %d]", key, val, lo, hi)
		}
		return n, nil
	}
	pol := func(f policy.Family) (policy.Kind, error) {
		k, ok := policy.Parse(val)
		if !ok || k.Family() != f {
			return 0, fmt.Errorf("config %s=%q: not a %s policy", key, val, key)
		}
		return k, nil
	}
	var err error
	var n int64
	switch key {
	case "wake":
		c.Wake, err = pol(policy.FamilyWake)
	case "steal":
		c.Steal, err = pol(policy.FamilySteal)
	case "take":
		c.Take, err = pol(policy.FamilyTake)
	case "local":
		c.Local, err = pol(policy.FamilyLocal)
	case "steal_limit":
		n, err = num(1, policy.MaxTake)
		c.StealLimit = int(n)
	case "bucket_batch":
		n, err = num(1, 1<<20)
		c.BucketBatch = int(n)
	case "spins":
		n, err = num(0, 1<<20)
		c.Spins = int(n)
	case "park_spin_ns":
		n, err = num(-1, int64(time.Second))
		c.ParkSpin = time.Duration(n)
	case "learn_heavy":
		c.LearnHeavy, err = strconv.ParseBool(val)
		if err != nil {
			err = fmt.Errorf("config %s=%q: want true or false", key, val)
		}
	}
	return err
}

// Set applies one "key=value" override as `wsched simulate -policy`
// takes it: a policy name alone ("wake-all", "steal-one", "take-fair",
// "local-lifo"), or wake, steal, take, local, steal_limit, bucket_batch,
// spins, park_spin (a duration), wake_calls (a wake policy for the add
// calls that chose one), priority (a packet name; may repeat),
// learn_heavy (true or false), seed.
func (c *Config) Set(kv string) error {
	k, v, ok := strings.Cut(kv, "=")
	if !ok {
		p, found := policy.Parse(kv)
		if !found || p == policy.Default {
			return fmt.Errorf("%q: not a policy name or key=value", kv)
		}
		switch p.Family() {
		case policy.FamilyWake:
			c.Wake = p
		case policy.FamilySteal:
			c.Steal = p
		case policy.FamilyTake:
			c.Take = p
		case policy.FamilyLocal:
			c.Local = p
		}
		return nil
	}
	switch k {
	case "park_spin":
		d, err := time.ParseDuration(v)
		if err != nil || d > time.Second {
			return fmt.Errorf("park_spin=%q: want a duration up to 1s", v)
		}
		c.ParkSpin = d
		return nil
	case "wake_calls":
		p, found := policy.Parse(v)
		if !found || (p != policy.Default && p.Family() != policy.FamilyWake) {
			return fmt.Errorf("wake_calls=%q: not a wake policy", v)
		}
		c.WakeCalls = p
		return nil
	case "priority":
		if v == "" {
			return fmt.Errorf("priority=: want a packet name")
		}
		c.Priority = append(c.Priority, v)
		return nil
	case "seed":
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return fmt.Errorf("seed=%q: want an unsigned integer", v)
		}
		c.Seed = n
		return nil
	case "wake", "steal", "take", "local", "steal_limit", "bucket_batch", "spins", "learn_heavy":
		return c.set(k, v)
	}
	return fmt.Errorf("%q: unknown key %q", kv, k)
}

// String describes c as `wsched simulate -policy` reads it back.
func (c Config) String() string {
	s := fmt.Sprintf("%s %s steal_limit=%d %s bucket_batch=%d %s spins=%d park_spin=%v",
		c.Wake, c.Steal, c.StealLimit, c.Take, c.BucketBatch, c.Local, c.Spins, c.ParkSpin)
	if c.WakeCalls != policy.Default {
		s += " wake_calls=" + c.WakeCalls.String()
	}
	for _, p := range c.Priority {
		s += " priority=" + p
	}
	if c.LearnHeavy {
		s += " learn_heavy=true"
	}
	if c.Seed != 0 {
		s += " seed=" + strconv.FormatUint(c.Seed, 10)
	}
	return s
}

// validate checks c for a run on a workload.
func (c Config) validate() error {
	switch {
	case c.Workers < 1 || c.Workers > MaxWorkers:
		return fmt.Errorf("workers %d: simulate replays 1 to %d workers", c.Workers, MaxWorkers)
	case c.Wake.Family() != policy.FamilyWake, c.Steal.Family() != policy.FamilySteal,
		c.Take.Family() != policy.FamilyTake, c.Local.Family() != policy.FamilyLocal:
		return fmt.Errorf("policies %s: each of wake, steal, take and local must be set", c)
	case c.StealLimit < 1 || c.StealLimit > policy.MaxTake:
		return fmt.Errorf("steal_limit %d: want 1..%d", c.StealLimit, policy.MaxTake)
	case c.BucketBatch < 1:
		return fmt.Errorf("bucket_batch %d: want at least 1", c.BucketBatch)
	case c.Spins < 0:
		return fmt.Errorf("spins %d: want at least 0", c.Spins)
	}
	return nil
}
