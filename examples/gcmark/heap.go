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

// Heap is an immutable object graph in compressed sparse row form, plus its
// roots. Object ids are 0 … Objects()-1; object i's reference slots are
// Refs[Offsets[i]:Offsets[i+1]], each an object id or Null.
type Heap struct {
	Offsets   []uint32   // len Objects()+1
	Refs      []uint32   // all reference slots, object by object
	Arrays    []uint32   // ids of the huge reference arrays
	Stacks    [][]uint32 // one stack of root slots per mutator
	CodeCache []uint32   // the code-cache root slots

	cfg HeapConfig
}

// HeapConfig shapes a synthetic heap. The same config always builds the
// same heap.
type HeapConfig struct {
	Objects    int     // number of objects
	LeafShare  float64 // share of objects with no reference slots
	Alpha      float64 // power-law exponent of the other objects' out-degrees
	MaxDegree  int     // cap on an ordinary object's out-degree
	Locality   float64 // share of references to a nearby object (the rest go anywhere)
	NullShare  float64 // share of slots (object and stack) that hold Null
	Arrays     int     // number of huge reference arrays
	ArraySlots int     // slots per huge array
	Mutators   int     // number of mutator stacks (one root packet each)
	StackSlots int     // minimum slots per stack; depths follow a power law above it
	CodeCache  int     // slots in the code-cache root set
	Seed       uint64
}

// DefaultHeapConfig returns the heap the examples use at a given scale:
// scale 1 is 2 Mi objects (about 5.5 million reference slots, 30 MB) with
// four arrays of 128 Ki slots each (at least 10 Ki at any scale); the roots (64 mutator stacks and a
// code cache of CodeCacheSlots slots) do not grow with scale, as a program's
// threads and compiled code do not grow with its heap.
func DefaultHeapConfig(scale float64, seed uint64) HeapConfig {
	n := max(int(math.Round(scale*(1<<21))), 1024)
	return HeapConfig{
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
func (h *Heap) Slots(o uint32) []uint32 { return h.Refs[h.Offsets[o]:h.Offsets[o+1]] }

// RootSlots returns the number of root slots (stacks and code cache).
func (h *Heap) RootSlots() int {
	n := len(h.CodeCache)
	for _, s := range h.Stacks {
		n += len(s)
	}
	return n
}

func (h *Heap) String() string {
	return fmt.Sprintf("%d objects, %d reference slots (%d in %d arrays), %d root slots (%d stacks, code cache %d)",
		h.Objects(), len(h.Refs), len(h.Arrays)*h.cfg.ArraySlots, len(h.Arrays),
		h.RootSlots(), len(h.Stacks), len(h.CodeCache))
}

// NewHeap builds a heap. It panics on a config no heap can satisfy
// (Objects < 2, or more array slots than a uint32 can index).
//
// The out-degree of an ordinary object is 0 with probability LeafShare and
// otherwise ⌊2·u^(−1/Alpha)⌋ for uniform u, capped at MaxDegree: a discrete
// power law with most objects holding 2–4 references and a few holding
// hundreds. A reference goes, with probability Locality, to an object
// allocated within 64 of its source (objects allocated together point at
// each other), and otherwise to any object. The huge arrays are spread
// through the heap and referenced from the first stacks. Stack depths are
// StackSlots plus a power law (mean about four times StackSlots).
func NewHeap(cfg HeapConfig) *Heap {
	if cfg.Objects < 2 {
		panic("gcmark: a heap needs at least 2 objects")
	}
	n := cfg.Objects
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15))
	h := &Heap{cfg: cfg, Offsets: make([]uint32, n+1)}

	// The arrays sit at evenly spaced ids.
	isArray := make(map[uint32]bool, cfg.Arrays)
	for i := range cfg.Arrays {
		id := uint32((2*i + 1) * n / (2 * cfg.Arrays))
		if !isArray[id] {
			isArray[id] = true
			h.Arrays = append(h.Arrays, id)
		}
	}

	// Pass 1: degrees, as prefix sums.
	total := uint64(0)
	inv := -1 / cfg.Alpha
	for i := range n {
		h.Offsets[i] = uint32(total)
		var d int
		switch {
		case isArray[uint32(i)]:
			d = cfg.ArraySlots
		case rng.Float64() < cfg.LeafShare:
			d = 0
		default:
			d = min(int(2*math.Pow(1-rng.Float64(), inv)), cfg.MaxDegree)
		}
		total += uint64(d)
		if total >= uint64(math.MaxUint32) {
			panic("gcmark: too many reference slots for uint32 offsets")
		}
	}
	h.Offsets[n] = uint32(total)

	// Pass 2: targets.
	h.Refs = make([]uint32, total)
	for i := range n {
		src := uint32(i)
		for j := h.Offsets[i]; j < h.Offsets[i+1]; j++ {
			h.Refs[j] = pickTarget(rng, &cfg, src)
		}
	}

	// Roots: stacks (the first ones also hold the arrays), then code cache.
	h.Stacks = make([][]uint32, cfg.Mutators)
	for m := range h.Stacks {
		depth := cfg.StackSlots + min(int(float64(cfg.StackSlots)*math.Pow(1-rng.Float64(), -1/1.5)), 64*cfg.StackSlots)
		s := make([]uint32, depth)
		for k := range s {
			s[k] = rootTarget(rng, &cfg)
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
		h.CodeCache[k] = rootTarget(rng, &cfg)
	}
	return h
}

func pickTarget(rng *rand.Rand, cfg *HeapConfig, src uint32) uint32 {
	r := rng.Float64()
	if r < cfg.NullShare {
		return Null
	}
	n := uint32(cfg.Objects)
	if r < cfg.NullShare+cfg.Locality*(1-cfg.NullShare) {
		// Nearby: src+1 … src+64 or src-64 … src-1, wrapping.
		off := rng.Uint32N(128)
		if off < 64 {
			return (src + 1 + off) % n
		}
		return (src + n - (off - 63)) % n
	}
	return rng.Uint32N(n)
}

func rootTarget(rng *rand.Rand, cfg *HeapConfig) uint32 {
	if rng.Float64() < cfg.NullShare {
		return Null
	}
	return rng.Uint32N(uint32(cfg.Objects))
}
