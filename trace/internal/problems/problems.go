// Package problems collects the rule violations a trace checker finds and
// formats them, for the perfetto and chromejson checkers alike.
package problems

import (
	"fmt"
	"strings"
)

// Max is how many violation messages a List keeps; it counts the rest.
const Max = 20

// List is a checker's violations: the first Max messages and the total.
type List struct {
	Msgs  []string
	Total int
}

// Add counts one violation and keeps its message while fewer than Max are
// kept.
func (l *List) Add(format string, args ...any) {
	l.Total++
	if len(l.Msgs) < Max {
		l.Msgs = append(l.Msgs, fmt.Sprintf(format, args...))
	}
}

// Format is the text of a checker's error: "pkg: N rule violation(s):",
// then one message per line and how many were left out.
func Format(pkg string, total int, msgs []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d rule violation(s):", pkg, total)
	for _, p := range msgs {
		b.WriteString("\n  ")
		b.WriteString(p)
	}
	if total > len(msgs) {
		fmt.Fprintf(&b, "\n  ... and %d more", total-len(msgs))
	}
	return b.String()
}
