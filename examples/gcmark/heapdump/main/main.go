// Command heapdump makes real Go heaps for the markers and describes them.
//
//	go run ./examples/gcmark/heapdump/main gen -program typecheck -out /tmp/typecheck.dump
//	go run ./examples/gcmark/heapdump/main gen -program index -out /tmp/index.dump
//	go run ./examples/gcmark/heapdump/main stats /tmp/typecheck.dump
//	go run ./examples/gcmark/main -dump /tmp/typecheck.dump -compare seq-dfs,seq-bfs,goroutines,parts,dfs -workers 1,2
//
// gen runs a real program on real data, keeps what it built, collects,
// and writes the process's heap with runtime/debug.WriteHeapDump:
//
//   - typecheck: parse and type-check packages of $(go env GOROOT)/src
//     (go/parser, go/types with the source importer, every types.Info map
//     kept): ASTs, scopes, objects and types, as a compiler or a language
//     server holds them.
//   - index: an inverted index of every file under $(go env GOROOT)/src:
//     a map from each word to its postings (file, line), the files' names
//     and lines kept, as a search engine's in-memory index holds them.
//
// The dumps are hundreds of megabytes: make them on demand, never commit
// them. stats prints a dump's objects, pointer fields, degree
// distribution, and the share of references that cross address ranges
// and equal ranges of objects.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
	"unicode"

	"github.com/wsched/wsched/examples/batch"
	"github.com/wsched/wsched/examples/gcmark/heapdump"
)

func usage() {
	fmt.Fprintf(os.Stderr, `usage:
  heapdump gen -program typecheck|index -out FILE [-packages LIST]
  heapdump stats [-range BYTES] FILE
`)
}

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "gen":
		err = gen(os.Args[2:])
	case "stats":
		err = stats(os.Args[2:])
	case "-h", "-help", "--help", "help":
		usage()
		return
	default:
		usage()
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "heapdump:", err)
		os.Exit(1)
	}
}

// kept is what the program built: a global, so that the dump's roots hold
// it.
var kept any

func gen(args []string) error {
	fs := flag.NewFlagSet("gen", flag.ExitOnError)
	program := fs.String("program", "typecheck", "the program whose heap to dump: typecheck or index")
	out := fs.String("out", "", "the dump file to write")
	pkgs := fs.String("packages", "net/http,go/types,cmd/compile/internal/ssa", "typecheck: packages to type-check (with what they import, from source)")
	root := fs.String("root", "", "index: the tree to index (default $(go env GOROOT)/src)")
	fs.Parse(args)
	if *out == "" || fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("gen: want -out FILE and no arguments")
	}
	t0 := time.Now()
	var err error
	switch *program {
	case "typecheck":
		kept, err = typecheck(strings.Split(*pkgs, ","))
	case "index":
		r := *root
		if r == "" {
			r = batch.DefaultRoot()
		}
		kept, err = index(r)
	default:
		return fmt.Errorf("gen: -program %q: want typecheck or index", *program)
	}
	if err != nil {
		return err
	}
	built := time.Since(t0)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	debug.WriteHeapDump(f.Fd())
	if err := f.Close(); err != nil {
		return err
	}
	st, _ := os.Stat(*out)
	fmt.Printf("%s: built in %v; live heap %.1f MB in %d objects; dump %.1f MB in %s\n", *program, built.Round(time.Millisecond),
		float64(ms.HeapAlloc)/1e6, ms.HeapObjects, float64(st.Size())/1e6, *out)
	runtime.KeepAlive(kept)
	return nil
}

// typecheck parses and type-checks the packages with the source importer,
// keeping every result.
func typecheck(paths []string) (any, error) {
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "source", nil).(types.ImporterFrom)
	type checked struct {
		pkg   *types.Package
		files []*ast.File
		info  *types.Info
	}
	var all []checked
	for _, path := range paths {
		bp, err := imp.ImportFrom(path, "", 0)
		if err != nil {
			return nil, fmt.Errorf("typecheck %s: %w", path, err)
		}
		// Check it again with every Info map, from its files.
		dir := filepath.Join(batch.DefaultRoot(), path)
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		var files []*ast.File
		for _, e := range ents {
			n := e.Name()
			if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.ParseComments)
			if err != nil {
				return nil, err
			}
			files = append(files, f)
		}
		info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Defs: map[*ast.Ident]types.Object{},
			Uses: map[*ast.Ident]types.Object{}, Implicits: map[ast.Node]types.Object{},
			Selections: map[*ast.SelectorExpr]*types.Selection{}, Scopes: map[ast.Node]*types.Scope{}}
		conf := types.Config{Importer: imp, Error: func(error) {}}
		pkg, _ := conf.Check(bp.Path(), fset, files, info) // build tags may drop files: errors are kept out
		all = append(all, checked{pkg, files, info})
	}
	return all, nil
}

// posting is one occurrence of a word.
type posting struct {
	file *fileEntry
	line int32
}

type fileEntry struct {
	name  string
	lines []string
}

// index builds an inverted index of every regular file under root.
func index(root string) (any, error) {
	idx := map[string][]posting{}
	var files []*fileEntry
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		fe := &fileEntry{name: path}
		files = append(files, fe)
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			fe.lines = append(fe.lines, line)
			for _, w := range strings.FieldsFunc(line, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' }) {
				w = strings.ToLower(w)
				idx[w] = append(idx[w], posting{fe, int32(len(fe.lines))})
			}
		}
		return nil // a file that is not text (too long a line) is indexed up to there
	})
	if err != nil {
		return nil, err
	}
	return struct {
		idx   map[string][]posting
		files []*fileEntry
	}{idx, files}, nil
}

func stats(args []string) error {
	fs := flag.NewFlagSet("stats", flag.ExitOnError)
	rng := fs.Uint64("range", 1<<20, "address range size in bytes for the crossing share")
	fs.Parse(args)
	if fs.NArg() != 1 {
		fs.Usage()
		return fmt.Errorf("stats: want one dump FILE")
	}
	f, err := os.Open(fs.Arg(0))
	if err != nil {
		return err
	}
	defer f.Close()
	t0 := time.Now()
	d, err := heapdump.Read(f, heapdump.Limits{})
	if err != nil {
		return err
	}
	g, err := d.Graph()
	if err != nil {
		return err
	}
	st := g.Stats()
	fmt.Printf("%s: %s %s, read in %v\n", fs.Arg(0), d.GOARCH, d.GoVersion, time.Since(t0).Round(time.Millisecond))
	fmt.Printf("objects %d (%.1f MB), reachable %d (%.1f MB); pointer fields %d, to objects %d (%.2f an object), interior %d, outside the heap %d\n",
		st.Objects, float64(st.Bytes)/1e6, st.Reachable, float64(st.ReachableSize)/1e6, st.Slots, st.Edges,
		float64(st.Edges)/float64(max(st.Objects, 1)), st.Interior, st.Outside)
	fmt.Printf("roots %d: %d goroutine stacks, %d global\n", st.RootSlots, len(g.Stacks), len(g.Global))
	fmt.Print("out-degree of the reachable:")
	for k, n := range st.Degree {
		lo, hi := (1<<k)-1, (1<<(k+1))-2
		if lo == hi {
			fmt.Printf(" %d: %d", lo, n)
		} else {
			fmt.Printf(" %d–%d: %d", lo, hi, n)
		}
	}
	fmt.Println()
	fmt.Printf("references crossing: %.1f%% of %d-byte address ranges;", 100*g.CrossShare(*rng, 0), *rng)
	for _, parts := range []int{2, 8, 64} {
		fmt.Printf(" %.1f%% of %d equal ranges of objects;", 100*g.CrossShare(0, parts), parts)
	}
	fmt.Println()
	return nil
}
