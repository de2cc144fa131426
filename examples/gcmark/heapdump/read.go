package heapdump

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
)

// header is the first line of every dump the runtime has written since
// Go 1.7.
const header = "go1.7 heap dump\n"

// Record tags and field kinds, as runtime/heapdump.go writes them.
const (
	tagEOF             = 0
	tagObject          = 1
	tagOtherRoot       = 2
	tagType            = 3
	tagGoroutine       = 4
	tagStackFrame      = 5
	tagParams          = 6
	tagFinalizer       = 7
	tagItab            = 8
	tagOSThread        = 9
	tagMemStats        = 10
	tagQueuedFinalizer = 11
	tagData            = 12
	tagBSS             = 13
	tagDefer           = 14
	tagPanic           = 15
	tagMemProf         = 16
	tagAllocSample     = 17

	fieldEol   = 0
	fieldPtr   = 1
	fieldIface = 2
	fieldEface = 3
)

// RootKind says where a root pointer was found.
type RootKind uint8

const (
	RootData            RootKind = iota // a pointer field of the data segment
	RootBSS                             // a pointer field of the bss segment
	RootStack                           // a pointer slot of a goroutine's stack frame
	RootFinalizer                       // a finalizer's function, or what an object with a finalizer points to
	RootQueuedFinalizer                 // an object whose finalizer is queued to run, and its function
	RootGoroutine                       // a goroutine's context register
	RootOther                           // a root the runtime describes in words (tagOtherRoot)
	rootKinds
)

var rootNames = [...]string{"data", "bss", "stack", "finalizer", "queued finalizer", "goroutine", "other"}

func (k RootKind) String() string {
	if k < rootKinds {
		return rootNames[k]
	}
	return fmt.Sprintf("RootKind(%d)", uint8(k))
}

// Root is one root pointer: its value, where it was found, and for a
// stack slot the goroutine whose stack held it (its frames' order).
type Root struct {
	Kind      RootKind
	Ptr       uint64
	Goroutine int // index into Dump.Goroutines for RootStack and RootGoroutine, else -1
	// Referents: the roots are what Ptr's object points to, not the object
	// (an object with a finalizer: marking it would keep it for ever).
	Referents bool
}

// Dump is what Read took from a heap dump: the objects (sorted by
// address) with the values of their pointer fields, and the roots.
type Dump struct {
	PtrSize    int
	BigEndian  bool
	GOARCH     string
	GoVersion  string
	ArenaStart uint64
	ArenaEnd   uint64
	// Addr[i] and Size[i] are object i's address and size in bytes; its
	// pointer fields' values (0 for nil) are Ptrs[PtrLo[i]:PtrLo[i+1]], in
	// field order.
	Addr  []uint64
	Size  []uint64
	PtrLo []uint64
	Ptrs  []uint64
	Roots []Root
	// Goroutines are the goroutine IDs, in dump order.
	Goroutines []uint64
	// HeapAlloc is the runtime's MemStats.HeapAlloc at the dump.
	HeapAlloc uint64
}

// Objects returns the number of objects.
func (d *Dump) Objects() int { return len(d.Addr) }

// Limits bound what Read keeps, so that a dump that claims more than it
// holds, or more than the caller wants, fails instead of exhausting
// memory. Read's memory follows the bytes it reads whatever the limits:
// a record's claimed length is read in pieces as the data arrives.
type Limits struct {
	Objects int // most objects; 0 means 1<<28
	Fields  int // most pointer fields, objects and roots together; 0 means 1<<30
}

// ErrFormat is wrapped by every error about a malformed dump.
var ErrFormat = errors.New("heapdump: malformed dump")

type reader struct {
	r       *bufio.Reader
	off     int64 // bytes read, for messages
	buf     []byte
	lim     Limits
	field   int
	ptrSize int
}

func (r *reader) fail(format string, args ...any) error {
	return fmt.Errorf("%w at byte %d: %s", ErrFormat, r.off, fmt.Sprintf(format, args...))
}

func (r *reader) uvarint() (uint64, error) {
	v, err := binary.ReadUvarint(byteCounter{r})
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return 0, r.fail("varint: %v", err)
	}
	return v, nil
}

type byteCounter struct{ r *reader }

func (b byteCounter) ReadByte() (byte, error) {
	c, err := b.r.r.ReadByte()
	if err == nil {
		b.r.off++
	}
	return c, err
}

// bytes reads a length-prefixed byte string into r.buf, growing it only
// as the data arrives.
func (r *reader) bytes() ([]byte, error) {
	n, err := r.uvarint()
	if err != nil {
		return nil, err
	}
	r.buf = r.buf[:0]
	const piece = 1 << 20
	for n > 0 {
		k := min(n, piece)
		start := len(r.buf)
		r.buf = slices.Grow(r.buf, int(k))[:start+int(k)]
		if _, err := io.ReadFull(r.r, r.buf[start:]); err != nil {
			return nil, r.fail("a record of %d more bytes ends early: %v", n, err)
		}
		r.off += int64(k)
		n -= k
	}
	return r.buf, nil
}

func (r *reader) skip(n int) error {
	for range n {
		if _, err := r.uvarint(); err != nil {
			return err
		}
	}
	return nil
}

func (r *reader) skipBytes(n int) error {
	for range n {
		if _, err := r.bytes(); err != nil {
			return err
		}
	}
	return nil
}

// fields reads a field list and calls f with each pointer field's offset.
func (r *reader) fields(f func(off uint64) error) error {
	for {
		kind, err := r.uvarint()
		if err != nil {
			return err
		}
		switch kind {
		case fieldEol:
			return nil
		case fieldPtr, fieldIface, fieldEface:
		default:
			return r.fail("unknown field kind %d", kind)
		}
		off, err := r.uvarint()
		if err != nil {
			return err
		}
		r.field++
		if r.field > r.lim.Fields {
			return r.fail("more than %d pointer fields (Limits.Fields)", r.lim.Fields)
		}
		if err := f(off); err != nil {
			return err
		}
		if kind != fieldPtr { // an interface's data word follows its type word
			if err := f(off + uint64(r.ptrSize)); err != nil {
				return err
			}
		}
	}
}

// word reads the pointer at off in contents, or reports it out of range.
func (r *reader) word(d *Dump, contents []byte, off uint64) (uint64, error) {
	ps := uint64(d.PtrSize)
	if off > uint64(len(contents)) || uint64(len(contents))-off < ps {
		return 0, r.fail("pointer field at offset %d of a %d-byte record", off, len(contents))
	}
	b := contents[off : off+ps]
	switch {
	case ps == 4 && d.BigEndian:
		return uint64(binary.BigEndian.Uint32(b)), nil
	case ps == 4:
		return uint64(binary.LittleEndian.Uint32(b)), nil
	case d.BigEndian:
		return binary.BigEndian.Uint64(b), nil
	}
	return binary.LittleEndian.Uint64(b), nil
}

// Read reads a dump written by runtime/debug.WriteHeapDump.
func Read(in io.Reader, lim Limits) (*Dump, error) {
	if lim.Objects <= 0 {
		lim.Objects = 1 << 28
	}
	if lim.Fields <= 0 {
		lim.Fields = 1 << 30
	}
	r := &reader{r: bufio.NewReaderSize(in, 1<<16), lim: lim, ptrSize: 8}
	hdr := make([]byte, len(header))
	if _, err := io.ReadFull(r.r, hdr); err != nil || string(hdr) != header {
		return nil, fmt.Errorf("%w: not a Go heap dump (want the header %q)", ErrFormat, header[:len(header)-1])
	}
	r.off = int64(len(header))
	d := &Dump{PtrSize: 8, PtrLo: []uint64{0}}
	params := false
	sorted := true
	goroutine := -1
	for {
		tag, err := r.uvarint()
		if err != nil {
			return nil, err
		}
		switch tag {
		case tagEOF:
			if !params {
				return nil, r.fail("no parameters record")
			}
			if !sorted {
				d.sortObjects()
			}
			return d, nil
		case tagParams:
			big, err := r.uvarint()
			if err != nil {
				return nil, err
			}
			ps, err := r.uvarint()
			if err != nil {
				return nil, err
			}
			if ps != 4 && ps != 8 {
				return nil, r.fail("pointer size %d", ps)
			}
			d.BigEndian, d.PtrSize = big != 0, int(ps)
			r.ptrSize = int(ps)
			if d.ArenaStart, err = r.uvarint(); err != nil {
				return nil, err
			}
			if d.ArenaEnd, err = r.uvarint(); err != nil {
				return nil, err
			}
			b, err := r.bytes()
			if err != nil {
				return nil, err
			}
			d.GOARCH = string(b)
			if b, err = r.bytes(); err != nil {
				return nil, err
			}
			d.GoVersion = string(b)
			if err := r.skip(1); err != nil { // ncpu
				return nil, err
			}
			params = true
		case tagObject:
			if !params {
				return nil, r.fail("an object before the parameters record")
			}
			addr, err := r.uvarint()
			if err != nil {
				return nil, err
			}
			contents, err := r.bytes()
			if err != nil {
				return nil, err
			}
			if len(d.Addr) >= lim.Objects {
				return nil, r.fail("more than %d objects (Limits.Objects)", lim.Objects)
			}
			if n := len(d.Addr); n > 0 && addr < d.Addr[n-1] {
				sorted = false
			}
			d.Addr = append(d.Addr, addr)
			d.Size = append(d.Size, uint64(len(contents)))
			if err := r.fields(func(off uint64) error {
				p, err := r.word(d, contents, off)
				d.Ptrs = append(d.Ptrs, p)
				return err
			}); err != nil {
				return nil, err
			}
			d.PtrLo = append(d.PtrLo, uint64(len(d.Ptrs)))
		case tagData, tagBSS:
			if !params {
				return nil, r.fail("a segment before the parameters record")
			}
			if err := r.skip(1); err != nil { // address
				return nil, err
			}
			contents, err := r.bytes()
			if err != nil {
				return nil, err
			}
			kind := RootData
			if tag == tagBSS {
				kind = RootBSS
			}
			if err := r.fields(func(off uint64) error {
				p, err := r.word(d, contents, off)
				d.Roots = append(d.Roots, Root{Kind: kind, Ptr: p, Goroutine: -1})
				return err
			}); err != nil {
				return nil, err
			}
		case tagGoroutine:
			// g, sp, goid, gopc, status, system, background, waitsince,
			// waitreason, ctxt, m, defer, panic.
			if err := r.skip(2); err != nil {
				return nil, err
			}
			goid, err := r.uvarint()
			if err != nil {
				return nil, err
			}
			if err := r.skip(5); err != nil {
				return nil, err
			}
			if err := r.skipBytes(1); err != nil {
				return nil, err
			}
			ctxt, err := r.uvarint()
			if err != nil {
				return nil, err
			}
			if err := r.skip(3); err != nil {
				return nil, err
			}
			d.Goroutines = append(d.Goroutines, goid)
			goroutine = len(d.Goroutines) - 1
			if ctxt != 0 {
				d.Roots = append(d.Roots, Root{Kind: RootGoroutine, Ptr: ctxt, Goroutine: goroutine})
			}
		case tagStackFrame:
			if !params {
				return nil, r.fail("a stack frame before the parameters record")
			}
			// sp, depth, child sp, contents, entry, pc, continpc, name, fields.
			if err := r.skip(3); err != nil {
				return nil, err
			}
			contents, err := r.bytes()
			if err != nil {
				return nil, err
			}
			frame := slices.Clone(contents) // the name below reuses the buffer
			if err := r.skip(3); err != nil {
				return nil, err
			}
			if err := r.skipBytes(1); err != nil {
				return nil, err
			}
			if err := r.fields(func(off uint64) error {
				p, err := r.word(d, frame, off)
				d.Roots = append(d.Roots, Root{Kind: RootStack, Ptr: p, Goroutine: goroutine})
				return err
			}); err != nil {
				return nil, err
			}
		case tagFinalizer, tagQueuedFinalizer:
			// obj, fn, fn.fn, fint, ot.
			obj, err := r.uvarint()
			if err != nil {
				return nil, err
			}
			fn, err := r.uvarint()
			if err != nil {
				return nil, err
			}
			if err := r.skip(3); err != nil {
				return nil, err
			}
			kind := RootFinalizer
			if tag == tagQueuedFinalizer {
				kind = RootQueuedFinalizer
			}
			// A finalizer's object is not a root (it would never be
			// collected), its referents are: Graph resolves that.
			d.Roots = append(d.Roots, Root{Kind: kind, Ptr: fn, Goroutine: -1},
				Root{Kind: kind, Ptr: obj, Goroutine: -1, Referents: kind == RootFinalizer})
		case tagOtherRoot:
			if err := r.skipBytes(1); err != nil {
				return nil, err
			}
			p, err := r.uvarint()
			if err != nil {
				return nil, err
			}
			d.Roots = append(d.Roots, Root{Kind: RootOther, Ptr: p, Goroutine: -1})
		case tagType:
			// address, size, name, indirect.
			if err := r.skip(2); err != nil {
				return nil, err
			}
			if err := r.skipBytes(1); err != nil {
				return nil, err
			}
			if err := r.skip(1); err != nil {
				return nil, err
			}
		case tagItab:
			if err := r.skip(2); err != nil {
				return nil, err
			}
		case tagOSThread:
			if err := r.skip(3); err != nil {
				return nil, err
			}
		case tagMemStats:
			var st [24]uint64
			for i := range st {
				if st[i], err = r.uvarint(); err != nil {
					return nil, err
				}
			}
			d.HeapAlloc = st[6]
			if err := r.skip(256 + 1); err != nil { // PauseNs, NumGC
				return nil, err
			}
		case tagDefer:
			if err := r.skip(7); err != nil {
				return nil, err
			}
		case tagPanic:
			if err := r.skip(6); err != nil {
				return nil, err
			}
		case tagMemProf:
			// bucket, size, nstk, then per frame name, file, line; allocs, frees.
			if err := r.skip(2); err != nil {
				return nil, err
			}
			nstk, err := r.uvarint()
			if err != nil {
				return nil, err
			}
			for range nstk {
				if err := r.skipBytes(2); err != nil {
					return nil, err
				}
				if err := r.skip(1); err != nil {
					return nil, err
				}
			}
			if err := r.skip(2); err != nil {
				return nil, err
			}
		case tagAllocSample:
			if err := r.skip(2); err != nil {
				return nil, err
			}
		default:
			return nil, r.fail("unknown record tag %d", tag)
		}
	}
}

// sortObjects orders the objects by address (the runtime writes them span
// by span, which is not always address order).
func (d *Dump) sortObjects() {
	idx := make([]int, len(d.Addr))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(d.Addr[a], d.Addr[b]) })
	addr := make([]uint64, len(idx))
	size := make([]uint64, len(idx))
	lo := make([]uint64, 1, len(idx)+1)
	ptrs := make([]uint64, 0, len(d.Ptrs))
	for k, i := range idx {
		addr[k], size[k] = d.Addr[i], d.Size[i]
		ptrs = append(ptrs, d.Ptrs[d.PtrLo[i]:d.PtrLo[i+1]]...)
		lo = append(lo, uint64(len(ptrs)))
	}
	d.Addr, d.Size, d.PtrLo, d.Ptrs = addr, size, lo, ptrs
}
