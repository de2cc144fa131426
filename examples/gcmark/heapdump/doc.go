// Package heapdump reads the Go runtime's heap dumps
// (runtime/debug.WriteHeapDump; the record layout is in
// $GOROOT/src/runtime/heapdump.go) and turns one into the object graph of
// a real program for gcmark's markers: objects by address, each pointer
// field resolved to the object it points into (interior pointers to the
// object that holds their target), roots from the data and bss segments,
// goroutines' stack frames and contexts, finalizers (a finalizer's
// function, and what an object with a finalizer points to, not the
// object) and queued finalizers.
//
//   - Read parses a dump; its memory follows the bytes it reads (a record
//     that claims a terabyte fails when the input ends, having held what
//     arrived), and Limits bound the objects and fields it keeps.
//   - Dump.Graph resolves the pointers; Graph.Stats counts objects,
//     reachable objects and bytes, pointer fields, the out-degree
//     distribution; Graph.CrossShare is the share of references that leave
//     an address range, or one of k equal ranges of objects (what a marker
//     that gives each packet a range forwards).
//   - Graph.Heap makes a gcmark.Heap (gcmark.NewHeapFrom): objects padded
//     to their size in the dump, big pointer arrays scanned in chunks, one
//     root packet per goroutine's stack and one for the global roots.
//     LoadHeap does all of it for a file; `go run ./examples/gcmark/main
//     -dump FILE` marks it.
//
// The command in main makes real heaps on demand (never commit them: they
// are hundreds of megabytes): a type-checker's (go/types over net/http,
// go/types and cmd/compile/internal/ssa, from source) and an inverted
// index's (every word of every file under GOROOT/src), and prints a dump's
// figures. TestReadOwnDump checks the reader on a dump the test makes of
// its own process.
//
// # Measured
//
// The reader's reachability agrees with the runtime: on the type-checker's
// dump 3,846,163 objects reachable against MemStats.HeapObjects 3,846,161
// after the GC that preceded the dump; on the index's 3,665,803 against
// 3,665,802. Reading a dump of 394 MB takes 6.5 s and 1.1 GB of memory.
//
// Results with the commands: benchmarks/results/xeon2/gcmark-realheaps.
package heapdump
