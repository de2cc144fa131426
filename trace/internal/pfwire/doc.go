// Package pfwire is the Perfetto wire format as wsched reads and writes it:
// the field numbers of its subset of Perfetto's protos (checked against
// trace/perfetto/perfettopb by trace/perfetto's tests), and Decode, which
// walks a file packet by packet and resolves each packet's timestamp as
// Perfetto's trace processor does (trace/perfetto's package doc, "Reading
// timestamps").
//
// Its callers are trace/perfetto (the writer's field numbers, Check) and
// trace/internal/wsfile (the one loader trace/analyze and trace/simulate
// read a wsched file through). Decode reuses one Packet for the whole
// file: memory is O(1) in the packets beyond a packet's own repeated
// fields, time O(bytes).
package pfwire
