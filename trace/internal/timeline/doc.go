// Package timeline turns a trace.Snapshot into the slices, instants and
// counter samples that the exporters draw, so that the Perfetto and Chrome
// JSON writers show exactly the same thing. It owns every drawing decision:
// which track an event goes on, how stage slices follow each other, what is
// done with events whose partner was dropped, how drops are marked and
// which flows are kept.
//
// A steal's flow arrow starts where the stolen packet was queued: a
// KindStealOrigin event (recorded with the steal, on the thief's buffer)
// gives the time and the worker that spawned the packet, or -1 for one
// added from outside the workers. Walk draws it as an instant "queued" at
// that time on that worker's track, or on the control track, belonging to
// the thief's buffer; it comes out among the other ops in time order, so
// before the steal. A steal without a usable origin (unstamped, its origin
// dropped, or born before an Overwrite recorder's oldest event kept)
// starts its arrow at a "stolen" instant on the victim's track at the
// steal. Either way one arrow per steal, ending at the stolen packet's
// slice on the thief.
//
// Walk calls its callback once per Op, in non-decreasing time order, with
// slices on every track properly nested: an End always closes the
// innermost open slice of its track, and at equal times Ends come before
// the Begins recorded after them.
package timeline
