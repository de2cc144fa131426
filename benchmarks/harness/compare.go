package harness

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"golang.org/x/perf/benchfmt"
)

// RunOptionKeys are the file configuration keys RunMatrix records about
// how it sampled (RunOptions).
var RunOptionKeys = []string{"invocations", "iterations", "warmup", KeyGap, "procs"}

// ReadRunOptions reads the run option keys of a raw file's first result
// ("" for a key it lacks).
func ReadRunOptions(data []byte, name string) map[string]string {
	out := map[string]string{}
	rd := benchfmt.NewReader(bytes.NewReader(data), name)
	for rd.Scan() {
		if r, ok := rd.Result().(*benchfmt.Result); ok {
			for _, k := range RunOptionKeys {
				out[k] = r.GetConfig(k)
			}
			break
		}
	}
	return out
}

// runOptions is ReadRunOptions for compare: a file from before the gap key
// ran its operations back to back, so its gap reads as 0s.
func runOptions(data []byte, name string) map[string]string {
	out := ReadRunOptions(data, name)
	if out[KeyGap] == "" && out["iterations"] != "" {
		out[KeyGap] = time.Duration(0).String()
	}
	return out
}

// Compare reads two result files and writes, first, a warning for every
// way their environment fingerprints differ (a different CPU, microcode,
// kernel or Go makes any difference below suspect: the luindex "regression" of mmtk-core #1200 was a microcode update),
// notes for differing run options, a warning when the files' host-speed
// probes (UnitProbeNs) differ, then, for every benchmark present in both,
// the old and new medians with their confidence intervals and the
// verdict. It reports whether the identity parts of the fingerprints
// matched.
func Compare(w io.Writer, oldPath, newPath string) (sameMachine bool, err error) {
	oldData, err := os.ReadFile(oldPath)
	if err != nil {
		return false, err
	}
	newData, err := os.ReadFile(newPath)
	if err != nil {
		return false, err
	}
	oldFP, err := ReadFingerprint(bytes.NewReader(oldData))
	if err != nil {
		return false, err
	}
	newFP, err := ReadFingerprint(bytes.NewReader(newData))
	if err != nil {
		return false, err
	}
	sameMachine = true
	diffs := DiffFingerprints(oldFP, newFP)
	if len(oldFP.Pairs) == 0 || len(newFP.Pairs) == 0 {
		fmt.Fprintf(w, "WARNING: %s has no environment fingerprint: cannot tell whether the machines match.\n",
			map[bool]string{true: oldPath, false: newPath}[len(oldFP.Pairs) == 0])
		sameMachine = false
	}
	for _, d := range diffs {
		if d.Identity {
			if sameMachine {
				fmt.Fprintln(w, "WARNING: the environment fingerprints differ; differences below may come from the machine, not the code:")
			}
			sameMachine = false
			fmt.Fprintf(w, "  %-12s old %q, new %q\n", d.Key+":", d.Old, d.New)
		}
	}
	for _, d := range diffs {
		if !d.Identity {
			fmt.Fprintf(w, "note: %-12s old %q, new %q\n", d.Key+":", d.Old, d.New)
		}
	}
	// How the samples were taken: a different gap or iteration count
	// changes what is measured, not the machine.
	oldRun, newRun := runOptions(oldData, oldPath), runOptions(newData, newPath)
	nRun := 0
	for _, k := range RunOptionKeys {
		if o, n := oldRun[k], newRun[k]; o != n {
			fmt.Fprintf(w, "note: run option %-12s old %q, new %q\n", k+":", o, n)
			nRun++
		}
	}
	if len(diffs) > 0 || nRun > 0 {
		fmt.Fprintln(w)
	}

	oldSet, err := ReadSet(bytes.NewReader(oldData), oldPath)
	if err != nil {
		return sameMachine, err
	}
	newSet, err := ReadSet(bytes.NewReader(newData), newPath)
	if err != nil {
		return sameMachine, err
	}
	if writeProbeWarning(w, oldSet, newSet) {
		fmt.Fprintln(w)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "benchmark\told median ns/op\t95%% CI\tnew median ns/op\t95%% CI\tdelta\t\n")
	var warn []string
	common := 0
	for _, n := range oldSet.Names {
		if !newSet.Has(n) {
			continue
		}
		common++
		ov, nv := oldSet.Values(n, UnitNsOp), newSet.Values(n, UnitNsOp)
		so, sn := Summarize(ov), Summarize(nv)
		warn = append(warn, warnings(so.Warnings, sn.Warnings, CompareSamples(ov, nv).Warnings)...)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", n, FormatNs(so.Center), so.PctRangeString(),
			FormatNs(sn.Center), sn.PctRangeString(), DeltaText(ov, nv))
	}
	tw.Flush()
	if common == 0 {
		fmt.Fprintln(w, "no benchmark appears in both files")
	}
	for _, wn := range dedupe(warn) {
		fmt.Fprintf(w, "note: %s\n", wn)
	}
	return sameMachine, nil
}
