// Command bench measures wsched against itself (policies) and against the
// executors Go programs use today (peers), with statistics that say how
// sure each comparison is and a fingerprint of the machine on every file.
//
// Usage:
//
//	go run ./cmd/bench [flags]                  run the matrix (policies × workloads × workers, plus peers)
//	go run ./cmd/bench compare OLD NEW          compare two raw result files
//	go run ./cmd/bench sweep [flags] NAME...    sweep a scheduler setting (batch, spins, parkspin, take, order, wake, steal)
//	go run ./cmd/bench saturate [flags]         open-loop saturation curves
//	go run ./cmd/bench selftest [flags]         A/A false-alarm rate and planted-slowdown detection
//	go run ./cmd/bench report [-out DIR] [-md] RAW... rebuild summaries, plots or a markdown table from raw files
//
// Run "go run ./cmd/bench SUBCOMMAND -h" for each one's flags. Exit
// status: 0 success, 1 failure, 2 usage error (with a one-line message).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// usageError is a command-line mistake: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

const topUsage = `usage: bench [flags]                 run the matrix: policies × workloads × workers, plus peers
       bench compare OLD NEW        compare two raw result files (fingerprints first)
       bench sweep [flags] NAME...  sweep one scheduler setting: batch, spins, parkspin, take, order, wake, steal
       bench saturate [flags]       open-loop arrival at rising rates: latency and saturation point
       bench selftest [flags]       A/A false-alarm rate and planted 5% slowdown detection
       bench report [flags] RAW...  rebuild summaries, plots or a markdown table from raw files

Run inside the benchmarks/ module: go run ./cmd/bench -quick
"bench SUBCOMMAND -h" lists a subcommand's flags.
`

func run(args []string, stdout, stderr io.Writer) int {
	var err error
	sub := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub, args = args[0], args[1:]
	}
	switch sub {
	case "":
		err = cmdMatrix(args, stdout, stderr)
	case "compare":
		err = cmdCompare(args, stdout, stderr)
	case "sweep":
		err = cmdSweep(args, stdout, stderr)
	case "saturate":
		err = cmdSaturate(args, stdout, stderr)
	case "selftest":
		err = cmdSelftest(args, stdout, stderr)
	case "report":
		err = cmdReport(args, stdout, stderr)
	case "help":
		return run([]string{"-h"}, stdout, stderr)
	default:
		err = usagef("unknown subcommand %q (want compare, sweep, saturate, selftest or report; -h for help)", sub)
	}
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "bench: %s\n", ue.msg)
		return 2
	default:
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
}

// parseFlags parses fs, turning its errors into one-line usage errors and
// printing usage to stdout for -h.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer, usage string) error {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, usage)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return flag.ErrHelp
	}
	if err != nil {
		return usageError{err.Error()}
	}
	return nil
}
