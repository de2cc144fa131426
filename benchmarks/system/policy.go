package system

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wsched/wsched/scheduler"
)

// A Policy is a set of wsched scheduler settings to benchmark, written as
// "default" or as settings joined by '+':
//
//	wake=one|all|n|searcher    Config.Wake: WakeOne ... WakeSearcher
//	steal=one|half|batch:N     Config.Steal: StealOne, StealHalf, or
//	                           StealHalf with Config.StealLimit N (1..128)
//	batch=N                    Config.BucketBatch (bucket batch limit)
//	spins=N                    Config.Spins (search rounds before parking)
//	parkspin=DUR|off           Config.ParkSpin (how long a parked worker polls
//	                           for its wake-up before blocking; a Go
//	                           duration such as 50us, or off)
//	order=lifo|fifo            Config.Local: lifo is the default newest-first
//	                           order, LocalPrivate (a private stack in front of
//	                           the deque); fifo is LocalFIFO
//	take=fair|fixed|guided     Config.Take (fixed: MMTk's whole batches;
//	                           guided, the default: up to 128 while the
//	                           bucket is deep)
//	spawn=queue|inline|split|worklist
//	                           how tasks spawn children: scheduler.Spawn
//	                           (queue, the default) or scheduler.SpawnOrRun
//	                           (inline: run the child at once unless idle
//	                           workers lack queued work, as the errgroup
//	                           peer's TryGo-or-run-inline does); split, the
//	                           tree searches only: a packet searches its
//	                           subtree by plain recursion and spawns a child
//	                           only when Worker.ShouldSplit says a worker
//	                           wants work; worklist, the tree searches
//	                           only: a scheduler.Worklist whose body feeds
//	                           a node's children
//	add=slice|copy             how roots and long lists of children are queued:
//	                           AddAll with scheduler.Lend (slice, the default:
//	                           lent, read in place by the workers; children
//	                           lists of 256 or more from the running packet)
//	                           or AddAll copying them and scheduler.Spawn one
//	                           by one (copy)
//	count=worker|join          how the tree searches (utsgeo, utsbin) add up
//	                           their node count: each node on its worker's
//	                           counter, indexed by Worker.ID (worker, the
//	                           default), or through a scheduler.Join per
//	                           node with children (join); the task trees run
//	                           only count=worker (and not spawn=split or worklist), the
//	                           examples ignore both
//
// for example "wake=all+steal=batch:8". These short names are the
// harness's own (committed result files and scripts use them); wake, steal,
// order and take also take the scheduler's policy names, as
// the scheduler's policy types' UnmarshalText reads them: wake=wake-all,
// steal=steal-one, order=local-lifo (a LIFO deque without the private
// stack), take=take-fixed. Settings not named keep the scheduler's
// defaults. The spec string itself is the policy's name in results, so it
// must not contain '/', ',' or spaces.
type Policy struct {
	Spec string

	Wake       scheduler.WakePolicy  // 0 = default
	Steal      scheduler.StealPolicy // 0 = default
	StealLimit int                   // 0 = default (steal=batch:N sets it)
	Batch      int                   // 0 = default
	Spins      int                   // -1 = default
	ParkSpin   time.Duration         // 0 = default; ParkSpinOff = off
	Local      scheduler.LocalPolicy // 0 = default
	Take       scheduler.TakePolicy  // 0 = default (guided bucket takes)
	Inline     bool                  // spawn with scheduler.SpawnOrRun
	Split      bool                  // tree searches: recursion, Spawn when Worker.ShouldSplit (spawn=split)
	Worklist   bool                  // tree searches: a scheduler.Worklist feeding the children (spawn=worklist)
	CopyAdd    bool                  // queue roots with AddAll copying, not lending
	JoinCount  bool                  // tree searches count through joins (count=join)
}

// ParkSpinOff is Policy.ParkSpin for parkspin=off: a negative
// Config.ParkSpin, a parked worker blocks at once.
const ParkSpinOff time.Duration = -1

// DefaultPolicy is the scheduler's defaults.
var DefaultPolicy = Policy{Spec: "default", Spins: -1}

// policyNames maps each setting's short values to the scheduler's policy
// names.
var policyNames = map[string]map[string]string{
	"wake":  {"one": "wake-one", "all": "wake-all", "n": "wake-n", "searcher": "wake-searcher"},
	"steal": {"one": "steal-one", "half": "steal-half"},
	"order": {"lifo": "local-private", "fifo": "local-fifo"},
	"take":  {"fair": "take-fair", "fixed": "take-fixed", "guided": "take-guided"},
}

// parsePolicyValue returns the scheduler policy of type P that setting k's
// value v names: a short name of the harness's, or one of the scheduler's
// names of P's family ("default" is neither).
func parsePolicyValue[P any, PP interface {
	*P
	UnmarshalText([]byte) error
}](k, v string) (P, bool) {
	var p P
	name, ok := policyNames[k][v]
	if !ok {
		name = v
	}
	if name == "default" || PP(&p).UnmarshalText([]byte(name)) != nil {
		return p, false
	}
	return p, true
}

// ParsePolicy parses a policy spec.
func ParsePolicy(spec string) (Policy, error) {
	p := Policy{Spec: spec, Spins: -1}
	if spec == "" || spec == "default" {
		p.Spec = "default"
		return p, nil
	}
	if strings.ContainsAny(spec, "/, \t") {
		return p, fmt.Errorf("policy %q: must not contain '/', ',' or spaces", spec)
	}
	for _, item := range strings.Split(spec, "+") {
		k, v, ok := strings.Cut(item, "=")
		if !ok || v == "" {
			return p, fmt.Errorf("policy %q: %q is not key=value", spec, item)
		}
		switch k {
		case "wake":
			w, ok := parsePolicyValue[scheduler.WakePolicy](k, v)
			if !ok {
				return p, fmt.Errorf("policy %q: wake must be one, all, n or searcher (or wake-one ...)", spec)
			}
			p.Wake = w
		case "steal":
			if rest, ok := strings.CutPrefix(v, "batch:"); ok {
				n, err := strconv.Atoi(rest)
				if err != nil || n < 1 || n > maxSteal {
					return p, fmt.Errorf("policy %q: steal=batch:N needs 1 <= N <= %d", spec, maxSteal)
				}
				p.Steal, p.StealLimit = scheduler.StealHalf, n
				break
			}
			st, ok := parsePolicyValue[scheduler.StealPolicy](k, v)
			if !ok {
				return p, fmt.Errorf("policy %q: steal must be one, half or batch:N (1 <= N <= %d)", spec, maxSteal)
			}
			p.Steal, p.StealLimit = st, 0
		case "batch", "spins":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return p, fmt.Errorf("policy %q: %s must be a number >= 1", spec, k)
			}
			if k == "batch" {
				p.Batch = n
			} else {
				p.Spins = n
			}
		case "parkspin":
			if v == "off" {
				p.ParkSpin = ParkSpinOff
				break
			}
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 || d > time.Second {
				return p, fmt.Errorf("policy %q: parkspin must be off or a duration in (0, 1s], such as 50us", spec)
			}
			p.ParkSpin = d
		case "order":
			l, ok := parsePolicyValue[scheduler.LocalPolicy](k, v)
			if !ok {
				return p, fmt.Errorf("policy %q: order must be lifo or fifo (or local-private, local-lifo, local-fifo)", spec)
			}
			p.Local = l
		case "take":
			tp, ok := parsePolicyValue[scheduler.TakePolicy](k, v)
			if !ok {
				return p, fmt.Errorf("policy %q: take must be fair, fixed or guided", spec)
			}
			p.Take = tp
		case "spawn":
			switch v {
			case "queue", "inline", "split", "worklist":
				p.Inline, p.Split, p.Worklist = v == "inline", v == "split", v == "worklist"
			default:
				return p, fmt.Errorf("policy %q: spawn must be queue, inline, split or worklist", spec)
			}
		case "add":
			switch v {
			case "slice", "copy":
				p.CopyAdd = v == "copy"
			default:
				return p, fmt.Errorf("policy %q: add must be slice or copy", spec)
			}
		case "count":
			switch v {
			case "worker", "join":
				p.JoinCount = v == "join"
			default:
				return p, fmt.Errorf("policy %q: count must be worker or join", spec)
			}
		default:
			return p, fmt.Errorf("policy %q: unknown setting %q (wake, steal, batch, spins, parkspin, order, take, spawn, add, count)", spec, k)
		}
	}
	return p, nil
}

// maxSteal is the most packets one steal takes (Config.StealLimit's bound).
const maxSteal = 128

// ParsePolicies parses a comma-separated list of policy specs.
func ParsePolicies(list string) ([]Policy, error) {
	var out []Policy
	seen := map[string]bool{}
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		p, err := ParsePolicy(s)
		if err != nil {
			return nil, err
		}
		if seen[p.Spec] {
			return nil, fmt.Errorf("policy %q listed twice", p.Spec)
		}
		seen[p.Spec] = true
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no policies in %q", list)
	}
	return out, nil
}
