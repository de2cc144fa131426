// Package wsfile reads the Perfetto files wsched writes, once, into the
// one model its readers share: trace/analyze (the report, the verdicts and
// the SVG timeline) and trace/simulate (the replay's workload). There is
// one loader, [Load], with one set of rules and messages; a reader derives
// what it needs from the [File] and never decodes the bytes again
// (analyze's verdicts replay from analyze's own decoding through
// simulate.FromFile).
//
// # Model
//
// A File holds the workers whose tracks the file describes, each with its
// packet and park slices (by start), the wake-ups it received and the
// times of the events it recorded itself; the cycles and stage slices;
// steals and wakes; the steal arrows' starts; the add calls; the counters;
// the scheduler's configuration as recorded; and, for each packet, how it
// was queued when the file says (perfetto.Options.Origins).
//
// Underneath, [Decls] follows what the file declares packet by packet:
// each sequence's interned strings, the wsched process track and its
// worker count, what each track descriptor says the track is, and each
// sequence's origins codec; [Tracks] maps track uuids to a reader's state
// and holds the rule that an event follows its track's descriptor.
//
// # Rules
//
// Load fails, never panics, on input it cannot read: not Perfetto ("not a
// valid Perfetto trace"), not wsched's ([ErrNotWsched]), a process track
// without a worker count or with more than [MaxWorkers], a worker track
// beyond the count, a track described twice, an event before its track's
// descriptor, an END without a BEGIN, slices nested deeper than 65,536 or
// left open at the end, a slice that ends before it begins, a slice or a
// counter value on the wrong kind of track, cycles or stage slices that
// overlap. Each error names the packet and byte it is at. What only the
// replay reads, the recorded configuration and the add calls, Load keeps
// as it finds it (File.Config; File.AddsErr for an add of no known kind,
// stage or wake policy): trace/simulate refuses such a file, and
// trace/analyze reports on it with no predictions, saying why.
//
// # Costs
//
// Time O(n log n) (the sorts) and memory O(n) in the events the file
// holds, not in what it claims: a worker takes room once its track is
// described. A packet slice takes 48 bytes and each event a worker
// records itself 8 more (its mark); trace/analyze's BenchmarkAnalyze
// measures the whole analysis at 16-21 bytes allocated per byte of a
// demo or simulated file, and its fuzz budgets (FuzzAnalyze, FuzzSVG,
// FuzzSimulate) hold every input to a multiple of its size.
package wsfile
