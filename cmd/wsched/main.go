package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// command is one subcommand: run gets the arguments after the subcommand's
// name and returns the exit status.
type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

// commands is the registry. A subcommand lives in its own file (analyze.go,
// demo.go) and is listed here with one line.
var commands = map[string]command{
	"analyze":  {"explain a Perfetto trace written by wsched", analyzeCmd},
	"demo":     {"run the demo jobs under several policies and write traces", demo},
	"simulate": {"replay a recorded trace on other worker counts and policies", simulateCmd},
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "wsched: unknown command %q (see wsched -h)\n", args[0])
		return 2
	}
	return c.run(args[1:], stdout, stderr)
}

func usage(w io.Writer) {
	var b strings.Builder
	b.WriteString("usage: wsched COMMAND [flags] [args]\n\ncommands:\n")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(&b, "  %-8s  %s\n", n, commands[n].summary)
	}
	b.WriteString("\nRun wsched COMMAND -h for a command's flags.\n")
	io.WriteString(w, b.String())
}

// parseAround parses fs's flags before and after the positional arguments
// (wsched analyze t.pftrace -json) and returns those arguments. When it
// returns !ok the command exits with code: 0 after -h, 2 after a bad flag
// (fs has printed why).
func parseAround(fs *flag.FlagSet, args []string) (positional []string, code int, ok bool) {
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, 0, false
			}
			return nil, 2, false
		}
		if fs.NArg() == 0 {
			return positional, 0, true
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}
