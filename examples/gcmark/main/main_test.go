package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCeiling(t *testing.T) {
	ref := &contender{name: "seq-dfs", ratio: []float64{1, 1, 1}}
	atomic := &contender{name: "seq-dfs-atomic", ratio: []float64{0.94, 0.95, 0.97}}
	dfs := &contender{name: "dfs/2", ratio: []float64{1.5, 1.6, 1.55}}

	var out strings.Builder
	ceiling(&out, []*contender{ref, atomic, dfs}, ref, []int{1, 2, 4})
	assert.Equal(t, "CAS ceiling at 2 workers: 1.900× seq-dfs (2 × seq-dfs-atomic's speed: its cycle shared with no loss)\n"+
		"CAS ceiling at 4 workers: 3.800× seq-dfs (4 × seq-dfs-atomic's speed: its cycle shared with no loss)\n", out.String())

	out.Reset()
	ceiling(&out, []*contender{ref, dfs}, ref, []int{1, 2})
	assert.Empty(t, out.String(), "no seq-dfs-atomic: no ceiling")
	ceiling(&out, []*contender{atomic, dfs}, nil, []int{1, 2})
	assert.Empty(t, out.String(), "no seq-dfs: no ceiling")
	ceiling(&out, []*contender{ref, atomic}, ref, []int{1})
	assert.Empty(t, out.String(), "one worker: no ceiling")
}
