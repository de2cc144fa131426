// Package workload builds the task trees that every executor in the
// benchmarks is asked to run: fan-out (tasks submitted by the caller),
// one spawner, a binary fork-join tree, an irregular tree with
// heavy-tailed branching and costs, and uniform CPU-bound tasks.
//
// # Model
//
// A Tree is immutable: node ids, children, parents and the simulated cost
// of each node (Spin: calibrated xorshift rounds, no memory traffic). An
// Instance is one run of a Tree: node i does its work, spawns its children
// through the executor's Spawner and, for joining trees, the last child to
// finish runs its parent's join (continuation passing), so no task ever
// blocks on another and a fixed pool cannot deadlock. Every run is checked:
// each node completes exactly once.
//
// # Caller roles
//
// The harness builds Trees once and an Instance per operation; an
// Instance's Run is called by the executor's workers, from any goroutine.
//
// # Costs
//
// Besides its Spin, a fan-out node costs at most one atomic add (the
// completion count, when the run checks it) and a joining leaf two atomic
// adds per ancestor it completes, the same for every executor. Spin's
// calibration is checked by TestCalibration.
package workload
