package heapdump

import (
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"sort"

	"github.com/wsched/wsched/examples/gcmark"
)

// Graph is a dump's object graph: objects by address (ids 0 … n-1 in
// address order), each with its pointer fields resolved to the object
// they point into (an interior pointer to the object that holds its
// target; gcmark.Null for nil and for pointers outside every object), and
// the roots resolved the same way: the stacks' per goroutine, the rest
// (data, bss, finalizers, goroutine contexts) as global roots.
type Graph struct {
	Addr  []uint64
	Size  []uint64
	Lo    []uint32 // object o's slots are Slots[Lo[o]:Lo[o+1]]
	Slots []uint32
	// Stacks[g] are goroutine g's stack roots (Dump.Goroutines order);
	// Global the other roots.
	Stacks [][]uint32
	Global []uint32
	// Interior counts the slots and roots that point inside an object, not
	// at its start; Outside the non-nil ones that point at no object.
	Interior, Outside int
}

// Objects returns the number of objects.
func (g *Graph) Objects() int { return len(g.Addr) }

// Graph resolves the dump's pointers (binary search over the objects,
// O(fields · log objects)).
func (d *Dump) Graph() (*Graph, error) {
	n := len(d.Addr)
	if uint64(n) >= uint64(gcmark.Null) || uint64(len(d.Ptrs)) >= 1<<32 {
		return nil, fmt.Errorf("heapdump: %d objects and %d pointer fields: more than 32-bit ids can name", n, len(d.Ptrs))
	}
	g := &Graph{Addr: d.Addr, Size: d.Size, Lo: make([]uint32, n+1), Slots: make([]uint32, len(d.Ptrs)),
		Stacks: make([][]uint32, len(d.Goroutines))}
	for i := 1; i < n; i++ {
		if d.Addr[i] < d.Addr[i-1]+d.Size[i-1] {
			return nil, fmt.Errorf("%w: objects at %#x (%d bytes) and %#x overlap", ErrFormat, d.Addr[i-1], d.Size[i-1], d.Addr[i])
		}
	}
	for o := range n {
		g.Lo[o+1] = uint32(d.PtrLo[o+1])
	}
	for i, p := range d.Ptrs {
		g.Slots[i] = g.resolve(p)
	}
	for _, r := range d.Roots {
		o := g.resolve(r.Ptr)
		if o == gcmark.Null {
			continue
		}
		switch {
		case r.Referents:
			g.Global = append(g.Global, g.Slots[g.Lo[o]:g.Lo[o+1]]...)
		case r.Kind == RootStack && r.Goroutine >= 0:
			g.Stacks[r.Goroutine] = append(g.Stacks[r.Goroutine], o)
		default:
			g.Global = append(g.Global, o)
		}
	}
	return g, nil
}

// resolve returns the object p points into, or Null; it counts interior
// and outside pointers.
func (g *Graph) resolve(p uint64) uint32 {
	if p == 0 {
		return gcmark.Null
	}
	i := sort.Search(len(g.Addr), func(i int) bool { return g.Addr[i] > p }) - 1
	if i < 0 || p-g.Addr[i] >= max(g.Size[i], 1) {
		g.Outside++
		return gcmark.Null
	}
	if p != g.Addr[i] {
		g.Interior++
	}
	return uint32(i)
}

// Stats are a graph's figures.
type Stats struct {
	Objects, Reachable   int
	Bytes, ReachableSize uint64
	Slots, Edges         int // pointer fields, and those that point to an object
	Interior, Outside    int
	RootSlots            int
	// Degree[k] counts the reachable objects with out-degree (edges) in
	// [2^k - 1, 2^(k+1) - 1): 0, 1–2, 3–6, 7–14, …
	Degree []int
}

// Stats computes the graph's figures, reachability from the roots
// included (O(objects + slots)).
func (g *Graph) Stats() Stats {
	st := Stats{Objects: g.Objects(), Slots: len(g.Slots), Interior: g.Interior, Outside: g.Outside}
	for _, s := range g.Size {
		st.Bytes += s
	}
	for _, s := range g.Slots {
		if s != gcmark.Null {
			st.Edges++
		}
	}
	seen := make([]bool, g.Objects())
	var stack []uint32
	push := func(o uint32) {
		if o != gcmark.Null && !seen[o] {
			seen[o] = true
			stack = append(stack, o)
		}
	}
	for _, s := range g.Stacks {
		st.RootSlots += len(s)
		for _, o := range s {
			push(o)
		}
	}
	st.RootSlots += len(g.Global)
	for _, o := range g.Global {
		push(o)
	}
	for len(stack) > 0 {
		o := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		st.Reachable++
		st.ReachableSize += g.Size[o]
		deg := 0
		for _, s := range g.Slots[g.Lo[o]:g.Lo[o+1]] {
			if s != gcmark.Null {
				deg++
				push(s)
			}
		}
		k := bits.Len(uint(deg+1)) - 1
		for len(st.Degree) <= k {
			st.Degree = append(st.Degree, 0)
		}
		st.Degree[k]++
	}
	return st
}

// CrossShare returns the share of the edges whose source and target lie in
// different address ranges of rangeBytes bytes (aligned), and with parts
// > 0 instead the share that cross between parts equal ranges of object
// ids (what a design that gives each packet a range of the heap
// forwards).
func (g *Graph) CrossShare(rangeBytes uint64, parts int) float64 {
	n := g.Objects()
	cross, edges := 0, 0
	for o := range n {
		for _, t := range g.Slots[g.Lo[o]:g.Lo[o+1]] {
			if t == gcmark.Null {
				continue
			}
			edges++
			if parts > 0 {
				if o*parts/n != int(t)*parts/n {
					cross++
				}
			} else if g.Addr[o]/rangeBytes != g.Addr[t]/rangeBytes {
				cross++
			}
		}
	}
	if edges == 0 {
		return 0
	}
	return float64(cross) / float64(edges)
}

// Heap turns the graph into a gcmark.Heap for the markers: each object a
// header, its pointer fields as reference slots, and scalar words up to
// its size in the dump (a marker reads as much memory as a collector
// would touch in headers and pointer fields, spread as widely), objects
// of gcmark.ChunkSlots slots or more as arrays (scanned in chunks), the
// stacks' roots one root packet per goroutine and the global roots one.
func (g *Graph) Heap(name string) (*gcmark.Heap, error) {
	n := g.Objects()
	p := gcmark.HeapParts{Name: name, Offsets: make([]uint32, n+1), CodeCache: g.Global}
	total := uint64(0)
	for o := range n {
		k := uint64(g.Lo[o+1] - g.Lo[o])
		total += max(1+k, g.Size[o]/4)
	}
	if total >= 1<<32 {
		return nil, fmt.Errorf("heapdump: %d words: more than a gcmark.Heap holds", total)
	}
	p.Words = make([]uint32, 0, total)
	for o := range n {
		slots := g.Slots[g.Lo[o]:g.Lo[o+1]]
		p.Words = append(p.Words, uint32(len(slots)))
		p.Words = append(p.Words, slots...)
		for w := uint64(1 + len(slots)); w < g.Size[o]/4; w++ {
			p.Words = append(p.Words, 0)
		}
		p.Offsets[o+1] = uint32(len(p.Words))
		if len(slots) >= gcmark.ChunkSlots {
			p.Arrays = append(p.Arrays, uint32(o))
		}
	}
	for _, s := range g.Stacks {
		if len(s) > 0 {
			p.Stacks = append(p.Stacks, s)
		}
	}
	return gcmark.NewHeapFrom(p)
}

// LoadHeap reads the dump in file and returns its graph as a gcmark.Heap
// named after the file.
func LoadHeap(file string) (*gcmark.Heap, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d, err := Read(f, Limits{})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	g, err := d.Graph()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return g.Heap("go heap dump " + filepath.Base(file))
}
