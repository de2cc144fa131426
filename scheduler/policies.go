package scheduler

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/wsched/wsched/internal/policy"
)

// Policies: four families, one type each, so that a policy of one family
// in another's place does not compile (Config{Wake: StealHalf} is a type
// error). The zero value of each type selects its Config field's default.
// Each is its name as text ("wake-n", "take-guided", "default" for the
// zero value), so flag.TextVar and configuration files read it, and each
// rejects the names of the other families when it reads one.

// WakePolicy is whom an add or a stage opening wakes (Config.Wake). A
// WakePolicy is also an Option of Add and AddAll, overriding Config.Wake
// for one call; it is the only policy family that is.
type WakePolicy uint8

// StealPolicy is how many packets a steal takes (Config.Steal).
type StealPolicy uint8

// TakePolicy is how many packets a bucket take moves (Config.Take).
type TakePolicy uint8

// LocalPolicy is the order of a worker's own queue (Config.Local).
type LocalPolicy uint8

const (
	// WakeOne wakes one parked worker per add (MMTk's add).
	WakeOne = WakePolicy(policy.WakeOne)
	// WakeAll wakes every parked worker (MMTk's bulk_add). In MMTk's luindex
	// case (mmtk-core #1200) early wakers took the few packets in batches
	// away from late ones.
	WakeAll = WakePolicy(policy.WakeAll)
	// WakeN wakes min(packets, parked) workers (MMTk #1589, Rayon). The
	// default: with 16 workers on an idle 16-vCPU host the throttled
	// searcher was 1.56× slower on a bulk add of 4,096 2-µs packets, 10.7%
	// on gcmark, 9.6% on the fan-out and 5.0% on prepare (all proven at
	// 95%), and WakeN was proven slower nowhere
	// (benchmarks/results/DEFAULTS.md).
	WakeN = WakePolicy(policy.WakeN)
	// WakeSearcher wakes one parked worker only if no worker is searching; a
	// searcher that finds work wakes the next (the Go runtime, Tokio).
	WakeSearcher = WakePolicy(policy.WakeSearcher)
)

const (
	// StealOne takes one packet per steal (MMTk, Rayon).
	StealOne = StealPolicy(policy.StealOne)
	// StealHalf takes ⌈n ÷ 2⌉ of a victim's n packets, at most
	// Config.StealLimit (the Go runtime, Tokio). The default.
	StealHalf = StealPolicy(policy.StealHalf)
)

const (
	// TakeFair takes min(BucketBatch, ⌈depth ÷ workers⌉) packets from a
	// bucket: at most a worker's fair share, so that the first worker to
	// reach a small stage does not hoard it (mmtk-core #1507: gcmark's
	// 32-packet Release stage ran 3.6× its bound at 16 workers when one
	// take grabbed all 32).
	TakeFair = TakePolicy(policy.TakeFair)
	// TakeFixed takes BucketBatch whenever the bucket holds that many
	// (MMTk's rule).
	TakeFixed = TakePolicy(policy.TakeFixed)
	// TakeGuided takes what TakeFair takes, or ⌈depth ÷ 2·workers⌉ when that
	// is more, up to four times BucketBatch and 128: while a bucket is deep
	// a bulk add costs a quarter of the takes, and as it drains the takes
	// shrink back to the fair share. The default: on the 2-vCPU EPYC it
	// made the 16,384-packet fan-out 9.8% (1 worker) and 25.2% (2 workers)
	// faster than TakeFair, proven, and was proven slower nowhere
	// (benchmarks/results/DEFAULTS.md).
	TakeGuided = TakePolicy(policy.TakeGuided)
)

const (
	// LocalPrivate runs a worker's spawned packets newest first from a
	// private stack of up to 256 packets, invisible to thieves while every
	// worker is busy; while a worker is idle, every spawn and packet
	// boundary offers all but the newest to the deque that thieves take
	// from (oldest first). The default: a spawn costs plain stores, no
	// atomics.
	LocalPrivate = LocalPolicy(policy.LocalPrivate)
	// LocalLIFO runs spawned packets newest first from a deque that thieves
	// see at once: no packet waits behind a long one, at the price of the
	// deque's atomics on every spawn.
	LocalLIFO = LocalPolicy(policy.LocalLIFO)
	// LocalFIFO runs spawned packets oldest first, from a deque thieves see
	// at once.
	LocalFIFO = LocalPolicy(policy.LocalFIFO)
)

// String returns the policy's name ("wake-n", ...; "default" for the zero
// value).
func (p WakePolicy) String() string { return familyString(policy.Kind(p), policy.FamilyWake) }

// MarshalText returns the policy's name; a value that is not a wake policy
// is an error.
func (p WakePolicy) MarshalText() ([]byte, error) {
	return marshalPolicy(policy.Kind(p), policy.FamilyWake)
}

// UnmarshalText sets p to the wake policy named text ("default" is the
// zero value); any other name is an error that lists the wake policies.
func (p *WakePolicy) UnmarshalText(text []byte) error {
	k, err := unmarshalPolicy(text, policy.FamilyWake)
	if err == nil {
		*p = WakePolicy(k)
	}
	return err
}

// String returns the policy's name ("steal-half", ...; "default" for the
// zero value).
func (p StealPolicy) String() string { return familyString(policy.Kind(p), policy.FamilySteal) }

// MarshalText returns the policy's name; a value that is not a steal
// policy is an error.
func (p StealPolicy) MarshalText() ([]byte, error) {
	return marshalPolicy(policy.Kind(p), policy.FamilySteal)
}

// UnmarshalText sets p to the steal policy named text ("default" is the
// zero value); any other name is an error that lists the steal policies.
func (p *StealPolicy) UnmarshalText(text []byte) error {
	k, err := unmarshalPolicy(text, policy.FamilySteal)
	if err == nil {
		*p = StealPolicy(k)
	}
	return err
}

// String returns the policy's name ("take-guided", ...; "default" for the
// zero value).
func (p TakePolicy) String() string { return familyString(policy.Kind(p), policy.FamilyTake) }

// MarshalText returns the policy's name; a value that is not a take policy
// is an error.
func (p TakePolicy) MarshalText() ([]byte, error) {
	return marshalPolicy(policy.Kind(p), policy.FamilyTake)
}

// UnmarshalText sets p to the take policy named text ("default" is the
// zero value); any other name is an error that lists the take policies.
func (p *TakePolicy) UnmarshalText(text []byte) error {
	k, err := unmarshalPolicy(text, policy.FamilyTake)
	if err == nil {
		*p = TakePolicy(k)
	}
	return err
}

// String returns the policy's name ("local-private", ...; "default" for
// the zero value).
func (p LocalPolicy) String() string { return familyString(policy.Kind(p), policy.FamilyLocal) }

// MarshalText returns the policy's name; a value that is not a local
// policy is an error.
func (p LocalPolicy) MarshalText() ([]byte, error) {
	return marshalPolicy(policy.Kind(p), policy.FamilyLocal)
}

// UnmarshalText sets p to the local policy named text ("default" is the
// zero value); any other name is an error that lists the local policies.
func (p *LocalPolicy) UnmarshalText(text []byte) error {
	k, err := unmarshalPolicy(text, policy.FamilyLocal)
	if err == nil {
		*p = LocalPolicy(k)
	}
	return err
}

// familyNames names the families in messages.
var familyNames = [...]string{
	policy.FamilyWake:  "wake",
	policy.FamilySteal: "steal",
	policy.FamilyTake:  "take",
	policy.FamilyLocal: "local",
}

// familyString names k as a policy of family fam: its name, "default", or
// for a value outside the family (made by a conversion) "wake-policy(N)".
func familyString(k policy.Kind, fam policy.Family) string {
	if k == policy.Default || k.Family() == fam {
		return k.String()
	}
	return familyNames[fam] + "-policy(" + strconv.Itoa(int(k)) + ")"
}

func marshalPolicy(k policy.Kind, fam policy.Family) ([]byte, error) {
	if k != policy.Default && k.Family() != fam {
		return nil, fmt.Errorf("%w: %s is not a %s policy", ErrInvalid, familyString(k, fam), familyNames[fam])
	}
	return []byte(k.String()), nil
}

func unmarshalPolicy(text []byte, fam policy.Family) (policy.Kind, error) {
	k, ok := policy.Parse(string(text))
	if !ok || (k != policy.Default && k.Family() != fam) {
		return 0, fmt.Errorf("%w: %q is not a %s policy (want one of: %s, or default)", ErrInvalid, text,
			familyNames[fam], strings.Join(policy.Names(fam), ", "))
	}
	return k, nil
}
