package datasets

import (
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"sgplab/gp"
	"sgplab/internal/anyconv"
)

// Request asks for one prepared train/test split.
type Request struct {
	Name     string
	Params   map[string]any // generator parameters / per-dataset options (n, kernel, ...)
	Split    int            // split index (fold / published split / replicate)
	Seed     uint64
	Protocol string // "" = the dataset's default
	Scaling  string // "" = the dataset's default
	DataDir  string // "" = DataDir()
	// Task is the grid's task; only the user's csv dataset reads it (a
	// registry dataset's task is fixed).
	Task string
	// FileSHA256 maps a file parameter (csv: file, test_file) to the sha256
	// the run was expanded with; a file whose content differs is refused.
	FileSHA256 map[string]string
}

// Provenance records exactly what a run was computed on.
type Provenance struct {
	Name     string
	Files    []FileRecord
	Protocol string
	Scaling  string
	Seed     uint64
	Split    int
	NTrain   int
	NTest    int
	// YShift and YScale record the scaling of y (y_original = y_scaled ×
	// YScale + YShift); YScale is the output standard deviation under the
	// standardize-* scalings.
	YShift, YScale float64
	Params         map[string]any
	Notes          []string
}

// String is a one-line summary for tables and logs.
func (p Provenance) String() string {
	var fs []string
	for _, f := range p.Files {
		fs = append(fs, f.Path+"@"+f.SHA256[:12])
	}
	return fmt.Sprintf("%s split=%d seed=%d protocol=%s scaling=%s train=%d test=%d files=[%s] notes=[%s]",
		p.Name, p.Split, p.Seed, p.Protocol, p.Scaling, p.NTrain, p.NTest, strings.Join(fs, " "), strings.Join(p.Notes, "; "))
}

// Prepared is a split, scaled dataset ready for fitting.
type Prepared struct {
	Name           string
	Task           string // "regression" | "classification"
	Train, Test    gp.Data
	YShift, YScale float64   // y_original = y_scaled*YScale + YShift
	XShift, XScale []float64 // x_original = x_scaled*XScale + XShift, per column
	Provenance     Provenance
}

// Protocols.
const (
	ProtoRandom9010 = "random-90-10"
	ProtoRandom8020 = "random-80-20"
	// ProtoBB9010 is bayesian_benchmarks' split, bit for bit:
	// numpy.random.seed(split); numpy.random.shuffle(arange(N)); the first
	// int(0.9 N) rows train. Pair it with scaling standardize-full (its
	// normalisation with full-data statistics and std + 1e-6).
	ProtoBB9010    = "bb-90-10"
	ProtoPublished = "published"
	ProtoFold      = "fold"
	ProtoAirline   = "airline-2/3"
	ProtoLast10    = "last-10pct"
	ProtoSynthetic = "synthetic"
	ProtoAllTrain  = "all-train"
)

// Scalings.
const (
	ScaleNone      = "none"
	ScaleStdTrain  = "standardize-train"
	ScaleStdFull   = "standardize-full"
	ScaleUnitBox   = "unit-box"
	scaleBoxPrefix = "box:" // "box:<v>": inputs to [-v, v]
)

var cache struct {
	sync.Mutex
	m map[string]*cached
}

type cached struct {
	once sync.Once
	t    *table
	err  error
}

// loadCached loads a dataset once per process (per data directory and load
// options); concurrent callers share the result.
func loadCached(dir string, e *entry, params map[string]any) (*table, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	// Every parameter except the subsample size n changes what is loaded.
	var opts []string
	for k, v := range params {
		if k != "n" {
			opts = append(opts, fmt.Sprintf("%s=%v", k, v))
		}
	}
	sort.Strings(opts)
	key := e.name + "|" + abs + "|" + strings.Join(opts, "|")
	cache.Lock()
	if cache.m == nil {
		cache.m = map[string]*cached{}
	}
	c, ok := cache.m[key]
	if !ok {
		c = &cached{}
		cache.m[key] = c
	}
	cache.Unlock()
	c.once.Do(func() { c.t, c.err = load(dir, e, params) })
	if c.err != nil {
		// Do not cache failures: the file may be fetched later in the process.
		cache.Lock()
		delete(cache.m, key)
		cache.Unlock()
	}
	return c.t, c.err
}

// rngFor derives the PCG stream of (dataset, split, seed).
func rngFor(name string, split int, seed uint64, purpose string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name + "\x00" + purpose))
	return rand.New(rand.NewPCG(seed, h.Sum64()^(uint64(split)+1)*0x9E3779B97F4A7C15))
}

// Prepare loads (cached), splits and scales a dataset.
func Prepare(req Request) (*Prepared, error) {
	if req.Name == UserCSV {
		return prepareUser(req)
	}
	e, err := lookup(req.Name)
	if err != nil {
		return nil, err
	}
	if err := Validate(req.Name, req.Params); err != nil {
		return nil, err
	}
	if req.Split < 0 {
		return nil, fmt.Errorf("datasets: %s: negative split index %d", e.name, req.Split)
	}
	dir := req.DataDir
	if dir == "" {
		dir = DataDir()
	}
	proto := req.Protocol
	if proto == "" {
		proto = e.protocol
	}
	scaling := req.Scaling
	if scaling == "" {
		scaling = e.scaling
	}
	prov := Provenance{Name: e.name, Protocol: proto, Scaling: scaling, Seed: req.Seed, Split: req.Split, Params: req.Params}
	var train, test gp.Data
	if e.format == fmtSynthetic {
		if proto != ProtoSynthetic {
			return nil, fmt.Errorf("datasets: %s: synthetic data only supports protocol %q, not %q", e.name, ProtoSynthetic, proto)
		}
		rng := rngFor(e.name, req.Split, req.Seed, "generate")
		var notes []string
		train, test, notes, err = e.gen.make(req.Params, rng)
		if err != nil {
			return nil, fmt.Errorf("datasets: %s: %w", e.name, err)
		}
		prov.Notes = append(prov.Notes, notes...)
	} else {
		t, err := loadCached(dir, e, req.Params)
		if err != nil {
			return nil, err
		}
		prov.Files = append(prov.Files, t.files...)
		prov.Notes = append(prov.Notes, e.notes)
		prov.Notes = append(prov.Notes, t.notes...)
		trIdx, teIdx, notes, err := splitIndices(e, t, proto, req)
		if err != nil {
			return nil, err
		}
		prov.Notes = append(prov.Notes, notes...)
		full := gp.Data{X: t.x, Y: t.y}
		train = full.Subset(trIdx)
		if len(teIdx) > 0 {
			test = full.Subset(teIdx)
		}
		if scaling == ScaleStdFull {
			// bayesian_benchmarks / IFF code: statistics over the full dataset.
			var all []int
			all = append(append(all, trIdx...), teIdx...)
			if _, ok := req.Params["n"]; !ok {
				all = seq(0, len(t.y))
			}
			sort.Ints(all)
			return finish(e, prov, train, test, scaling, full.Subset(all))
		}
	}
	return finish(e, prov, train, test, scaling, train)
}

func finish(e *entry, prov Provenance, train, test gp.Data, scaling string, stats gp.Data) (*Prepared, error) {
	p := &Prepared{Name: e.name, Task: e.task, YScale: 1}
	sc, err := fitScaler(scaling, stats, e.task == Classification)
	if err != nil {
		return nil, fmt.Errorf("datasets: %s: %w", e.name, err)
	}
	p.XShift, p.XScale, p.YShift, p.YScale = sc.xShift, sc.xScale, sc.yShift, sc.yScale
	p.Train, p.Test = sc.apply(train), sc.apply(test)
	if err := p.Train.Validate(); err != nil {
		return nil, fmt.Errorf("datasets: %s: training data: %w", e.name, err)
	}
	if p.Test.N() > 0 {
		if err := p.Test.Validate(); err != nil {
			return nil, fmt.Errorf("datasets: %s: test data: %w", e.name, err)
		}
	}
	prov.NTrain, prov.NTest = p.Train.N(), p.Test.N()
	prov.YShift, prov.YScale = p.YShift, p.YScale
	p.Provenance = prov
	return p, nil
}

// splitIndices applies a split protocol to a loaded table.
func splitIndices(e *entry, t *table, proto string, req Request) (train, test []int, notes []string, err error) {
	n := len(t.y)
	sub := n
	if v, ok, err := intParam(req.Params, "n"); err != nil {
		return nil, nil, nil, err
	} else if ok {
		if v > n {
			return nil, nil, nil, fmt.Errorf("datasets: %s: requested n = %d but the dataset has only %d rows", e.name, v, n)
		}
		if v < 2 {
			return nil, nil, nil, fmt.Errorf("datasets: %s: requested n = %d, need at least 2", e.name, v)
		}
		sub = v
	}
	rng := rngFor(e.name, req.Split, req.Seed, "split")
	perm := func() []int {
		p := rng.Perm(n)
		return p[:sub]
	}
	frac := func(trainFrac float64, ceil bool, what string) {
		p := perm()
		ntr := int(math.Floor(trainFrac * float64(sub)))
		if ceil {
			ntr = int(math.Ceil(trainFrac * float64(sub)))
		}
		train, test = p[:ntr], p[ntr:]
		notes = append(notes, fmt.Sprintf("%s: PCG permutation of (dataset, split %d, seed %d)", what, req.Split, req.Seed))
	}
	switch proto {
	case ProtoRandom9010:
		frac(0.9, false, "random 90/10, n_train = floor(0.9 N)")
	case ProtoRandom8020:
		frac(0.8, true, "random 80/20, n_train = ceil(0.8 N) (IFF code)")
	case ProtoBB9010:
		if sub != n {
			return nil, nil, nil, fmt.Errorf("datasets: %s: param n cannot be combined with protocol %s (it shuffles all %d rows)", e.name, proto, n)
		}
		if req.Split > math.MaxUint32 {
			return nil, nil, nil, fmt.Errorf("datasets: %s: protocol %s seeds numpy's RandomState with the split index, which must be < 2³², got %d", e.name, proto, req.Split)
		}
		p := seq(0, n)
		numpyShuffle(p, newMT19937(uint32(req.Split)))
		ntr := int(math.Floor(0.9 * float64(n)))
		train, test = p[:ntr], p[ntr:]
		notes = append(notes, fmt.Sprintf("bayesian_benchmarks 90/10: numpy RandomState(%d).shuffle(arange(%d)) (MT19937, bit-exact), first int(0.9 N) = %d rows train", req.Split, n, ntr))
	case ProtoAirline:
		frac(2.0/3.0, false, "subsample n, first floor(2n/3) train, rest test (VFF airline scripts)")
	case ProtoPublished, ProtoFold:
		if len(t.splits) == 0 {
			return nil, nil, nil, fmt.Errorf("datasets: %s: no published splits; valid protocols: %s", e.name, strings.Join(protocolsFor(e, t), ", "))
		}
		if req.Split >= len(t.splits) {
			return nil, nil, nil, fmt.Errorf("datasets: %s: split %d does not exist: the dataset ships %d splits (0..%d)", e.name, req.Split, len(t.splits), len(t.splits)-1)
		}
		if sub != n {
			return nil, nil, nil, fmt.Errorf("datasets: %s: param n cannot be combined with published splits", e.name)
		}
		s := t.splits[req.Split]
		train, test = s.train, s.test
		notes = append(notes, fmt.Sprintf("published split %d of %d", req.Split, len(t.splits)))
	case ProtoLast10:
		ntest := n / 10
		train, test = seq(0, n-ntest), seq(n-ntest, n)
		if sub != n {
			rng.Shuffle(len(train), func(i, j int) { train[i], train[j] = train[j], train[i] })
			if sub-ntest < 1 {
				return nil, nil, nil, fmt.Errorf("datasets: %s: n = %d leaves no training rows after the %d test rows", e.name, sub, ntest)
			}
			train = train[:sub-ntest]
			sort.Ints(train)
		}
		notes = append(notes, fmt.Sprintf("last %d rows (10%%) are test", ntest))
	case ProtoAllTrain:
		train = perm()
		sort.Ints(train)
		notes = append(notes, "all rows train, no test set")
	default:
		return nil, nil, nil, fmt.Errorf("datasets: %s: unknown protocol %q; valid: %s", e.name, proto, strings.Join(protocolsFor(e, t), ", "))
	}
	return train, test, notes, nil
}

func protocolsFor(e *entry, t *table) []string {
	ps := []string{ProtoRandom9010, ProtoBB9010, ProtoRandom8020, ProtoAirline, ProtoLast10, ProtoAllTrain}
	if t != nil && len(t.splits) > 0 {
		ps = append(ps, ProtoPublished, ProtoFold)
	}
	return ps
}

// scaler is an affine map per input column and for y.
type scaler struct {
	xShift, xScale []float64
	yShift, yScale float64
}

// apply scales d in place and returns it. Every caller hands over data of
// its own (the loaders' subsets and the generators' draws are fresh, never
// a cached table), and a copy would double the peak memory of a large set.
func (s scaler) apply(d gp.Data) gp.Data {
	if d.N() == 0 {
		return d
	}
	n, _ := d.X.Dims()
	for i := 0; i < n; i++ {
		row := d.X.RawRowView(i)
		for j, v := range row {
			row[j] = (v - s.xShift[j]) / s.xScale[j]
		}
		d.Y[i] = (d.Y[i] - s.yShift) / s.yScale
	}
	return d
}

// fitScaler computes the scaling from the statistics rows.
func fitScaler(scaling string, d gp.Data, classification bool) (scaler, error) {
	n, dim := d.X.Dims()
	s := scaler{xShift: make([]float64, dim), xScale: make([]float64, dim), yScale: 1}
	for j := range s.xScale {
		s.xScale[j] = 1
	}
	meanStd := func(get func(i int) float64) (float64, float64) {
		var m, v float64
		for i := 0; i < n; i++ {
			m += get(i)
		}
		m /= float64(n)
		for i := 0; i < n; i++ {
			v += (get(i) - m) * (get(i) - m)
		}
		return m, math.Sqrt(v / float64(n))
	}
	stdY := func(eps float64) {
		if classification {
			return
		}
		m, sd := meanStd(func(i int) float64 { return d.Y[i] })
		s.yShift, s.yScale = m, sd+eps
		if s.yScale == 0 {
			s.yScale = 1
		}
	}
	box := func(lo, hi float64) {
		for j := 0; j < dim; j++ {
			mn, mx := math.Inf(1), math.Inf(-1)
			for i := 0; i < n; i++ {
				mn, mx = math.Min(mn, d.X.At(i, j)), math.Max(mx, d.X.At(i, j))
			}
			r := mx - mn
			if r == 0 {
				r = 1
			}
			// x' = lo + (x-mn)(hi-lo)/r  <=>  x' = (x - shift)/scale
			s.xScale[j] = r / (hi - lo)
			s.xShift[j] = mn - lo*s.xScale[j]
		}
		stdY(0)
	}
	switch {
	case scaling == ScaleNone:
	case scaling == ScaleStdTrain || scaling == ScaleStdFull:
		eps := 0.0
		if scaling == ScaleStdFull {
			eps = 1e-6 // bayesian_benchmarks: std + 1e-6
		}
		for j := 0; j < dim; j++ {
			m, sd := meanStd(func(i int) float64 { return d.X.At(i, j) })
			s.xShift[j], s.xScale[j] = m, sd+eps
			if s.xScale[j] == 0 {
				s.xScale[j] = 1 // constant column: centre only
			}
		}
		stdY(eps)
	case scaling == ScaleUnitBox:
		box(0, 1)
	case strings.HasPrefix(scaling, scaleBoxPrefix):
		var v float64
		if _, err := fmt.Sscanf(scaling[len(scaleBoxPrefix):], "%g", &v); err != nil || !(v > 0) || math.IsInf(v, 0) {
			return s, fmt.Errorf("bad scaling %q: want box:<v> with v > 0", scaling)
		}
		box(-v, v)
	default:
		return s, fmt.Errorf("unknown scaling %q; valid: none, standardize-train, standardize-full, unit-box, box:<v>", scaling)
	}
	return s, nil
}

// intParam reads an integer parameter (TOML gives int64; JSON float64).
func intParam(p map[string]any, key string) (int, bool, error) {
	v, ok := p[key]
	if !ok {
		return 0, false, nil
	}
	switch x := v.(type) {
	case int:
		return x, true, nil
	case int64:
		return int(x), true, nil
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int(x), true, nil
		}
	}
	return 0, false, fmt.Errorf("datasets: param %s = %v (%T) is not an integer", key, v, v)
}

func floatParam(p map[string]any, key string, def float64) (float64, error) {
	v, ok := p[key]
	if !ok {
		return def, nil
	}
	if f, ok := anyconv.Float(v); ok {
		return f, nil
	}
	return 0, fmt.Errorf("datasets: param %s = %v (%T) is not a number", key, v, v)
}

// Validate checks a dataset name and its parameters.
func Validate(name string, params map[string]any) error {
	if name == UserCSV {
		_, err := parseUserParams(params)
		return err
	}
	e, err := lookup(name)
	if err != nil {
		return err
	}
	valid := map[string]string{} // key -> type
	if e.gen != nil {
		for _, p := range e.gen.params {
			valid[p.name] = p.kind
		}
	} else {
		valid["n"] = "int"
		if e.format == fmtDropout {
			valid["drop_constant_inputs"] = "bool"
		}
		if e.format == fmtSGEMM {
			valid["target"] = "string"
		}
		if e.format == fmtAirline {
			valid["months"] = "string"
		}
		if e.format == fmtPrecipitation {
			valid["stride"] = "int"
		}
	}
	var keys []string
	for k := range valid {
		keys = append(keys, k+" ("+valid[k]+")")
	}
	sort.Strings(keys)
	// Sorted, so that with several bad parameters the same one is reported
	// every time.
	for _, k := range slices.Sorted(maps.Keys(params)) {
		v := params[k]
		kind, ok := valid[k]
		if !ok {
			return fmt.Errorf("datasets: %s: unknown param %q; valid: %s", name, k, strings.Join(keys, ", "))
		}
		var bad bool
		switch kind {
		case "int":
			_, _, err := intParam(params, k)
			bad = err != nil
		case "float":
			_, err := floatParam(params, k, 0)
			bad = err != nil
		case "string":
			_, ok := v.(string)
			bad = !ok
		case "bool":
			_, ok := v.(bool)
			bad = !ok
		}
		if bad {
			return fmt.Errorf("datasets: %s: param %s = %v (%T) should be %s; valid: %s", name, k, v, v, kind, strings.Join(keys, ", "))
		}
	}
	if s, ok := params["months"].(string); ok {
		if _, err := parseMonths(s); err != nil {
			return err
		}
	}
	if v, ok, _ := intParam(params, "stride"); ok && v < 1 {
		return fmt.Errorf("datasets: %s: param stride = %d, need >= 1", name, v)
	}
	if e.gen != nil {
		return e.gen.check(params)
	}
	return nil
}
