// Package system runs task workloads on wsched and on the executors Go
// programmers use today, behind one small interface, so that a benchmark
// runs exactly the same tasks on each.
//
// # Model
//
// A workload is a set of tasks named by int32 ids. The caller submits the
// root tasks; a task may spawn more tasks from inside its body (through the
// Spawner it is handed); Run returns when every task, roots and spawned,
// has finished. Tasks never block on each other (joins are
// continuation-passing, see the workload package), so a fixed-size pool
// cannot deadlock on them.
//
// Each executor is used the way its documentation recommends, with the
// least overhead its API allows: task closures are built once per executor
// (never per run), so the allocations reported per run are the executor's
// own. Where an executor's submit blocks when its workers are busy (errgroup
// with SetLimit, a bounded channel, ants), a task that spawns uses the
// non-blocking form and runs the child inline when the executor is full,
// which is what its users do to avoid deadlock; an executor with no
// non-blocking submit (conc's pool) cannot express spawning workloads and
// says so in Nested.
package system
