package batch

import (
	"cmp"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Counts is what one package (or file) declares at top level.
type Counts struct {
	Files   int
	Funcs   int // functions without a receiver
	Methods int
	Types   int // type specs
	Vars    int // names declared by var
	Consts  int // names declared by const
	Imports int // import specs
}

func (c *Counts) add(d Counts) {
	c.Files += d.Files
	c.Funcs += d.Funcs
	c.Methods += d.Methods
	c.Types += d.Types
	c.Vars += d.Vars
	c.Consts += d.Consts
	c.Imports += d.Imports
}

// Decls returns the declarations of all kinds.
func (c Counts) Decls() int { return c.Funcs + c.Methods + c.Types + c.Vars + c.Consts }

// Package is one package's counts. A directory may hold two packages (p and
// p_test).
type Package struct {
	Dir  string // slash-separated, relative to the root
	Name string
	Counts
}

// pkgKey identifies a package.
type pkgKey struct{ dir, name string }

// Totals is what a whole run found.
type Totals struct {
	Files       int   // .go files read
	Bytes       int64 // their total size
	ParseErrors int   // files go/parser rejected (their declarations are not counted)
	Counts            // over all packages
}

// File is one Go file's contribution to a Result, as ParseFile counts it.
type File struct {
	key    pkgKey
	counts Counts
	bytes  int64
	bad    bool // syntax error
}

// skipDir reports whether the go command would ignore a directory of this
// name: testdata (which holds deliberately broken files) and names starting
// with "." or "_".
func skipDir(name string) bool {
	return name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")
}

// isGoFile reports whether a file of this name is a Go source file the go
// command would read.
func isGoFile(name string) bool {
	return strings.HasSuffix(name, ".go") && !strings.HasPrefix(name, ".") && !strings.HasPrefix(name, "_")
}

// ParseFile reads and parses the file at path, under root, and counts its
// top-level declarations. An error is an I/O error; a file go/parser
// rejects is no error: it counts in Totals.ParseErrors once added to a
// Tally.
func ParseFile(root, path string) (File, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return File{}, err
	}
	rel, err := filepath.Rel(root, filepath.Dir(path))
	if err != nil {
		return File{}, err
	}
	r := File{bytes: int64(len(src))}
	f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.SkipObjectResolution)
	if err != nil {
		r.bad = true
		return r, nil
	}
	r.key = pkgKey{dir: filepath.ToSlash(rel), name: f.Name.Name}
	r.counts = countDecls(f)
	return r, nil
}

func countDecls(f *ast.File) Counts {
	c := Counts{Files: 1}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv != nil {
				c.Methods++
			} else {
				c.Funcs++
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.ImportSpec:
					c.Imports++
				case *ast.TypeSpec:
					c.Types++
				case *ast.ValueSpec:
					if d.Tok == token.CONST {
						c.Consts += len(s.Names)
					} else {
						c.Vars += len(s.Names)
					}
				}
			}
		}
	}
	return c
}

// Tally accumulates Files into a Result's packages and totals. The zero
// Tally is empty and ready to use; it is not safe for concurrent use (a Job
// keeps one per worker and merges them).
type Tally struct {
	pkgs   map[pkgKey]*Counts
	totals Totals
}

// Add counts one file.
func (t *Tally) Add(r File) {
	t.totals.Files++
	t.totals.Bytes += r.bytes
	if r.bad {
		t.totals.ParseErrors++
		return
	}
	if t.pkgs == nil {
		t.pkgs = make(map[pkgKey]*Counts)
	}
	c := t.pkgs[r.key]
	if c == nil {
		c = new(Counts)
		t.pkgs[r.key] = c
	}
	c.add(r.counts)
}

// merge adds u's counts to t.
func (t *Tally) merge(u *Tally) {
	if t.pkgs == nil {
		t.pkgs = make(map[pkgKey]*Counts)
	}
	t.totals.Files += u.totals.Files
	t.totals.Bytes += u.totals.Bytes
	t.totals.ParseErrors += u.totals.ParseErrors
	for k, c := range u.pkgs {
		d := t.pkgs[k]
		if d == nil {
			d = new(Counts)
			t.pkgs[k] = d
		}
		d.add(*c)
	}
}

// Packages returns the tally's packages sorted by directory and name, and
// its totals with the counts summed: a Result's Packages and Totals.
func (t *Tally) Packages() ([]Package, Totals) {
	ps := make([]Package, 0, len(t.pkgs))
	tot := t.totals
	tot.Counts = Counts{}
	for k, c := range t.pkgs {
		ps = append(ps, Package{Dir: k.dir, Name: k.name, Counts: *c})
		tot.Counts.add(*c)
	}
	slices.SortFunc(ps, func(a, b Package) int {
		return cmp.Or(cmp.Compare(a.Dir, b.Dir), cmp.Compare(a.Name, b.Name))
	})
	return ps, tot
}
