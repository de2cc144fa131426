package scheduler

import (
	"runtime"
	"strconv"
)

// goid returns the calling goroutine's ID, parsed from the first line of
// its stack trace ("goroutine 123 [running]:"); 0 if that fails. It costs
// about a microsecond, so it is read where a goroutine starts and where
// misuse is checked (Close), never per packet. The runtime keeps the ID
// to itself; this is the documented first line of runtime.Stack's output.
func goid() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	const prefix = "goroutine "
	if len(b) < len(prefix) || string(b[:len(prefix)]) != prefix {
		return 0
	}
	b = b[len(prefix):]
	i := 0
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	id, err := strconv.ParseUint(string(b[:i]), 10, 64)
	if err != nil {
		return 0
	}
	return id
}
