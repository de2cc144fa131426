package gcmark

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Null is the value of a slot that holds no reference.
const Null = ^uint32(0)

// ChunkSlots is the most edges one packet carries: MMTk's edge-buffer size
// (EDGES_WORK_BUFFER_SIZE). A buffer that fills becomes a packet, and a
// reference array longer than this is scanned in chunks of this many slots.
const ChunkSlots = 4096

// CodeCacheSlots is the size of the code-cache root set, scanned as one
// packet: the number of slots ScanCodeCacheRoots held in the luindex
// investigation (mmtk-core #1200).
const CodeCacheSlots = 26845

// Heap is an immutable object graph laid out as objects in memory, plus
// its roots. Object ids are 0 … Objects()-1, in allocation order; object
// i occupies Words[Offsets[i]:Offsets[i+1]]: a header word holding its
// number of reference slots n, those n slots (each an object id or Null),
// then its scalar (non-reference) words. A marker reads an object's header
// and slots, as a collector reads an object's header (its type) and
// pointer fields; it never reads the scalar words, which only take up
// memory between objects.
type Heap struct {
	Offsets   []uint32   // len Objects()+1: where each object starts in Words
	Words     []uint32   // all objects, in id order
	Arrays    []uint32   // ids of the huge reference arrays: ordinary objects (their slots are Slots), listed so that a marker may scan them in chunks
	Stacks    [][]uint32 // one stack of root slots per mutator
	CodeCache []uint32   // the code-cache root slots

	cfg       HeapConfig
	refs      int64  // reference slots, all objects
	generated bool   // built by NewHeap from cfg
	name      string // NewHeapFrom's HeapParts.Name
}

// HeapConfig shapes a synthetic heap. The same config always builds the
// same heap.
type HeapConfig struct {
	Shape      HeapShape // how references are laid out (ShapeBuilt, ShapePowerLaw)
	Objects    int       // number of objects
	LeafShare  float64   // share of objects with no reference slots
	Alpha      float64   // power-law exponent of the other objects' out-degrees
	MaxDegree  int       // cap on an ordinary object's out-degree
	NullShare  float64   // share of slots (object and stack) that hold Null
	Arrays     int       // number of huge reference arrays
	ArraySlots int       // slots per huge array
	Mutators   int       // number of mutator stacks (one root packet each)
	StackSlots int       // minimum slots per stack; depths follow a power law above it
	CodeCache  int       // slots in the code-cache root set
	// ScalarWords is the mean number of scalar words an object holds after
	// its reference slots (exponentially distributed; 0: none): what makes
	// objects take up memory as a program's do.
	ScalarWords float64
	Seed        uint64

	// ShapePowerLaw only: the share of references to an object allocated
	// within 64 of the source (the rest go anywhere).
	Locality float64

	// ShapeBuilt only.
	//
	// LongRange is the share of non-null references that go to any object
	// (a shared type, an interned string, another structure): the knob
	// that trades the heap's locality away.
	LongRange float64
	// Children is the share of the other references that own a new
	// object while the source's subtree has objects left to allocate
	// (the rest point back at an object under construction: a parent).
	Children float64
	// Structure is the smallest structure, in objects; sizes follow a
	// power law above it (exponent 1.2), capped at Objects/16.
	Structure int
}

// HeapShape says how a synthetic heap's references are laid out.
type HeapShape uint8

const (
	// ShapeBuilt allocates objects in the order a program builds its data:
	// structures one after another, each depth-first (an object, then the
	// whole subtree under its first child, then under its second), so
	// that an object's children and their descendants sit right after it.
	// A marker that goes depth-first reads memory in allocation order.
	ShapeBuilt HeapShape = iota + 1
	// ShapePowerLaw points references to nearby objects (within 64 either
	// way) or anywhere, with no tree underneath: a depth-first marker
	// stays near where it is by following the nearby ones at once, but
	// reads no structure in allocation order. (The zero Shape means this
	// one.)
	ShapePowerLaw HeapShape = 0
)

// String names the shape as the command's -shape flag does.
func (s HeapShape) String() string {
	switch s {
	case ShapeBuilt:
		return "built"
	case ShapePowerLaw:
		return "powerlaw"
	}
	return fmt.Sprintf("HeapShape(%d)", uint8(s))
}

// MarshalText implements encoding.TextMarshaler.
func (s HeapShape) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler: "built" or "powerlaw".
func (s *HeapShape) UnmarshalText(b []byte) error {
	switch string(b) {
	case "built":
		*s = ShapeBuilt
	case "powerlaw":
		*s = ShapePowerLaw
	default:
		return fmt.Errorf("gcmark: unknown heap shape %q (want built or powerlaw)", b)
	}
	return nil
}

// DefaultHeapConfig returns the heap the examples use at a given scale: a
// built heap (ShapeBuilt) of 2 Mi objects at scale 1, about 6.5 million
// reference slots, 5% of the non-null ones long-range, objects holding 4
// scalar words on average (64 MB in all), structures of 16 objects or
// more, and four arrays of 32 Ki slots each (at least 10 Ki at any
// scale); the roots (64 mutator stacks and a code cache of CodeCacheSlots
// slots) do not grow with scale, as a program's threads and compiled code
// do not grow with its heap.
func DefaultHeapConfig(scale float64, seed uint64) HeapConfig {
	cfg := PowerLawHeapConfig(scale, seed)
	cfg.Shape = ShapeBuilt
	cfg.Locality = 0
	cfg.LongRange = 0.05
	cfg.Children = 1
	cfg.Structure = 16
	cfg.ScalarWords = 4
	cfg.ArraySlots = max(cfg.Objects/64, 5*ChunkSlots/2)
	return cfg
}

// PowerLawHeapConfig returns the power-law heap (ShapePowerLaw) at a given
// scale: 2 Mi objects at scale 1, about 6.9 million reference slots (36
// MB with the headers), 60% of references to objects within 64 and the
// rest anywhere, four arrays of 128 Ki slots (at least 10 Ki), the same
// degrees and roots as DefaultHeapConfig, and no scalar words.
func PowerLawHeapConfig(scale float64, seed uint64) HeapConfig {
	n := max(int(math.Round(scale*(1<<21))), 1024)
	return HeapConfig{
		Shape:      ShapePowerLaw,
		Objects:    n,
		LeafShare:  0.25,
		Alpha:      1.8,
		MaxDegree:  1024,
		Locality:   0.6,
		NullShare:  0.1,
		Arrays:     4,
		ArraySlots: max(n/16, 5*ChunkSlots/2), // at least three chunks at any scale
		Mutators:   64,
		StackSlots: 64,
		CodeCache:  CodeCacheSlots,
		Seed:       seed,
	}
}

// Config returns the config the heap was built from.
func (h *Heap) Config() HeapConfig { return h.cfg }

// Objects returns the number of objects.
func (h *Heap) Objects() int { return len(h.Offsets) - 1 }

// Slots returns object o's reference slots.
func (h *Heap) Slots(o uint32) []uint32 {
	at := h.Offsets[o]
	return h.Words[at+1 : at+1+h.Words[at]]
}

// References returns the number of reference slots of all objects. On a
// Heap built from its exported fields without NewHeapFrom it counts them
// (once per call, O(objects)).
func (h *Heap) References() int {
	if h.generated || h.name != "" {
		return int(h.refs)
	}
	n := 0
	for o := range h.Objects() {
		n += int(h.Words[h.Offsets[o]])
	}
	return n
}

// Bytes returns the heap's size: 4 bytes a word (header, slots, scalars).
func (h *Heap) Bytes() int { return 4 * len(h.Words) }

// RootSlots returns the number of root slots (stacks and code cache).
func (h *Heap) RootSlots() int {
	n := len(h.CodeCache)
	for _, s := range h.Stacks {
		n += len(s)
	}
	return n
}

func (h *Heap) String() string {
	if !h.generated {
		name := h.name
		if name == "" {
			name = "external heap"
		}
		arraySlots := 0
		for _, a := range h.Arrays {
			arraySlots += len(h.Slots(a))
		}
		return fmt.Sprintf("%s, %d objects, %d reference slots (%d in %d arrays), %.1f MB, %d root slots (%d stacks, global roots %d)",
			name, h.Objects(), h.References(), arraySlots, len(h.Arrays), float64(h.Bytes())/1e6,
			h.RootSlots(), len(h.Stacks), len(h.CodeCache))
	}
	return fmt.Sprintf("%v, %d objects, %d reference slots (%d in %d arrays), %.1f MB, %d root slots (%d stacks, code cache %d)",
		h.cfg.Shape, h.Objects(), h.refs, len(h.Arrays)*h.cfg.ArraySlots, len(h.Arrays), float64(h.Bytes())/1e6,
		h.RootSlots(), len(h.Stacks), len(h.CodeCache))
}

// NewHeap builds a heap. It panics on a config no heap can satisfy
// (Objects < 2, an unknown Shape, or more slots than a uint32 can index).
//
// The out-degree of an ordinary object is 0 with probability LeafShare and
// otherwise ⌊2·u^(−1/Alpha)⌋ for uniform u, capped at MaxDegree: a discrete
// power law with most objects holding 2–4 references and a few holding
// hundreds. The huge arrays sit at evenly spaced ids and are referenced
// from the first stacks. Stack depths are StackSlots plus a power law
// (mean about four times StackSlots).
//
// ShapePowerLaw: a reference goes, with probability Locality, to an object
// allocated within 64 of its source, and otherwise to any object; stack
// and code-cache slots point anywhere.
//
// ShapeBuilt: objects are allocated structure by structure, as a program
// builds a tree, a list, a parsed file: each structure depth-first from
// its root (an object, then the whole subtree under its first child, then
// under its second), so that an object's descendants sit right after it.
// A structure gets a size drawn from a power law above Structure objects;
// each object's subtree gets a share of its parent's (uniform, the last
// child the rest; what a subtree leaves unused goes back to its parent).
// A non-null slot goes anywhere with probability LongRange; otherwise it
// owns a new child with probability Children while its object's subtree
// has objects left to allocate, and else points back at one of the (up
// to 8) nearest objects under construction: a parent pointer, already
// marked when a marker comes down from the structure's root. An array's
// slots point, in order, to objects allocated before it, evenly spaced (a
// slice of pointers collected as they were built). Stack and code-cache
// slots point to structure roots (a program's variables and constants
// hold its data structures).
func NewHeap(cfg HeapConfig) *Heap {
	if cfg.Objects < 2 {
		panic("gcmark: a heap needs at least 2 objects")
	}
	n := cfg.Objects
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15))
	h := &Heap{cfg: cfg, Offsets: make([]uint32, n+1), generated: true}

	// The arrays sit at evenly spaced ids.
	isArray := make(map[uint32]bool, cfg.Arrays)
	for i := range cfg.Arrays {
		id := uint32((2*i + 1) * n / (2 * cfg.Arrays))
		if !isArray[id] {
			isArray[id] = true
			h.Arrays = append(h.Arrays, id)
		}
	}
	switch cfg.Shape {
	case ShapePowerLaw:
		h.buildPowerLaw(rng, isArray)
	case ShapeBuilt:
		h.buildDepthFirst(rng, isArray)
	default:
		panic(fmt.Sprintf("gcmark: unknown heap shape %d", cfg.Shape))
	}
	return h
}

// buildPowerLaw fills h's objects and roots for ShapePowerLaw.
func (h *Heap) buildPowerLaw(rng *rand.Rand, isArray map[uint32]bool) {
	cfg := &h.cfg
	n := cfg.Objects

	// Pass 1: sizes, as prefix sums.
	deg := make([]uint32, n)
	total := uint64(0)
	for i := range n {
		h.Offsets[i] = uint32(total)
		d := degree(rng, cfg, isArray[uint32(i)])
		deg[i] = uint32(d)
		h.refs += int64(d)
		total += uint64(1 + d + scalars(rng, cfg))
		if total >= uint64(math.MaxUint32) {
			panic("gcmark: too many words for uint32 offsets")
		}
	}
	h.Offsets[n] = uint32(total)

	// Pass 2: headers and targets.
	h.Words = make([]uint32, total)
	for i := range n {
		src, at := uint32(i), h.Offsets[i]
		h.Words[at] = deg[i]
		for j := at + 1; j <= at+deg[i]; j++ {
			h.Words[j] = pickTarget(rng, cfg, src)
		}
	}

	// Roots: stacks (the first ones also hold the arrays), then code cache.
	h.makeRoots(rng, func() uint32 { return rootTarget(rng, cfg) })
}

// scalars draws an object's number of scalar words (none, without a draw,
// when ScalarWords is 0).
func scalars(rng *rand.Rand, cfg *HeapConfig) int {
	if cfg.ScalarWords <= 0 {
		return 0
	}
	return int(-cfg.ScalarWords * math.Log(1-rng.Float64()))
}

// degree draws an object's out-degree.
func degree(rng *rand.Rand, cfg *HeapConfig, array bool) int {
	switch {
	case array:
		return cfg.ArraySlots
	case rng.Float64() < cfg.LeafShare:
		return 0
	default:
		return min(int(2*math.Pow(1-rng.Float64(), -1/cfg.Alpha)), cfg.MaxDegree)
	}
}

// makeRoots draws the stacks and the code cache, each slot from rootSlot,
// and puts the arrays on the first stacks.
func (h *Heap) makeRoots(rng *rand.Rand, rootSlot func() uint32) {
	cfg := &h.cfg
	h.Stacks = make([][]uint32, cfg.Mutators)
	for m := range h.Stacks {
		depth := cfg.StackSlots + min(int(float64(cfg.StackSlots)*math.Pow(1-rng.Float64(), -1/1.5)), 64*cfg.StackSlots)
		s := make([]uint32, depth)
		for k := range s {
			s[k] = rootSlot()
		}
		h.Stacks[m] = s
	}
	for i, a := range h.Arrays {
		if len(h.Stacks) > 0 {
			s := h.Stacks[i%len(h.Stacks)]
			s[len(s)/2] = a
		}
	}
	h.CodeCache = make([]uint32, cfg.CodeCache)
	for k := range h.CodeCache {
		h.CodeCache[k] = rootSlot()
	}
}

// buildDepthFirst fills h's objects and roots for ShapeBuilt: it
// allocates objects (ids in order) as a program building its structures
// depth-first would.
func (h *Heap) buildDepthFirst(rng *rand.Rand, isArray map[uint32]bool) {
	cfg := &h.cfg
	n := uint32(cfg.Objects)
	words := make([]uint32, 0, int(float64(cfg.Objects)*(4+cfg.ScalarWords)))
	next := uint32(0) // the next id to allocate

	// frame is an object under construction: its slots words[next:end]
	// are yet to be filled, and its subtree may allocate left more
	// objects (what it leaves unused goes back to its parent).
	type frame struct {
		obj, next, end uint32
		left           int
	}
	var stack []frame

	// kind draws what a slot holds: Null, a reference anywhere, or the
	// rest: a child or an ancestor.
	const (
		null = iota
		anywhere
		rest
	)
	kind := func() int {
		switch r := rng.Float64(); {
		case r < cfg.NullShare:
			return null
		case r < cfg.NullShare+(1-cfg.NullShare)*cfg.LongRange:
			return anywhere
		}
		return rest
	}
	// ancestor returns one of the (up to 8) nearest objects under
	// construction below the top of the stack, or parent if there is
	// none below it (Null: anywhere).
	ancestor := func(parent uint32) uint32 {
		k := min(len(stack)-1, 8)
		if k <= 0 {
			if parent != Null {
				return parent
			}
			return rng.Uint32N(n)
		}
		return stack[len(stack)-2-rng.IntN(k)].obj
	}

	// alloc allocates the next object: its header, its slots (unfilled,
	// or for an array filled), its scalar words. An array's slots point,
	// in order, to the objects allocated before it, evenly spaced: a
	// slice of pointers collected as they were built.
	alloc := func() uint32 {
		id := next
		next++
		h.Offsets[id] = uint32(len(words))
		d := degree(rng, cfg, isArray[id])
		s := scalars(rng, cfg)
		if uint64(len(words))+uint64(1+d+s) >= uint64(math.MaxUint32) {
			panic("gcmark: too many words for uint32 offsets")
		}
		h.refs += int64(d)
		words = append(words, uint32(d))
		if !isArray[id] {
			words = append(words, make([]uint32, d+s)...)
			return id
		}
		for k := range d {
			v := Null
			switch kind() {
			case anywhere:
				v = rng.Uint32N(n)
			case rest:
				v = uint32(uint64(k) * uint64(id) / uint64(d))
			}
			words = append(words, v)
		}
		words = append(words, make([]uint32, s)...)
		return id
	}

	push := func(o uint32, left int) {
		at := h.Offsets[o]
		if d := words[at]; !isArray[o] && d > 0 {
			stack = append(stack, frame{o, at + 1, at + 1 + d, left})
		} else if len(stack) > 0 {
			stack[len(stack)-1].left += left // a leaf: the budget goes back
		}
	}
	var roots []uint32 // the structures' roots
	maxSize := max(cfg.Structure, cfg.Objects/16)
	for {
		if len(stack) == 0 {
			if next == n {
				break
			}
			size := min(int(float64(cfg.Structure)*math.Pow(1-rng.Float64(), -1/1.2)), maxSize)
			r := alloc()
			roots = append(roots, r)
			push(r, size-1)
			continue
		}
		f := &stack[len(stack)-1]
		if f.next == f.end {
			left := f.left
			stack = stack[:len(stack)-1]
			if len(stack) > 0 {
				stack[len(stack)-1].left += left
			}
			continue
		}
		j := f.next
		f.next++
		switch kind() {
		case null:
			words[j] = Null
		case anywhere:
			words[j] = rng.Uint32N(n)
		default:
			if f.left > 0 && next < n && rng.Float64() < cfg.Children {
				// A child, with a uniform share of the budget (the last
				// slot takes it all).
				b := f.left
				if f.next < f.end {
					b = 1 + rng.IntN(f.left)
				}
				f.left -= b
				c := alloc() // may grow words and stack: f is not used again
				words[j] = c
				push(c, b-1)
				continue
			}
			words[j] = ancestor(Null)
		}
	}
	h.Offsets[n] = uint32(len(words))
	h.Words = words
	h.makeRoots(rng, func() uint32 {
		if rng.Float64() < cfg.NullShare {
			return Null
		}
		return roots[rng.IntN(len(roots))]
	})
}

// near returns an object within 64 of src (not src), wrapping.
func near(rng *rand.Rand, n, src uint32) uint32 {
	off := rng.Uint32N(128)
	if off < 64 {
		return (src + 1 + off) % n
	}
	return (src + n - (off - 63)) % n
}

func pickTarget(rng *rand.Rand, cfg *HeapConfig, src uint32) uint32 {
	r := rng.Float64()
	if r < cfg.NullShare {
		return Null
	}
	n := uint32(cfg.Objects)
	if r < cfg.NullShare+cfg.Locality*(1-cfg.NullShare) {
		return near(rng, n, src) // src+1 … src+64 or src-64 … src-1
	}
	return rng.Uint32N(n)
}

func rootTarget(rng *rand.Rand, cfg *HeapConfig) uint32 {
	if rng.Float64() < cfg.NullShare {
		return Null
	}
	return rng.Uint32N(uint32(cfg.Objects))
}

// HeapParts are a heap built outside NewHeap (a real program's heap read
// from a dump, a collector's own): the exported fields of Heap, as Heap
// documents them, and a name for String.
type HeapParts struct {
	Name      string     // what String calls the heap ("go heap dump of …")
	Offsets   []uint32   // len objects+1, Offsets[0] = 0, ascending, the last len(Words)
	Words     []uint32   // per object: a header n, n reference slots, scalar words
	Arrays    []uint32   // object ids of reference arrays that markers scan in chunks
	Stacks    [][]uint32 // root slots, one set per mutator (goroutine)
	CodeCache []uint32   // global root slots (data, bss, finalizers: one root packet)
}

// NewHeapFrom makes a Heap of parts, which it keeps (it does not copy
// them), after checking them: every object's header within its words,
// every slot and root an object id or Null, every array an object. Every
// method of Heap works on it as on a generated heap; Config returns the
// zero HeapConfig.
func NewHeapFrom(p HeapParts) (*Heap, error) {
	n := len(p.Offsets) - 1
	switch {
	case n < 1:
		return nil, fmt.Errorf("gcmark: NewHeapFrom: %d offsets, want objects+1 ≥ 2", len(p.Offsets))
	case p.Offsets[0] != 0:
		return nil, fmt.Errorf("gcmark: NewHeapFrom: Offsets[0] = %d, want 0", p.Offsets[0])
	case int(p.Offsets[n]) != len(p.Words):
		return nil, fmt.Errorf("gcmark: NewHeapFrom: Offsets[%d] = %d, want len(Words) = %d", n, p.Offsets[n], len(p.Words))
	case uint64(n) >= uint64(Null):
		return nil, fmt.Errorf("gcmark: NewHeapFrom: %d objects, more than ids can name", n)
	}
	var refs int64
	for o := range n {
		lo, hi := p.Offsets[o], p.Offsets[o+1]
		if hi <= lo {
			return nil, fmt.Errorf("gcmark: NewHeapFrom: object %d has no header (Offsets %d..%d)", o, lo, hi)
		}
		k := p.Words[lo]
		if uint64(k) > uint64(hi-lo-1) {
			return nil, fmt.Errorf("gcmark: NewHeapFrom: object %d claims %d slots in %d words", o, k, hi-lo-1)
		}
		for i, r := range p.Words[lo+1 : lo+1+k] {
			if r != Null && int(r) >= n {
				return nil, fmt.Errorf("gcmark: NewHeapFrom: object %d slot %d = %d: no such object", o, i, r)
			}
		}
		refs += int64(k)
	}
	check := func(what string, ids []uint32, null bool) error {
		for i, r := range ids {
			if (r != Null || !null) && int(r) >= n {
				return fmt.Errorf("gcmark: NewHeapFrom: %s[%d] = %d: no such object", what, i, r)
			}
		}
		return nil
	}
	if err := check("Arrays", p.Arrays, false); err != nil {
		return nil, err
	}
	for i, st := range p.Stacks {
		if err := check(fmt.Sprintf("Stacks[%d]", i), st, true); err != nil {
			return nil, err
		}
	}
	if err := check("CodeCache", p.CodeCache, true); err != nil {
		return nil, err
	}
	name := p.Name
	if name == "" {
		name = "external heap"
	}
	return &Heap{Offsets: p.Offsets, Words: p.Words, Arrays: p.Arrays, Stacks: p.Stacks, CodeCache: p.CodeCache, refs: refs, name: name}, nil
}
