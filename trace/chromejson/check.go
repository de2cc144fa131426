package chromejson

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/wsched/wsched/trace/internal/problems"
)

// CheckStats summarise a trace Check accepted.
type CheckStats struct {
	Events   int
	Slices   int // B events and X events
	Instants int
	Counters int
	Flows    int
}

// CheckError lists rule violations (the first problems.Max, and the
// total).
type CheckError struct {
	Problems []string
	Total    int
}

func (e *CheckError) Error() string { return problems.Format("chromejson", e.Total, e.Problems) }

type event struct {
	Ph       string          `json:"ph"`
	Name     *string         `json:"name"`
	Cat      string          `json:"cat"`
	Ts       *json.Number    `json:"ts"`
	Dur      *json.Number    `json:"dur"`
	Pid      *int64          `json:"pid"`
	Tid      *int64          `json:"tid"`
	S        string          `json:"s"`
	BindID   json.RawMessage `json:"bind_id"`
	FlowIn   bool            `json:"flow_in"`
	FlowOut  bool            `json:"flow_out"`
	Args     map[string]any  `json:"args"`
	position int
}

type file struct {
	TraceEvents *[]json.RawMessage `json:"traceEvents"`
}

// Check validates a Chrome JSON trace the way Perfetto's JSON importer reads
// it:
//
//  1. the file is an object with a "traceEvents" array of objects;
//  2. ph is one of B, E, X, i, I, C, M; every non-M event has a numeric
//     ts >= 0 and a pid, and every B/E/X/i event a tid; X has dur >= 0;
//  3. per (pid, tid), sorted by ts (file order at equal ts), B and E
//     balance: no E without an open B, none left open;
//  4. M events are process_name or thread_name with a string args.name,
//     and every pid and (pid, tid) that has events is named;
//  5. C events have a name and numeric args;
//  6. every bind_id is a hexadecimal string "0x..." that has a flow_out
//     event and a flow_in event.
func Check(data []byte) (CheckStats, error) {
	var st CheckStats
	var f file
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&f); err != nil {
		return st, fmt.Errorf("chromejson: not a JSON trace: %w", err)
	}
	if f.TraceEvents == nil {
		return st, fmt.Errorf("chromejson: not a JSON trace: no traceEvents array")
	}
	var probs problems.List
	bad := func(i int, format string, args ...any) {
		probs.Add("event %d: "+format, append([]any{i}, args...)...)
	}
	type key struct{ pid, tid int64 }
	type flow struct{ out, in int }
	threads := map[key][]event{}
	named := map[key]bool{}
	procNamed := map[int64]bool{}
	usedThreads := map[key]int{}
	usedProcs := map[int64]int{}
	flows := map[string]*flow{}
	for i, raw := range *f.TraceEvents {
		var e event
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if err := d.Decode(&e); err != nil {
			bad(i, "not an event object: %v", err)
			continue
		}
		e.position = i
		st.Events++
		if e.Ph == "M" {
			name := ""
			if e.Name != nil {
				name = *e.Name
			}
			if _, ok := e.Args["name"].(string); !ok || e.Pid == nil {
				bad(i, "metadata event without pid or string args.name")
				continue
			}
			switch name {
			case "process_name":
				procNamed[*e.Pid] = true
			case "thread_name":
				if e.Tid == nil {
					bad(i, "thread_name without tid")
					continue
				}
				named[key{*e.Pid, *e.Tid}] = true
			default:
				bad(i, "unknown metadata %q", name)
			}
			continue
		}
		if e.Ts == nil {
			bad(i, "%s event without ts", e.Ph)
			continue
		}
		ts, err := e.Ts.Float64()
		if err != nil || ts < 0 {
			bad(i, "bad ts %s", *e.Ts)
			continue
		}
		if e.Pid == nil {
			bad(i, "%s event without pid", e.Ph)
			continue
		}
		usedProcs[*e.Pid] = i
		switch e.Ph {
		case "B", "E", "X", "i", "I":
			if e.Tid == nil {
				bad(i, "%s event without tid", e.Ph)
				continue
			}
			k := key{*e.Pid, *e.Tid}
			usedThreads[k] = i
			if e.Ph != "E" && (e.Name == nil || *e.Name == "") {
				bad(i, "%s event without name", e.Ph)
			}
			if e.Ph == "B" || e.Ph == "E" {
				threads[k] = append(threads[k], e)
			}
			switch e.Ph {
			case "B":
				st.Slices++
			case "X":
				st.Slices++
				if e.Dur == nil {
					bad(i, "X event without dur")
				} else if d, err := e.Dur.Float64(); err != nil || d < 0 {
					bad(i, "X event with bad dur %s", *e.Dur)
				}
			case "i", "I":
				st.Instants++
			}
		case "C":
			st.Counters++
			if e.Name == nil || *e.Name == "" {
				bad(i, "counter without name")
			}
			if len(e.Args) == 0 {
				bad(i, "counter without args")
			}
			for k, v := range e.Args {
				if _, ok := v.(json.Number); !ok {
					bad(i, "counter arg %q is not a number", k)
				}
			}
		default:
			bad(i, "unknown phase %q", e.Ph)
		}
		if len(e.BindID) > 0 {
			var id string
			if err := json.Unmarshal(e.BindID, &id); err != nil || !strings.HasPrefix(id, "0x") {
				bad(i, "bind_id %s is not a \"0x...\" string", e.BindID)
				continue
			}
			if _, err := strconv.ParseUint(id[2:], 16, 64); err != nil {
				bad(i, "bind_id %q is not hexadecimal", id)
				continue
			}
			if !e.FlowIn && !e.FlowOut {
				bad(i, "bind_id without flow_in or flow_out")
			}
			fl := flows[id]
			if fl == nil {
				fl = &flow{}
				flows[id] = fl
			}
			if e.FlowOut {
				fl.out++
			}
			if e.FlowIn {
				fl.in++
			}
		}
	}
	keys := make([]key, 0, len(threads))
	for k := range threads {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int {
		if c := cmp.Compare(a.pid, b.pid); c != 0 {
			return c
		}
		return cmp.Compare(a.tid, b.tid)
	})
	for _, k := range keys {
		evs := threads[k]
		slices.SortStableFunc(evs, func(a, b event) int {
			x, _ := a.Ts.Float64()
			y, _ := b.Ts.Float64()
			return cmp.Compare(x, y)
		})
		depth := 0
		for _, e := range evs {
			if e.Ph == "B" {
				depth++
			} else if depth == 0 {
				bad(e.position, "E on pid %d tid %d with no open B", k.pid, k.tid)
			} else {
				depth--
			}
		}
		if depth > 0 {
			bad(evs[len(evs)-1].position, "pid %d tid %d ends with %d open slice(s)", k.pid, k.tid, depth)
		}
	}
	for k, i := range usedThreads {
		if !named[k] {
			bad(i, "thread pid %d tid %d has no thread_name", k.pid, k.tid)
		}
	}
	for p, i := range usedProcs {
		if !procNamed[p] {
			bad(i, "process %d has no process_name", p)
		}
	}
	ids := make([]string, 0, len(flows))
	for id := range flows {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if fl := flows[id]; fl.out == 0 || fl.in == 0 {
			probs.Add("flow %s has %d source(s) and %d destination(s)", id, fl.out, fl.in)
		}
	}
	st.Flows = len(flows)
	if probs.Total > 0 {
		return st, &CheckError{Problems: probs.Msgs, Total: probs.Total}
	}
	return st, nil
}
