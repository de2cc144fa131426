package heapdump

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wsched/wsched/examples/gcmark"
)

type node struct {
	next    *node
	payload [3]uint64
	name    string
}

// list is a global (a data or bss root) that holds a chain of nodes.
var list *node

// dumpSelf writes a heap dump of this process, after a GC, and reads it.
func dumpSelf(t *testing.T) *Dump {
	path := filepath.Join(t.TempDir(), "self.dump")
	f, err := os.Create(path)
	require.NoError(t, err)
	runtime.GC()
	debug.WriteHeapDump(f.Fd())
	require.NoError(t, f.Close())
	in, err := os.Open(path)
	require.NoError(t, err)
	defer in.Close()
	d, err := Read(in, Limits{})
	require.NoError(t, err)
	return d
}

// TestReadOwnDump: the reader takes a dump the test makes of its own
// process: a chain of 1,000 nodes held by a global is there object for
// object, each node's next field resolved to the next node's id, the head
// a global root, the middle of a node (an interior pointer held by a
// global) resolved to the node; the graph turns into a gcmark.Heap that
// the sequential marker marks whole.
func TestReadOwnDump(t *testing.T) {
	const n = 1000
	list = nil
	for i := range n {
		list = &node{next: list, name: "n" + string(rune('a'+i%26))}
	}
	var addrs []uint64
	for p := list; p != nil; p = p.next {
		addrs = append(addrs, uint64(uintptr(unsafe.Pointer(p))))
	}
	interior = &list.next.payload[1]
	d := dumpSelf(t)
	assert.Equal(t, runtime.GOARCH, d.GOARCH)
	assert.Equal(t, runtime.Version(), d.GoVersion)
	assert.Equal(t, int(unsafe.Sizeof(uintptr(0))), d.PtrSize)
	g, err := d.Graph()
	require.NoError(t, err)
	id := func(a uint64) uint32 {
		for i, x := range g.Addr {
			if x == a {
				return uint32(i)
			}
		}
		t.Fatalf("no object at %#x", a)
		return 0
	}
	ids := make([]uint32, n)
	for i, a := range addrs {
		ids[i] = id(a)
		assert.GreaterOrEqual(t, g.Size[ids[i]], uint64(unsafe.Sizeof(node{})))
	}
	for i := range n - 1 {
		slots := g.Slots[g.Lo[ids[i]]:g.Lo[ids[i]+1]]
		require.Contains(t, slots, ids[i+1], "node %d's next", i)
	}
	assert.Contains(t, g.Global, ids[0], "the global list is a root")
	assert.Contains(t, g.Global, ids[1], "an interior pointer resolves to its object")
	assert.Positive(t, g.Interior)
	st := g.Stats()
	assert.GreaterOrEqual(t, st.Reachable, n)
	assert.LessOrEqual(t, st.Reachable, st.Objects)
	assert.Positive(t, st.RootSlots)
	assert.Equal(t, st.Reachable, sum(st.Degree))

	h, err := g.Heap("self")
	require.NoError(t, err)
	assert.Equal(t, g.Objects(), h.Objects())
	assert.Equal(t, len(g.Slots), h.References())
	assert.Contains(t, h.String(), "self, ")
	marks := h.MarkSequential()
	for _, o := range ids {
		assert.True(t, marks.Has(o), "node %d marked", o)
	}
	runtime.KeepAlive(list)
}

var interior *uint64

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

// TestReadRejects: what is not a dump, or ends early, or claims more
// than it holds, is an ErrFormat error, and a claim of a terabyte costs
// what the input holds.
func TestReadRejects(t *testing.T) {
	uv := func(vs ...uint64) []byte {
		var b []byte
		for _, v := range vs {
			b = binary.AppendUvarint(b, v)
		}
		return b
	}
	str := func(s string) []byte { return append(uv(uint64(len(s))), s...) }
	params := append(append(append(uv(tagParams, 0, 8, 0, 1<<40), str("amd64")...), str("go1.26")...), uv(2)...)
	cases := map[string][]byte{
		"empty":            nil,
		"not a dump":       []byte("hello, world\n"),
		"truncated":        append([]byte(header), params[:5]...),
		"no EOF":           append([]byte(header), params...),
		"terabyte object":  append(append([]byte(header), params...), uv(tagObject, 0x1000, 1<<40)...),
		"unknown tag":      append(append([]byte(header), params...), uv(99)...),
		"object first":     append([]byte(header), uv(tagObject, 0x1000, 0, fieldEol)...),
		"field past end":   append(append([]byte(header), params...), append(uv(tagObject, 0x1000, 8), append(make([]byte, 8), uv(fieldPtr, 4, fieldEol, tagEOF)...)...)...),
		"unknown field":    append(append([]byte(header), params...), append(uv(tagObject, 0x1000, 8), append(make([]byte, 8), uv(7, 0, fieldEol, tagEOF)...)...)...),
		"no params at EOF": append([]byte(header), uv(tagEOF)...),
	}
	for name, data := range cases {
		var ms0, ms1 runtime.MemStats
		runtime.ReadMemStats(&ms0)
		_, err := Read(bytes.NewReader(data), Limits{})
		runtime.ReadMemStats(&ms1)
		assert.ErrorIs(t, err, ErrFormat, name)
		assert.Less(t, ms1.TotalAlloc-ms0.TotalAlloc, uint64(8<<20), "%s: allocations follow the input", name)
	}
	// A well-formed minimal dump: one object with one nil pointer.
	ok := append(append([]byte(header), params...), append(uv(tagObject, 0x1000, 8), append(make([]byte, 8), uv(fieldPtr, 0, fieldEol, tagEOF)...)...)...)
	d, err := Read(bytes.NewReader(ok), Limits{})
	require.NoError(t, err)
	assert.Equal(t, []uint64{0x1000}, d.Addr)
	assert.Equal(t, []uint64{0}, d.Ptrs)
	_, err = Read(bytes.NewReader(ok), Limits{Objects: 1, Fields: 0})
	require.NoError(t, err)
	two := append(append([]byte(header), params...), append(append(uv(tagObject, 0x1000, 0, fieldEol), uv(tagObject, 0x2000, 0, fieldEol)...), uv(tagEOF)...)...)
	_, err = Read(bytes.NewReader(two), Limits{Objects: 1})
	assert.True(t, errors.Is(err, ErrFormat), "%v", err)
	assert.ErrorContains(t, err, "Limits.Objects")
}

// TestNewHeapFromChecks: a heap made of parts is checked.
func TestNewHeapFromChecks(t *testing.T) {
	good := gcmark.HeapParts{Offsets: []uint32{0, 2, 3}, Words: []uint32{1, 1, 0}, CodeCache: []uint32{0}}
	h, err := gcmark.NewHeapFrom(good)
	require.NoError(t, err)
	assert.Equal(t, 1, h.References())
	assert.Equal(t, "external heap, 2 objects, 1 reference slots (0 in 0 arrays), 0.0 MB, 1 root slots (0 stacks, global roots 1)", h.String())
	for name, p := range map[string]gcmark.HeapParts{
		"no objects":     {Offsets: []uint32{0}},
		"bad last":       {Offsets: []uint32{0, 2}, Words: []uint32{0}},
		"slot too far":   {Offsets: []uint32{0, 2}, Words: []uint32{1, 5}},
		"header too big": {Offsets: []uint32{0, 2}, Words: []uint32{3, 0}},
		"bad root":       {Offsets: []uint32{0, 1}, Words: []uint32{0}, CodeCache: []uint32{4}},
		"bad array":      {Offsets: []uint32{0, 1}, Words: []uint32{0}, Arrays: []uint32{gcmark.Null}},
	} {
		_, err := gcmark.NewHeapFrom(p)
		assert.Error(t, err, name)
	}
	// A Heap of exported fields alone counts its references.
	lit := &gcmark.Heap{Offsets: good.Offsets, Words: good.Words}
	assert.Equal(t, 1, lit.References())
}
