// Package timeline turns a trace.Snapshot into the slices, instants and
// counter samples that the exporters draw, so that the Perfetto and Chrome
// JSON writers show exactly the same thing. It owns every drawing decision:
// which track an event goes on, how stage slices follow each other, what is
// done with events whose partner was dropped, how drops are marked and
// which flows are kept.
//
// Walk calls its callback once per Op, in non-decreasing time order, with
// slices on every track properly nested: an End always closes the
// innermost open slice of its track, and at equal times Ends come before
// the Begins recorded after them.
package timeline
