package main

import (
	"errors"
	"io"
	"runtime"
)

func runtimeProcs() int { return runtime.GOMAXPROCS(0) }

func cmdSaturate(args []string, stdout, stderr io.Writer) error {
	return errors.New("saturate: not yet available")
}
