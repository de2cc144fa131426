package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/wsched/wsched/benchmarks/harness"
)

const reportUsage = `usage: bench report [-out DIR] RAW...

Rebuilds the summary and plots of raw result files (written by the matrix,
a sweep or saturate) without measuring anything: FILE.txt gives
DIR/FILE.summary.txt and DIR/FILE*.svg. DIR defaults to each file's own
directory.

`

func cmdReport(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	out := fs.String("out", "", "output directory (default: beside each file)")
	md := fs.Bool("md", false, "print a markdown table of each matrix file to stdout instead of writing summaries")
	if err := parseFlags(fs, args, stdout, reportUsage); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("report needs at least one raw result file")
	}
	for _, path := range fs.Args() {
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		set, err := harness.ReadSet(bytes.NewReader(data), path)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if *md {
			harness.WriteMarkdown(stdout, set, []string{"waitgroup", "errgroup", "chanpool", "ants", "pond", "conc"})
			continue
		}
		dir := *out
		if dir == "" {
			dir = filepath.Dir(path)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		stem := strings.TrimSuffix(filepath.Base(path), ".txt")
		var sum bytes.Buffer
		var plots []string
		if pts := harness.SatPointsFromSet(set); len(pts) > 0 {
			header(&sum, "wsched saturation curves (open-loop arrival)", filepath.Dir(path), filepath.Base(path))
			harness.WriteSatSummary(&sum, pts)
			svg := filepath.Join(dir, stem+".svg")
			if err := harness.PlotSaturation(pts, svg); err != nil {
				return err
			}
			plots = append(plots, svg)
		} else if sw, ok := harness.DetectSweep(set); ok {
			header(&sum, "wsched sweep: "+sw.Doc, filepath.Dir(path), filepath.Base(path))
			harness.WriteSweepTable(&sum, set, sw)
			fmt.Fprintln(&sum)
			harness.WriteSummaryBase(&sum, set, "wsched/"+sw.Base)
			svg := filepath.Join(dir, stem+".svg")
			if err := harness.PlotSweep(set, sw, svg); err != nil {
				return err
			}
			plots = append(plots, svg)
		} else {
			header(&sum, "wsched benchmark matrix", filepath.Dir(path), filepath.Base(path))
			writeMatrixSummary(&sum, set)
			files, err := harness.PlotBars(set, dir, stem+"-bars-")
			if err != nil {
				return err
			}
			sp, err := harness.PlotSpeedup(set, dir, stem+"-")
			if err != nil {
				return err
			}
			plots = append(files, sp...)
		}
		sumPath := filepath.Join(dir, stem+".summary.txt")
		if err := os.WriteFile(sumPath, sum.Bytes(), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: %s %s\n", path, sumPath, strings.Join(plots, " "))
	}
	return nil
}
