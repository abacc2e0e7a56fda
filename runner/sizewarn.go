package runner

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// repeatedSizeWarnings says where a swept num_inducing gives one method
// the same M on a dataset for several values: a structured feature set
// grows in steps (VISH by whole levels, additive VFF by D features), so
// num_inducing = 32 and 64 can both choose the level with 35 harmonics on
// yacht, and the two runs fit the same model under different ids.
func repeatedSizeWarnings(path string, runs []*RunSpec) []string {
	type group struct {
		grid, method, dataset string
		m                     int
	}
	values := map[group][]int{}
	var order []group
	for _, s := range runs {
		v, ok := s.Params["num_inducing"].(int)
		if !ok || s.Plan.M == 0 {
			continue
		}
		// Runs that differ in nothing but num_inducing (and split and
		// seed, which repeat the comparison) share a key.
		var rest strings.Builder
		for _, k := range sortedKeys(s.Params) {
			if k != "num_inducing" {
				fmt.Fprintf(&rest, "%s=%s ", k, formatValue(s.Params[k]))
			}
		}
		for _, k := range sortedKeys(s.DatasetParams) {
			fmt.Fprintf(&rest, "dataset.%s=%s ", k, formatValue(s.DatasetParams[k]))
		}
		g := group{s.Grid, s.Method, s.Dataset + "\x00" + rest.String(), s.Plan.M}
		if _, seen := values[g]; !seen {
			order = append(order, g)
		}
		if !slices.Contains(values[g], v) {
			values[g] = append(values[g], v)
		}
	}
	var out []string
	for _, g := range order {
		vs := values[g]
		if len(vs) < 2 {
			continue
		}
		slices.Sort(vs)
		strs := make([]string, len(vs))
		for i, v := range vs {
			strs[i] = strconv.Itoa(v)
		}
		dataset, _, _ := strings.Cut(g.dataset, "\x00")
		out = append(out, fmt.Sprintf("%s: grid %q: method %s on %s: num_inducing = %s all give M = %d, so those runs fit the same model (the feature set grows in steps; sweep values it can tell apart)",
			path, g.grid, g.method, dataset, strings.Join(strs, ", "), g.m))
	}
	return out
}
