package stagetime

import (
	"fmt"
	"sync/atomic"
	"time"
)

// Clock accumulates packet timings per worker and per stage.
type Clock struct {
	base    time.Time
	workers [][]Acc // workers[w][stage], written only by worker w
	names   []string
	start   int64
	open    []atomic.Int64 // per stage; 0 = not given (Open stores t+1)
}

// Acc is the raw accumulation for one stage on one worker (or merged).
type Acc struct {
	Packets int64
	Work    int64 // ns, sum of packet durations
	Longest int64 // ns
	First   int64 // ns since the clock's base; start of the earliest packet
	Last    int64 // ns since the clock's base; end of the latest packet
}

func (a *Acc) merge(b Acc) {
	if b.Packets == 0 {
		return
	}
	if a.Packets == 0 || b.First < a.First {
		a.First = b.First
	}
	if b.Last > a.Last {
		a.Last = b.Last
	}
	if b.Longest > a.Longest {
		a.Longest = b.Longest
	}
	a.Packets += b.Packets
	a.Work += b.Work
}

// New returns a clock for a scheduler with the given number of workers;
// stages[i] names stage index i (index 0 is conventionally "Unconstrained").
func New(workers int, stages []string) *Clock {
	if workers <= 0 {
		panic("stagetime: workers must be positive")
	}
	c := &Clock{
		base:    time.Now(),
		workers: make([][]Acc, workers),
		names:   append([]string(nil), stages...),
		open:    make([]atomic.Int64, len(stages)),
	}
	// One backing array; each worker's stages are followed by two unused
	// Accs (80 bytes), so no two workers write the same cache line.
	stride := len(stages) + 2
	all := make([]Acc, workers*stride)
	for i := range c.workers {
		c.workers[i] = all[i*stride : i*stride+len(stages) : i*stride+len(stages)]
	}
	return c
}

// Now returns nanoseconds since the clock was made (monotonic).
func (c *Clock) Now() int64 { return int64(time.Since(c.base)) }

// Start resets the accumulators and marks the start of a cycle. Call it
// while no packet runs.
func (c *Clock) Start() {
	for i := range c.workers {
		clear(c.workers[i])
	}
	for i := range c.open {
		c.open[i].Store(0)
	}
	c.start = c.Now()
}

// Open records that stage's work could start at t (from Now). Later calls
// for the same stage in the same cycle are ignored.
func (c *Clock) Open(stage int, t int64) {
	c.open[stage].CompareAndSwap(0, t+1) // first caller wins; read after the cycle
}

// Done records a packet of stage that ran on worker from start (from Now)
// until now. Call it only from worker's goroutine.
func (c *Clock) Done(worker, stage int, start int64) {
	end := c.Now()
	a := &c.workers[worker][stage]
	d := end - start
	if a.Packets == 0 || start < a.First {
		a.First = start
	}
	if end > a.Last {
		a.Last = end
	}
	if d > a.Longest {
		a.Longest = d
	}
	a.Packets++
	a.Work += d
}

// Stage is one stage's figures for the last cycle.
type Stage struct {
	Name       string
	Packets    int64
	Work       time.Duration // sum of packet durations
	Longest    time.Duration // the longest packet
	Makespan   time.Duration // from the stage's start to its last packet's end
	LowerBound time.Duration // max(Longest, Work / workers)
}

// Ratio returns Makespan ÷ LowerBound (0 for an empty stage).
func (s Stage) Ratio() float64 {
	if s.LowerBound <= 0 {
		return 0
	}
	return float64(s.Makespan) / float64(s.LowerBound)
}

// PerPacket returns the mean packet duration.
func (s Stage) PerPacket() time.Duration {
	if s.Packets == 0 {
		return 0
	}
	return s.Work / time.Duration(s.Packets)
}

func (s Stage) String() string {
	return fmt.Sprintf("%s: %d packets, makespan %v, lower bound %v (×%.2f)",
		s.Name, s.Packets, s.Makespan, s.LowerBound, s.Ratio())
}

// Merged returns stage's accumulation over all workers.
func (c *Clock) Merged(stage int) Acc {
	var m Acc
	for i := range c.workers {
		m.merge(c.workers[i][stage])
	}
	return m
}

// Stages returns every stage that ran at least one packet in the last
// cycle, in stage order. Call it after the cycle, while no packet runs.
func (c *Clock) Stages() []Stage {
	var out []Stage
	prevEnd := c.start
	w := int64(len(c.workers))
	for i, name := range c.names {
		m := c.Merged(i)
		if m.Packets == 0 {
			continue
		}
		from := prevEnd
		if o := c.open[i].Load(); o != 0 {
			from = o - 1
		}
		if i == 0 { // the always-open stage starts with the cycle
			from = c.start
		}
		lb := max(m.Longest, (m.Work+w-1)/w)
		out = append(out, Stage{
			Name:       name,
			Packets:    m.Packets,
			Work:       time.Duration(m.Work),
			Longest:    time.Duration(m.Longest),
			Makespan:   time.Duration(m.Last - from),
			LowerBound: time.Duration(lb),
		})
		if i != 0 {
			prevEnd = m.Last
		}
	}
	return out
}
