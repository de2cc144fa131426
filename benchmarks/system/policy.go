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
//	wake=one|all|n|searcher    Config.Wake
//	steal=one|half|batch:N     Config.Steal
//	batch=N                    Config.BucketBatch (bucket batch limit)
//	spins=N                    Config.Spins (search rounds before parking)
//	parkspin=DUR|off           Config.ParkSpin (how long a parked worker polls
//	                           for its wake-up before blocking; a Go
//	                           duration such as 50us, or off)
//	order=lifo|fifo            Config.LocalFIFO
//	take=fair|fixed|guided     Config.Take (fixed: MMTk's whole batches;
//	                           guided, the default: up to 128 while the
//	                           bucket is deep)
//	spawn=queue|inline         how tasks spawn children: Worker.Spawn (queue,
//	                           the default) or Worker.SpawnOrRun (inline: run
//	                           the child at once unless idle workers lack
//	                           queued work, as
//	                           the errgroup peer's TryGo-or-run-inline does)
//	add=slice|copy             how roots and long lists of children are queued:
//	                           Scheduler.AddSlice (slice, the default: lent,
//	                           read in place by the workers; children lists
//	                           of 256 or more from the running packet) or
//	                           BulkAdd and Worker.Spawn one by one (copy)
//
// for example "wake=all+steal=batch:8". Settings not named keep the
// scheduler's defaults. The spec string itself is the policy's name in
// results, so it must not contain '/', ',' or spaces.
type Policy struct {
	Spec string

	Wake      string        // "" = default
	Steal     string        // "" = default
	Batch     int           // 0 = default
	Spins     int           // -1 = default
	ParkSpin  time.Duration // 0 = default; scheduler.NoParkSpin = off
	LocalFIFO *bool         // nil = default
	Take      string        // "" = default (guided bucket takes)
	Inline    bool          // spawn with Worker.SpawnOrRun
	CopyAdd   bool          // queue roots with BulkAdd, not AddSlice
}

// DefaultPolicy is the scheduler's defaults.
var DefaultPolicy = Policy{Spec: "default", Spins: -1}

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
			switch v {
			case "one", "all", "n", "searcher":
			default:
				return p, fmt.Errorf("policy %q: wake must be one, all, n or searcher", spec)
			}
			p.Wake = v
		case "steal":
			if _, err := scheduler.ParseStealPolicy(v); err != nil || v == "default" {
				return p, fmt.Errorf("policy %q: steal must be one, half or batch:N (1 <= N <= %d)", spec, scheduler.MaxSteal)
			}
			p.Steal = v
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
				p.ParkSpin = scheduler.NoParkSpin
				break
			}
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 || d > time.Second {
				return p, fmt.Errorf("policy %q: parkspin must be off or a duration in (0, 1s], such as 50us", spec)
			}
			p.ParkSpin = d
		case "order":
			switch v {
			case "lifo":
				f := false
				p.LocalFIFO = &f
			case "fifo":
				t := true
				p.LocalFIFO = &t
			default:
				return p, fmt.Errorf("policy %q: order must be lifo or fifo", spec)
			}
		case "take":
			if _, err := scheduler.ParseTakePolicy(v); err != nil || v == "default" {
				return p, fmt.Errorf("policy %q: take must be fair, fixed or guided", spec)
			}
			p.Take = v
		case "spawn":
			switch v {
			case "queue", "inline":
				p.Inline = v == "inline"
			default:
				return p, fmt.Errorf("policy %q: spawn must be queue or inline", spec)
			}
		case "add":
			switch v {
			case "slice", "copy":
				p.CopyAdd = v == "copy"
			default:
				return p, fmt.Errorf("policy %q: add must be slice or copy", spec)
			}
		default:
			return p, fmt.Errorf("policy %q: unknown setting %q (wake, steal, batch, spins, parkspin, order, take, spawn, add)", spec, k)
		}
	}
	return p, nil
}

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
