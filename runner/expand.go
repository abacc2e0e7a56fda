package runner

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"sort"
	"strings"
	"time"

	"sgplab/gp/optim"
	"sgplab/internal/anyconv"
	"sgplab/internal/suggest"
	"sgplab/methods"
	"sgplab/results"
)

// ExpandOptions control Expand.
type ExpandOptions struct {
	Profile string // "" is full
	// ValidateDataset checks a dataset name and its parameters (without
	// protocol and scaling); nil skips the check. The CLI passes
	// datasets.Validate.
	ValidateDataset func(name string, params map[string]any) error
	// CheckRun checks, once per dataset combination, what depends on the
	// protocol: the protocol and scaling exist, a test set exists and the
	// splits exist under the protocol; nil skips it. The CLI passes
	// datasets.CheckRun.
	CheckRun func(name string, params map[string]any, protocol, scaling string, splits []int) error
	// Shape returns what is known of a dataset's size before it is
	// loaded: n rows (the training rows exactly when exact is set,
	// otherwise at most) and d input dimensions, 0 when unknown. Each
	// method then checks its runs on it (methods.Method.Plan: input
	// dimension limits, feature counts, inducing points against N,
	// memory); nil checks with nothing known. The CLI passes
	// datasets.Shape.
	Shape func(name string, params map[string]any) (n, d int, exact bool)
	// MemoryLimit refuses runs whose method estimates a larger memory
	// need (bytes; 0: no check). The CLI passes the machine's memory.
	MemoryLimit float64
}

// fitKeys are grid keys that are fit settings, matched by include/exclude.
var fitKeys = []string{"iterations", "optimizer", "learning_rate", "batch_size", "grad_tol", "ftol", "lbfgs_memory", "stop_tol", "task"}

// methodFitKeys are the fit settings a [grid.method.NAME] table may set
// for that method's runs alone (a list sweeps, as at the grid's top).
var methodFitKeys = []string{"iterations", "optimizer", "learning_rate", "batch_size", "grad_tol", "ftol", "lbfgs_memory", "stop_tol"}

// Expand turns every grid of the file into runs: the Cartesian product of
// its lists, minus exclude matches, plus include runs. It validates method
// and dataset names and method parameters, and reports every error with its
// file:line. Warnings (e.g. an exclude matching nothing) do not stop a run.
func (f *File) Expand(opt ExpandOptions) (runs []*RunSpec, warnings []string, err error) {
	prof, err := f.Profile(opt.Profile)
	if err != nil {
		return nil, nil, err
	}
	x := &expander{f: f, opt: opt, profile: prof, es: &Errors{}, dsChecked: map[string]bool{}, seen: map[string]string{}, hashes: map[string]fileHash{},
		warnings: append([]string(nil), f.warnings...)}
	for _, g := range f.Grids {
		x.grid(g)
	}
	if err := x.es.err(); err != nil {
		return nil, x.warnings, err
	}
	x.warnings = append(x.warnings, comparisonWarnings(f.Path, x.runs)...)
	x.warnings = append(x.warnings, repeatedSizeWarnings(f.Path, x.runs)...)
	return x.runs, x.warnings, nil
}

// disjoint reports whether two methods of by (value → methods) share no
// value: a grid that sweeps kernels for every method compares them on
// each, one that gives two methods different kernels only does not.
func disjoint(by map[string]map[string]bool) bool {
	of := map[string]map[string]bool{} // method → its values
	for v, ms := range by {
		for m := range ms {
			if of[m] == nil {
				of[m] = map[string]bool{}
			}
			of[m][v] = true
		}
	}
	names := sortedKeys(of)
	for i, a := range names {
		for _, b := range names[i+1:] {
			shared := false
			for v := range of[a] {
				shared = shared || of[b][v]
			}
			if !shared {
				return true
			}
		}
	}
	return false
}

// comparisonWarnings says where the methods of one comparison differ in
// kernel family (methods.KernelFamily) or likelihood: two of its methods
// share none. A comparison is the runs of a config on one dataset (with
// the same dataset parameters and task), across all its grids, as the
// default report draws them side by side. Datasets whose methods differ
// alike share one line.
func comparisonWarnings(path string, runs []*RunSpec) []string {
	type what struct{ kernels, likelihoods map[string]map[string]bool }
	byData := map[string]*what{}
	var order []string
	for _, r := range runs {
		m, err := methods.Lookup(r.Method)
		if err != nil {
			continue
		}
		p, err := m.Validate(r.Params)
		if err != nil {
			continue
		}
		dp, _ := json.Marshal(r.DatasetParams)
		key := r.Dataset
		if len(r.DatasetParams) > 0 {
			key += " " + string(dp)
		}
		if r.Task != "" {
			key += " (" + r.Task + ")"
		}
		w := byData[key]
		if w == nil {
			w = &what{kernels: map[string]map[string]bool{}, likelihoods: map[string]map[string]bool{}}
			byData[key] = w
			order = append(order, key)
		}
		add := func(to map[string]map[string]bool, k string) {
			if to[k] == nil {
				to[k] = map[string]bool{}
			}
			to[k][r.Method] = true
		}
		if k := m.Kernel(p); k != "" {
			add(w.kernels, methods.KernelFamily(k))
		}
		add(w.likelihoods, m.Likelihood(p, methods.Task(r.Task)))
	}
	describe := func(by map[string]map[string]bool) string {
		var parts []string
		for _, k := range sortedKeys(by) {
			parts = append(parts, fmt.Sprintf("%s (%s)", k, strings.Join(sortedKeys(by[k]), ", ")))
		}
		return strings.Join(parts, ", ")
	}
	var lines []string
	datasets := map[string][]string{}
	for _, key := range order {
		w := byData[key]
		var diffs []string
		if disjoint(w.kernels) {
			diffs = append(diffs, "kernel family: "+describe(w.kernels))
		}
		if disjoint(w.likelihoods) {
			diffs = append(diffs, "likelihood: "+describe(w.likelihoods))
		}
		if len(diffs) == 0 {
			continue
		}
		d := strings.Join(diffs, "; ")
		if datasets[d] == nil {
			lines = append(lines, d)
		}
		datasets[d] = append(datasets[d], key)
	}
	var out []string
	for _, d := range lines {
		out = append(out, fmt.Sprintf("%s: the methods compared on %s differ in %s (sgplab methods lists each method's kernels; set kernel per method to compare like with like)",
			path, strings.Join(datasets[d], ", "), d))
	}
	return out
}

type expander struct {
	f         *File
	opt       ExpandOptions
	profile   Profile
	es        *Errors
	runs      []*RunSpec
	warnings  []string
	dsChecked map[string]bool
	seen      map[string]string // run id → source
	hashes    map[string]fileHash
}

// settings is one grid (or include) with the profile applied.
type settings struct {
	key       string // key path for errors, e.g. grid[0] or grid[0].include[1]
	name      string
	raw       map[string]any
	params    map[string]any            // grid [params]
	perMethod map[string]map[string]any // [method.NAME]
	extra     map[string]any            // include's parameters, highest priority
	incFit    map[string]any            // include's fit settings, above [method.NAME]
	dataset   map[string]any
	profile   string // stored with the runs: full when the profile changes nothing in the grid
}

func (x *expander) grid(g *Grid) {
	if x.profile.Skip[g.Name] {
		return
	}
	key := fmt.Sprintf("grid[%d]", g.Index)
	raw := maps.Clone(g.raw)
	params := tableOf(raw["params"])
	dataset := tableOf(raw["dataset"])
	orig := []any{maps.Clone(raw), tableOf(raw["params"]), tableOf(raw["dataset"])}
	// Profile overrides: top-level keys everywhere; params/dataset keys only
	// where the grid sets them, so one override can serve many grids.
	for k, v := range x.profile.Override {
		switch k {
		case "params":
			for pk, pv := range tableOf(v) {
				if _, ok := params[pk]; ok {
					params[pk] = pv
				}
			}
		case "dataset":
			for dk, dv := range tableOf(v) {
				if _, ok := dataset[dk]; ok {
					dataset[dk] = dv
				}
			}
		default:
			raw[k] = v
		}
	}
	for k, v := range x.profile.Grids[g.Name] {
		switch k {
		case "params":
			maps.Copy(params, tableOf(v))
		case "dataset":
			maps.Copy(dataset, tableOf(v))
		default:
			raw[k] = v
		}
	}
	per := map[string]map[string]any{}
	for m, t := range tableOf(raw["method"]) {
		per[m] = tableOf(t)
	}
	s := &settings{key: key, name: g.Name, raw: raw, params: params, perMethod: per, dataset: dataset, profile: x.profileName()}
	// A profile that leaves this grid as it is does not fork its runs: they
	// are the full profile's runs (same ids), so `make demo` (quick) and a
	// later `sgplab run` (full) of a config whose quick profile changes
	// nothing share every run.
	if reflect.DeepEqual(orig, []any{raw, params, dataset}) {
		s.profile = FullProfile
	}
	for _, k := range []string{"methods", "datasets"} {
		if _, ok := raw[k]; !ok {
			x.f.errorf(x.es, key, "grid %q: missing %s", g.Name, k)
		}
	}
	if len(*x.es) > 0 {
		return
	}
	excl := asArray(raw["exclude"])
	used := make([]bool, len(excl))
	x.expand(s, func(r *RunSpec) bool {
		for i, e := range excl {
			if matches(r, e) {
				used[i] = true
				return false
			}
		}
		return true
	})
	x.checkFilterKeys(s, "exclude", excl)
	for i, u := range used {
		if !u && len(*x.es) == 0 {
			k := fmt.Sprintf("%s.exclude[%d]", key, i)
			x.warnings = append(x.warnings, fmt.Sprintf("%s:%d: %s: exclude matches no run of grid %q", x.f.Path, x.f.lines.Line(k), k, g.Name))
		}
	}
	for i, inc := range asArray(raw["include"]) {
		x.expand(x.includeSettings(s, inc, fmt.Sprintf("%s.include[%d]", key, i)), nil)
	}
}

// includeSettings layers an include table over its grid.
func (x *expander) includeSettings(g *settings, inc map[string]any, key string) *settings {
	raw := maps.Clone(g.raw)
	s := &settings{key: key, name: g.name, raw: raw, params: g.params, perMethod: g.perMethod,
		extra: map[string]any{}, incFit: map[string]any{}, dataset: maps.Clone(g.dataset), profile: g.profile}
	methodsOf := toList(raw["methods"])
	if m, ok := inc["method"]; ok {
		methodsOf = toList(m)
	}
	for _, k := range sortedKeys(inc) {
		v := inc[k]
		switch k {
		case "method":
			raw["methods"] = v
		case "split":
			raw["splits"] = v
		case "seed":
			raw["seeds"] = v
		case "dataset":
			if t, ok := v.(map[string]any); ok {
				maps.Copy(s.dataset, t)
			} else {
				raw["datasets"] = v
			}
		case "protocol", "scaling":
			s.dataset[k] = v
		case "params":
			maps.Copy(s.extra, tableOf(v))
		default:
			if contains(fitKeys, k) || k == "metrics" || k == "artifacts" || k == "time_limit" || k == "mem_limit" {
				raw[k] = v
				s.incFit[k] = v
			} else if documentedBy(methodsOf, k) {
				s.extra[k] = v
			} else {
				s.dataset[k] = v
			}
		}
	}
	return s
}

// layerRank orders the keys that set a method's parameter by how
// specifically they address it: the grid's [params], then the method's
// table, then an include.
func layerRank(key string) int {
	switch {
	case strings.Contains(key, ".params."): // also an include's inherited [params]
		return 0
	case strings.Contains(key, ".method."):
		return 1
	}
	return 2
}

// chooseMoreSpecific resolves a size parameter set beside the structure
// parameter it chooses (num_inducing and frequencies, methods.ParamDoc
// Chooses): the one set more specifically for this method stays, the
// other is dropped from layer (returned: parameter → the key that keeps
// it out). In the grid's [params] both are the grid's (each key for the
// methods that have it, as paper configs sweep every method's own size),
// so the structure parameter, which names this method's structure, wins;
// both in the method's own table or an include are an error, which the
// method's validation reports.
func chooseMoreSpecific(m methods.Method, layer map[string]any, src map[string]string) map[string]string {
	dropped := map[string]string{}
	for _, d := range m.Params {
		if d.Chooses == "" {
			continue
		}
		a, b := src[d.Name], src[d.Chooses]
		if a == "" || b == "" {
			continue
		}
		lose, win := d.Name, b
		switch ra, rb := layerRank(a), layerRank(b); {
		case ra == rb && ra > 0:
			continue
		case ra > rb:
			lose, win = d.Chooses, a
		}
		dropped[lose] = win
		delete(layer, lose)
		delete(src, lose)
	}
	return dropped
}

// warnUnswept warns when the grid's [params] sweep (a list of values)
// and none of the swept parameters reaches method m: it has none of them,
// its own table sets them, or a more specific key keeps them out
// (dropped). Its runs then collapse to one per dataset and split, which a
// sweep's reader would not assume. (A method that follows a swept
// parameter of its own, as each of a paper config's methods sweeps its
// own size, is not warned about the others.)
func (x *expander) warnUnswept(s *settings, m methods.Method, dropped map[string]string) {
	var swept, why []string
	for _, k := range sortedKeys(s.params) {
		kind := methods.Int
		for _, other := range strs(s.raw["methods"]) {
			if om, err := methods.Lookup(other); err == nil {
				if d := paramDoc(om, k); d != nil {
					kind = d.Kind
				}
			}
		}
		if len(axisValues(s.params[k], kind == methods.Floats)) < 2 {
			continue
		}
		swept = append(swept, k)
		switch {
		case paramDoc(m, k) == nil:
			why = append(why, k+": it has no such parameter")
		case s.perMethod[m.Name][k] != nil:
			why = append(why, fmt.Sprintf("%s: %s.method.%s.%s sets it", k, s.key, m.Name, k))
		case dropped[k] != "":
			why = append(why, fmt.Sprintf("%s: %s chooses it (%s)", k, dropped[k][strings.LastIndex(dropped[k], ".")+1:], dropped[k]))
		default:
			return // m follows this sweep
		}
	}
	if len(swept) == 0 {
		return
	}
	pk := s.key + ".params." + swept[0]
	msg := fmt.Sprintf("%s:%d: %s: the grid sweeps %s, but method %s follows none of them (%s), so it runs once per dataset and split",
		x.f.Path, x.f.lines.Line(pk), s.key+".params", strings.Join(swept, ", "), m.Name, strings.Join(why, "; "))
	if !contains(x.warnings, msg) {
		x.warnings = append(x.warnings, msg)
	}
}

func documentedBy(names []any, param string) bool {
	for _, n := range names {
		name, _ := n.(string)
		if m, err := methods.Lookup(name); err == nil && paramDoc(m, param) != nil {
			return true
		}
	}
	return false
}

func paramDoc(m methods.Method, name string) *methods.ParamDoc {
	for i := range m.Params {
		if m.Params[i].Name == name {
			return &m.Params[i]
		}
	}
	return nil
}

// expand produces the runs of one settings layer; keep filters them. It
// validates the layer's keys (layerOf), builds its dataset and method
// axes, checks what spans them (checkAxes) and, when all is well, runs
// through their product (runs).
func (x *expander) expand(s *settings, keep func(*RunSpec) bool) {
	n0 := len(*x.es)
	l := x.layerOf(s)
	ds := x.datasetAxes(s)
	mcs := x.methodAxes(s, l)
	x.checkAxes(s, l, ds, mcs)
	if len(*x.es) > n0 || !x.checkSeedsSplits(s, l) {
		return
	}
	x.produce(s, l, ds, mcs, keep)
}

// layer is what a settings layer fixes for all its runs.
type layer struct {
	methodNames []string
	ms          []methods.Method // those of methodNames that exist
	metrics     []string         // extra metrics to record, sorted
	artifacts   []string         // artifacts to store, sorted
	timeLimit   time.Duration
	memLimit    int64
	tasks       []string // "" is the method's default task
	splits      []int
	datasets    []string
}

// layerOf reads and checks the layer's methods, parameters, metrics,
// artifacts, limits, tasks and fit settings.
func (x *expander) layerOf(s *settings) layer {
	es, f, key := x.es, x.f, s.key
	l := layer{methodNames: strs(s.raw["methods"])}
	for _, name := range l.methodNames {
		m, err := methods.Lookup(name)
		if err != nil {
			f.errorf(es, key+".methods", "%v", err)
			continue
		}
		l.ms = append(l.ms, m)
	}
	// Every parameter must belong to at least one of the grid's methods. An
	// include inherits the grid's parameters, checked against all of its
	// methods already: it may narrow the methods to some that lack one.
	for _, k := range sortedKeys(s.params) {
		if !documentedBy(toList(s.raw["methods"]), k) && len(l.ms) == len(l.methodNames) && !strings.Contains(key, "include") {
			f.errorf(es, key+".params."+k, "no method of this grid (%s) has this parameter%s; valid parameters: %s",
				strings.Join(l.methodNames, ", "), suggest.Hint(k, paramUnion(l.ms)), strings.Join(paramUnion(l.ms), ", "))
		}
	}
	for _, mname := range sortedKeys(s.perMethod) {
		if !contains(l.methodNames, mname) && !strings.Contains(key, "include") {
			f.errorf(es, key+".method."+mname, "override for method %q, which is not in this grid's methods (%s)", mname, strings.Join(l.methodNames, ", "))
		}
	}
	for _, v := range toList(s.raw["metrics"]) {
		name := v.(string)
		if err := results.CheckMetricName(name); err != nil {
			f.errorf(es, key+".metrics", "%v", err)
		}
		l.metrics = append(l.metrics, name)
	}
	sort.Strings(l.metrics)
	for _, v := range toList(s.raw["artifacts"]) {
		name, _ := v.(string)
		if !artifactNameRE.MatchString(name) {
			f.errorf(es, key+".artifacts", "artifact name %q must be lower-case snake case, e.g. %q (from the runner: %s; others come from the method)", name, ArtifactPredictions, strings.Join(RunnerArtifacts, ", "))
		}
		l.artifacts = append(l.artifacts, name)
	}
	sort.Strings(l.artifacts)
	if tl, ok := s.raw["time_limit"].(string); ok {
		l.timeLimit, _ = time.ParseDuration(tl)
	}
	if ml, ok := s.raw["mem_limit"].(string); ok {
		l.memLimit, _ = ParseBytes(ml)
	}
	l.tasks = strs(s.raw["task"])
	if l.tasks == nil {
		l.tasks = []string{""}
	}
	for _, k := range methodFitKeys {
		if v, ok := s.raw[k]; ok {
			x.checkFitValue(s.key+"."+k, k, v)
		}
	}
	l.splits = ints(s.raw["splits"], 0)
	l.datasets = strs(s.raw["datasets"])
	return l
}

// datasetAxes are the values of each dataset parameter (keys sorted) and
// their product.
type datasetAxes struct {
	keys   []string
	combos [][]any
}

func (x *expander) datasetAxes(s *settings) datasetAxes {
	d := datasetAxes{keys: sortedKeys(s.dataset)}
	var axes [][]any
	for _, k := range d.keys {
		vals := axisValues(s.dataset[k], false)
		if len(vals) == 0 {
			x.f.errorf(x.es, s.key+".dataset."+k, "empty list: the grid would have no runs; give at least one value")
		}
		for _, v := range vals {
			if err := checkFinite(v); err != nil {
				x.f.errorf(x.es, s.key+".dataset."+k, "%v; give a finite number", err)
			}
		}
		axes = append(axes, vals)
	}
	d.combos = product(axes)
	return d
}

// params is combination c of the dataset parameters.
func (d datasetAxes) params(c []any) map[string]any { return datasetParams(d.keys, c) }

// methodAxes is a method's parameter combinations, with the key that sets
// each parameter and its fit axes.
type methodAxes struct {
	m      methods.Method
	params []map[string]any
	src    map[string]string // parameter → the key that sets it
	fit    fitAxes
}

// methodAxes collects, per method of the layer, the parameters that apply
// to it (grid params, its [method.NAME] overrides, keys outside params),
// checks each value on its own, and forms their product with the method's
// defaults filled in. A method with an invalid value gets no combinations.
func (x *expander) methodAxes(s *settings, l layer) []methodAxes {
	es, f, key := x.es, x.f, s.key
	var mcs []methodAxes
	for _, m := range l.ms {
		lay := map[string]any{}
		src := map[string]string{}
		for k, v := range s.params {
			if paramDoc(m, k) != nil {
				lay[k], src[k] = v, key+".params."+k
			}
		}
		for k, v := range s.perMethod[m.Name] {
			if contains(methodFitKeys, k) {
				continue // a fit setting of this method's runs (fitLayer)
			}
			if paramDoc(m, k) == nil {
				f.errorf(es, key+".method."+m.Name+"."+k, "method %s has no parameter %q%s; valid parameters: %s", m.Name, k,
					suggest.Hint(k, paramUnion([]methods.Method{m})), strings.Join(paramUnion([]methods.Method{m}), ", "))
				continue
			}
			lay[k], src[k] = v, key+".method."+m.Name+"."+k
		}
		for k, v := range s.extra {
			if paramDoc(m, k) == nil {
				f.errorf(es, key+"."+k, "method %s has no parameter %q, and %q is not a grid key%s; valid parameters: %s",
					m.Name, k, k, suggest.Hint(k, paramUnion([]methods.Method{m})), strings.Join(paramUnion([]methods.Method{m}), ", "))
				continue
			}
			lay[k], src[k] = v, key+"."+k
		}
		dropped := chooseMoreSpecific(m, lay, src)
		if !strings.Contains(key, "include") {
			x.warnUnswept(s, m, dropped)
		}
		pkeys := sortedKeys(lay)
		var axes [][]any
		bad := false // a value invalid on its own (reported at its key)
		for _, k := range pkeys {
			d := paramDoc(m, k)
			vals := axisValues(lay[k], d.Kind == methods.Floats)
			if len(vals) == 0 {
				f.errorf(es, src[k], "empty list: the grid would have no runs; give at least one value")
			}
			for _, v := range vals {
				if _, err := m.Validate(map[string]any{k: v}); err != nil {
					f.errorf(es, src[k], "%v", err)
					bad = true
				}
			}
			axes = append(axes, vals)
		}
		for _, t := range l.tasks {
			if t != "" && !m.Supports(methods.Task(t)) {
				f.errorf(es, key+".task", "method %s does not support task %q", m.Name, t)
			}
		}
		mc := methodAxes{m: m, src: src, fit: x.fitLayer(s, m.Name)}
		for _, c := range product(axes) {
			p := make(map[string]any, len(pkeys))
			for i, k := range pkeys {
				p[k] = normalize(paramDoc(m, k).Kind, c[i])
			}
			for _, d := range m.Defaulted(p) {
				p[d.Name] = normalize(d.Kind, d.Default)
			}
			if !bad {
				mc.params = append(mc.params, p)
			}
		}
		mcs = append(mcs, mc)
	}
	return mcs
}

// checkAxes checks what spans the axes: every dataset combination and each
// method's natural-gradient settings.
func (x *expander) checkAxes(s *settings, l layer, ds datasetAxes, mcs []methodAxes) {
	for _, dn := range l.datasets {
		for _, c := range ds.combos {
			x.checkDataset(s.key, dn, ds.params(c), l.splits)
		}
	}
	for _, mc := range mcs {
		x.checkNatGrad(s, mc.m, mc.fit)
	}
}

// checkSeedsSplits reports the first negative seed or split, once the rest
// of the layer is valid.
func (x *expander) checkSeedsSplits(s *settings, l layer) bool {
	for _, sd := range ints(s.raw["seeds"], 0) {
		if sd < 0 {
			x.f.errorf(x.es, s.key+".seeds", "must be ≥ 0, got %d", sd)
			return false
		}
	}
	for _, sp := range l.splits {
		if sp < 0 {
			x.f.errorf(x.es, s.key+".splits", "must be ≥ 0, got %d", sp)
			return false
		}
	}
	return true
}

// fitPoint is one combination of a method's fit axes.
type fitPoint struct {
	iterations   int
	optimizer    string
	learningRate float64
	batchSize    int
	memory       int
	tol          tolerance
}

// points is the product of the fit axes, in the order runs are produced.
func (fa fitAxes) points() []fitPoint {
	var out []fitPoint
	for _, it := range fa.iterations {
		for _, opt := range fa.optimizers {
			for _, lr := range fa.learningRates {
				for _, bs := range fa.batchSizes {
					for _, mem := range fa.memories {
						for _, tol := range fa.tolerances {
							out = append(out, fitPoint{it, opt, lr, bs, mem, tol})
						}
					}
				}
			}
		}
	}
	return out
}

// produce makes the runs of the product of the layer's axes (datasets and
// their parameters, splits, seeds, methods and their parameters, tasks,
// fit settings), in that order; keep filters them. The runs a grid keeps
// are checked as a whole: the method's checks across parameters, then
// what they need on the dataset (both once per combination).
func (x *expander) produce(s *settings, l layer, ds datasetAxes, mcs []methodAxes, keep func(*RunSpec) bool) {
	es, f, key := x.es, x.f, s.key
	seeds := ints(s.raw["seeds"], 0)
	source := fmt.Sprintf("%s:%d", f.Path, f.lines.Line(key))
	type planned struct {
		plan methods.Plan
		ok   bool
	}
	plans := map[planKey]planned{}
	type checked struct {
		p  methods.Params
		ok bool
	}
	combos := map[[2]int]checked{}
	for _, dn := range l.datasets {
		for ci, c := range ds.combos {
			dp := ds.params(c)
			protocol, _ := dp["protocol"].(string)
			scaling, _ := dp["scaling"].(string)
			delete(dp, "protocol")
			delete(dp, "scaling")
			dsFiles := x.fileHashes(key+".dataset", "", dp, isDatasetFileParam)
			for _, split := range l.splits {
				for _, seed := range seeds {
					for mi, mc := range mcs {
						for pi, p := range mc.params {
							files := x.fileHashes(key+".params", "", p, isMethodFileParam)
							maps.Copy(files, dsFiles)
							for _, task := range l.tasks {
								for _, fp := range mc.fit.points() {
									r := &RunSpec{
										Experiment: f.Name, Grid: s.name, Profile: s.profile,
										Method: mc.m.Name, Params: p,
										Dataset: dn, DatasetParams: dp, Protocol: protocol, Scaling: scaling,
										Split: split, Seed: uint64(seed), Task: task,
										Iterations: fp.iterations, Optimizer: fp.optimizer, LearningRate: fp.learningRate, BatchSize: fp.batchSize,
										GradTol: fp.tol.grad, FTol: fp.tol.ftol, LBFGSMemory: fp.memory, StopTol: fp.tol.stop,
										Metrics: l.metrics, Artifacts: l.artifacts, TimeLimit: l.timeLimit, MemLimit: l.memLimit, Source: source,
										Files: files,
									}
									if fp.iterations == defaultIterations {
										// The method's default budget, ended at
										// convergence by its stopping tolerance
										// unless the grid gives one.
										def := defaultFit(mc.m, p, methods.FitCase{Task: fitTask(mc.m, task), Minibatch: fp.batchSize > 0})
										r.Iterations = def.Iterations
										if !mc.fit.stopSet {
											r.StopTol = def.StopTol
										}
									}
									if keep != nil && !keep(r) {
										continue
									}
									ck, done := combos[[2]int{mi, pi}]
									if !done {
										ck.p, ck.ok = x.checkCombo(key, mc.m, p, mc.src)
										combos[[2]int{mi, pi}] = ck
									}
									if !ck.ok {
										continue
									}
									pk := planKey{method: mi, params: pi, dataset: fmt.Sprint(dn, "\x00", ci), batch: fp.batchSize}
									pl, done := plans[pk]
									if !done {
										pl.plan, pl.ok = x.planRun(key, mc.m, ck.p, mc.src, dn, dp, fp.batchSize)
										plans[pk] = pl
									}
									if !pl.ok {
										continue
									}
									r.Plan = pl.plan
									if err := r.seal(); err != nil {
										f.errorf(es, key, "%v", err)
										return
									}
									if prev, dup := x.seen[r.ID]; dup {
										f.errorf(es, key, "duplicate run %s (%s): already produced by %s", r.ID, r.Label(), prev)
										continue
									}
									x.seen[r.ID] = f.Path + " " + key
									x.runs = append(x.runs, r)
								}
							}
						}
					}
				}
			}
		}
	}
}

func (x *expander) profileName() string {
	if x.profile.Name == "" {
		return FullProfile
	}
	return x.profile.Name
}

func (x *expander) checkDataset(key, name string, params map[string]any, splits []int) {
	b, _ := json.Marshal([]any{params, splits})
	ck := name + string(b)
	if x.dsChecked[ck] {
		return
	}
	x.dsChecked[ck] = true
	p := maps.Clone(params)
	protocol, _ := p["protocol"].(string)
	scaling, _ := p["scaling"].(string)
	delete(p, "protocol")
	delete(p, "scaling")
	if x.opt.ValidateDataset != nil {
		if err := x.opt.ValidateDataset(name, p); err != nil {
			x.f.errorf(x.es, key+".datasets", "dataset %q: %v", name, err)
			return
		}
	}
	if x.opt.CheckRun != nil {
		if err := x.opt.CheckRun(name, p, protocol, scaling, splits); err != nil {
			x.f.errorf(x.es, datasetKey(key, err), "dataset %q: %v", name, err)
		}
	}
}

// checkFitValue validates one fit setting a grid or a method's table
// lists explicitly at key (absent ones mean "the method's default" and
// are stored as 0).
func (x *expander) checkFitValue(key, k string, v any) {
	switch k {
	case "iterations":
		for _, it := range ints(v, 0) {
			if it < 0 {
				x.f.errorf(x.es, key, "must be ≥ 0 (0 evaluates at the initial values; leave it out for the method's default budget), got %d", it)
			}
		}
	case "learning_rate":
		for _, lr := range floats(v) {
			if !(lr > 0) || math.IsInf(lr, 0) {
				x.f.errorf(x.es, key, "must be > 0, got %v (leave it out for the method's default)", lr)
			}
		}
	case "batch_size":
		for _, bs := range ints(v, 0) {
			if bs < 0 {
				x.f.errorf(x.es, key, "must be ≥ 0 (0 is full batch), got %d", bs)
			}
		}
	case "grad_tol":
		for _, gt := range floats(v) {
			if gt < 0 || math.IsNaN(gt) || math.IsInf(gt, 0) {
				x.f.errorf(x.es, key, "must be ≥ 0 (0 is the method's default), got %v", gt)
			}
		}
	case "ftol":
		for _, ft := range floats(v) {
			if !(ft >= 0 && ft < 1) {
				x.f.errorf(x.es, key, "must be ≥ 0 and < 1 (SciPy L-BFGS-B's relative reduction per iteration, e.g. 2.220446049250313e-9; 0 is off), got %v", ft)
			}
		}
	case "lbfgs_memory":
		for _, m := range ints(v, 0) {
			if m < 0 {
				x.f.errorf(x.es, key, "must be ≥ 0 (the curvature pairs L-BFGS keeps: SciPy's L-BFGS-B keeps 10, torch's LBFGS 100; 0 is the default, %d), got %d", optim.DefaultLBFGSMemory, m)
			}
		}
	case "stop_tol":
		for _, st := range floats(v) {
			if !(st >= 0 && st < 1) {
				x.f.errorf(x.es, key, "must be ≥ 0 and < 1 (a relative change of the objective per iteration, e.g. 1e-5; 0 is off), got %v", st)
			}
		}
	}
}

// fitAxes are the fit settings one method's runs of a grid sweep.
type fitAxes struct {
	iterations    []int // defaultIterations: the method's default budget
	optimizers    []string
	learningRates []float64
	batchSizes    []int
	memories      []int // lbfgs_memory; 0: optim.DefaultLBFGSMemory
	tolerances    []tolerance
	stopSet       bool // the grid gives stop_tol
}

// defaultIterations stands for a grid without an iterations key: each run
// gets its method's default budget (methods.Recipe.Iterations).
const defaultIterations = -1

// fitLayer is the fit settings of method's runs: the grid's, replaced by
// its [grid.method.NAME] table's, replaced by an include's own.
func (x *expander) fitLayer(s *settings, method string) fitAxes {
	raw := map[string]any{}
	for _, k := range methodFitKeys {
		if v, ok := s.raw[k]; ok {
			raw[k] = v
		}
	}
	for _, k := range methodFitKeys {
		v, ok := s.perMethod[method][k]
		if !ok {
			continue
		}
		if _, inc := s.incFit[k]; inc {
			continue
		}
		if !strings.Contains(s.key, "include") { // checked once, with the grid
			key := s.key + ".method." + method + "." + k
			if msg := checkKind(gridKeys[k], v); msg != "" {
				x.f.errorf(x.es, key, "%s", msg)
				continue
			}
			x.f.checkChoices(x.es, key, k, v)
			x.checkFitValue(key, k, v)
		}
		raw[k] = v
	}
	fa := fitAxes{iterations: ints(raw["iterations"], defaultIterations), optimizers: strs(raw["optimizer"]),
		learningRates: floats(raw["learning_rate"]), batchSizes: ints(raw["batch_size"], 0), memories: ints(raw["lbfgs_memory"], 0)}
	if fa.optimizers == nil {
		fa.optimizers = []string{""}
	}
	_, fa.stopSet = raw["stop_tol"]
	fa.tolerances = tolerances(floats(raw["grad_tol"]), floats(raw["ftol"]), floats(raw["stop_tol"]))
	return fa
}

// defaultFit is m's default recipe for raw parameters p (the zero Recipe
// when they are invalid: the run is then refused by checkCombo).
func defaultFit(m methods.Method, p map[string]any, c methods.FitCase) methods.Recipe {
	pv, err := m.Validate(p)
	if err != nil {
		return methods.Recipe{}
	}
	return m.DefaultFit(pv, c)
}

// fitTask is the task a default recipe is asked for: the grid's, else the
// method's first.
func fitTask(m methods.Method, task string) methods.Task {
	if task != "" || len(m.Tasks) == 0 {
		return methods.Task(task)
	}
	return m.Tasks[0]
}

// checkFilterKeys reports exclude keys that name nothing in the grid.
func (x *expander) checkFilterKeys(s *settings, what string, tables []map[string]any) {
	var ms []methods.Method
	for _, n := range strs(s.raw["methods"]) {
		if m, err := methods.Lookup(n); err == nil {
			ms = append(ms, m)
		}
	}
	valid := append([]string{"method", "dataset", "split", "seed", "protocol", "scaling", "params"}, fitKeys...)
	valid = append(valid, paramUnion(ms)...)
	valid = append(valid, sortedKeys(s.dataset)...)
	for i, t := range tables {
		for _, k := range sortedKeys(t) {
			if !contains(valid, k) {
				x.f.errorf(x.es, fmt.Sprintf("%s.%s[%d].%s", s.key, what, i, k), "matches nothing: not a grid key, method parameter or dataset parameter of this grid; valid keys: %s", strings.Join(valid, ", "))
			}
		}
	}
}

// matches reports whether run r agrees with every key of an exclude table.
func matches(r *RunSpec, e map[string]any) bool {
	for k, v := range e {
		var got any
		switch k {
		case "method":
			got = r.Method
		case "dataset":
			if t, ok := v.(map[string]any); ok {
				for dk, dv := range t {
					if !valueIn(r.DatasetParams[dk], dv) {
						return false
					}
				}
				continue
			}
			got = r.Dataset
		case "params":
			for pk, pv := range tableOf(v) {
				if !valueIn(r.Params[pk], pv) {
					return false
				}
			}
			continue
		case "split":
			got = r.Split
		case "seed":
			got = r.Seed
		case "protocol":
			got = r.Protocol
		case "scaling":
			got = r.Scaling
		case "iterations":
			got = r.Iterations
		case "optimizer":
			got = r.Optimizer
		case "learning_rate":
			got = r.LearningRate
		case "batch_size":
			got = r.BatchSize
		case "grad_tol":
			got = r.GradTol
		case "ftol":
			got = r.FTol
		case "lbfgs_memory":
			got = r.LBFGSMemory
		case "stop_tol":
			got = r.StopTol
		case "task":
			got = r.Task
		default:
			if pv, ok := r.Params[k]; ok {
				got = pv
			} else if dv, ok := r.DatasetParams[k]; ok {
				got = dv
			} else {
				return false
			}
		}
		if !valueIn(got, v) {
			return false
		}
	}
	return true
}

// valueIn reports whether got equals want or, when want is a list of
// scalars, any of its elements.
func valueIn(got, want any) bool {
	if equalValue(got, want) {
		return true
	}
	if l, ok := want.([]any); ok {
		for _, w := range l {
			if equalValue(got, w) {
				return true
			}
		}
	}
	return false
}

func equalValue(a, b any) bool {
	if fa, ok := anyconv.Float(a); ok {
		fb, ok := anyconv.Float(b)
		return ok && fa == fb
	}
	la, oka := listOf(a)
	lb, okb := listOf(b)
	if oka && okb {
		if len(la) != len(lb) {
			return false
		}
		for i := range la {
			if !equalValue(la[i], lb[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

func listOf(v any) ([]any, bool) {
	switch x := v.(type) {
	case []any:
		return x, true
	case []float64:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = e
		}
		return out, true
	}
	return nil, false
}

// axisValues returns the values a key sweeps over. A list expands; for a
// parameter whose value is itself a list (listValued), only a list of
// lists expands and a flat list is one value.
func axisValues(v any, listValued bool) []any {
	l, ok := v.([]any)
	if !ok {
		return []any{v}
	}
	if !listValued {
		if len(l) > 0 {
			if _, nested := l[0].([]any); nested || allLists(l) {
				return l
			}
		}
		return l
	}
	if len(l) > 0 && allLists(l) {
		return l
	}
	return []any{v}
}

func allLists(l []any) bool {
	for _, e := range l {
		if _, ok := e.([]any); !ok {
			return false
		}
	}
	return true
}

// product returns the Cartesian product of axes in row-major order.
func product(axes [][]any) [][]any {
	out := [][]any{{}}
	for _, ax := range axes {
		next := make([][]any, 0, len(out)*len(ax))
		for _, prefix := range out {
			for _, v := range ax {
				c := make([]any, len(prefix)+1)
				copy(c, prefix)
				c[len(prefix)] = v
				next = append(next, c)
			}
		}
		out = next
	}
	return out
}

func datasetParams(keys []string, c []any) map[string]any {
	p := make(map[string]any, len(keys))
	for i, k := range keys {
		p[k] = c[i]
	}
	return p
}

// normalize converts a validated TOML value to the Go type the method
// parameter kind uses, so equal specs encode to identical JSON.
func normalize(k methods.Kind, v any) any {
	switch k {
	case methods.Float:
		f, _ := anyconv.Float(v)
		return f
	case methods.Int:
		f, _ := anyconv.Float(v)
		return int(math.Round(f))
	case methods.Floats:
		if l, ok := listOf(v); ok {
			out := make([]float64, len(l))
			for i, e := range l {
				out[i], _ = anyconv.Float(e)
			}
			return out
		}
		f, _ := anyconv.Float(v)
		return []float64{f}
	}
	return v
}

func paramUnion(ms []methods.Method) []string {
	set := map[string]bool{}
	for _, m := range ms {
		for _, p := range m.Params {
			set[p.Name] = true
		}
	}
	return sortedKeys(set)
}

func tableOf(v any) map[string]any {
	t, _ := v.(map[string]any)
	if t == nil {
		return map[string]any{}
	}
	return maps.Clone(t)
}

func strs(v any) []string {
	var out []string
	for _, e := range toList(v) {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func ints(v any, def int) []int {
	if v == nil {
		return []int{def}
	}
	var out []int
	for _, e := range toList(v) {
		if n, ok := e.(int64); ok {
			out = append(out, int(n))
		}
	}
	return out
}

func floats(v any) []float64 {
	if v == nil {
		return []float64{0}
	}
	var out []float64
	for _, e := range toList(v) {
		if n, ok := anyconv.Float(e); ok {
			out = append(out, n)
		}
	}
	return out
}

// tolerance is one combination of the fit's stopping tolerances.
type tolerance struct{ grad, ftol, stop float64 }

// tolerances is the product of the grad_tol, ftol and stop_tol axes.
func tolerances(grad, ftol, stop []float64) []tolerance {
	out := make([]tolerance, 0, len(grad)*len(ftol)*len(stop))
	for _, g := range grad {
		for _, f := range ftol {
			for _, s := range stop {
				out = append(out, tolerance{g, f, s})
			}
		}
	}
	return out
}
