package methods

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
	"sgplab/gp/ad"
	"sgplab/gp/features"
	"sgplab/gp/inducing"
	"sgplab/gp/inference"
	"sgplab/gp/kernels"
	"sgplab/gp/param"
	"sgplab/internal/suggest"
)

// A FeatureBuilder makes one inducing-feature set of a sparse model (a
// gp/features Feature) from the method's parameters, the model's kernel and
// the training data. Builders are registered by name (RegisterFeature) and
// a sparse method names the builder of each of its blocks, so a new
// inducing-feature type is a Feature in gp/features plus one registration
// here; see the package documentation.
type FeatureBuilder struct {
	Name string
	// Count is the number of inducing variables the set will have, from
	// parameters and the data's shape alone (before anything runs); 0 when
	// it depends on what is unknown (Shape.D = 0). An error says why the
	// set cannot be built.
	Count func(c CountContext) (int, error)
	// Grows says how the count grows with the parameters and what to
	// change when it is too large, for messages; Param is the parameter it
	// grows with ("": the block's size parameter).
	Grows string
	Param string
	// Points marks inducing points: their inputs come from one draw for
	// all the point blocks of a model (FeatureContext.Points).
	Points bool
	// Build makes the set for a fit.
	Build func(c *FeatureContext) (Built, error)
	// FixedKuf reports whether Build will return a fixed Kuf (Built.Fixed)
	// for these parameters (nil: never), so a plan can cost the collapsed
	// bound's steps at O(M³) after an O(NM²) precompute.
	FixedKuf func(p Params) bool
}

// alwaysFixed is FixedKuf of the features whose Φ(x) depends on no
// trainable parameter.
func alwaysFixed(Params) bool { return true }

// CountContext is what FeatureBuilder.Count knows.
type CountContext struct {
	Params  Params
	Request int // the block's size parameter (num_inducing, num_orthogonal; 0: none)
	Shape   Shape
	// Kernel builds the model's kernel on Shape.D inputs (declared in a
	// scratch set), for counts that depend on it.
	Kernel func() (kernels.Kernel, *param.Set, error)
}

// FeatureContext is what FeatureBuilder.Build builds from.
type FeatureContext struct {
	Params  Params
	Request int
	// Kernel is the model's kernel, declared in Set under KernelPrefix
	// (with the likelihood) at its initial values and trainable flags.
	Kernel kernels.Kernel
	Set    *param.Set
	Train  gp.Data
	Block  Block
	// RNG is the block's own random stream (its blockDecl.stream), and
	// Stream any other stream of the fit's seed.
	RNG    *rand.Rand
	Stream func(k uint64) *rand.Rand
	// Points returns this block's share of the model's one draw of
	// inducing inputs (for builders with Points set).
	Points func() (*mat.Dense, error)
}

// bound returns the kernel bound at its initial values.
func (c *FeatureContext) bound() kernels.Bound {
	return c.Kernel.Bind(c.Set.Bind(ad.NewTape()), KernelPrefix)
}

// zonal returns the kernel bound at its initial values as a zonal kernel.
func (c *FeatureContext) zonal(what string) (kernels.ZonalBound, error) {
	kb, ok := c.bound().(kernels.ZonalBound)
	if !ok {
		return nil, fmt.Errorf("%s features need a zonal kernel, not %s", what, c.Kernel.Name())
	}
	return kb, nil
}

// Built is a built feature set.
type Built struct {
	Feature features.Feature
	// Fixed is Kuf = Φ(x) when it depends on no trainable parameter: the
	// collapsed bound then precomputes ΦΦᵀ, Φy once, and the ELBO on the
	// whole training set evaluates Φ(X) once. nil: Kuf moves with the
	// parameters.
	Fixed inference.FeatureMap
	// Declared, when set, runs after the feature is declared under prefix
	// (to set which of its parameters train).
	Declared func(s *param.Set, prefix string)
	// Extra are metrics the set reports (e.g. relu_rkhs_divergent).
	Extra map[string]float64
}

var (
	featureMu       sync.RWMutex
	featureBuilders = map[string]FeatureBuilder{}
)

// RegisterFeature adds a feature builder. It panics on a duplicate name or
// missing functions (programming errors found at start-up).
func RegisterFeature(b FeatureBuilder) {
	featureMu.Lock()
	defer featureMu.Unlock()
	if b.Name == "" || b.Count == nil || b.Build == nil {
		panic(fmt.Sprintf("methods: incomplete feature builder %q", b.Name))
	}
	if _, dup := featureBuilders[b.Name]; dup {
		panic("methods: feature builder " + b.Name + " registered twice")
	}
	featureBuilders[b.Name] = b
}

// FeatureNames returns the registered feature builders' names, sorted.
func FeatureNames() []string {
	featureMu.RLock()
	defer featureMu.RUnlock()
	out := make([]string, 0, len(featureBuilders))
	for n := range featureBuilders {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Feature returns the builder registered under name.
func Feature(name string) (FeatureBuilder, error) {
	featureMu.RLock()
	b, ok := featureBuilders[name]
	featureMu.RUnlock()
	if !ok {
		names := FeatureNames()
		return FeatureBuilder{}, fmt.Errorf("unknown feature %q%s; registered: %s", name, suggest.Hint(name, names), strings.Join(names, ", "))
	}
	return b, nil
}

// The feature types of gp/features, registered by name.
func init() {
	RegisterFeature(FeatureBuilder{Name: "points", Points: true,
		Grows: "num_inducing",
		Count: pointsCount,
		Build: func(c *FeatureContext) (Built, error) {
			z, err := c.Points()
			if err != nil {
				return Built{}, err
			}
			f := features.NewInducingPoints(z)
			return Built{Feature: f, Declared: func(s *param.Set, prefix string) {
				s.SetTrainable(c.Params.Bool("train_inducing"), prefix+"z")
			}}, nil
		}})
	RegisterFeature(FeatureBuilder{Name: "activation",
		Grows: "the block's size parameter",
		Count: func(c CountContext) (int, error) {
			if c.Params.String("directions_init") == "data" && c.Shape.N > 0 && c.Request > c.Shape.N {
				return 0, fmt.Errorf("%d directions exceed the at most %d training points that directions_init = data draws from; use directions_init = random or fewer units", c.Request, c.Shape.N)
			}
			return c.Request, nil
		},
		Build: buildActivation})
	RegisterFeature(FeatureBuilder{Name: "harmonics", FixedKuf: func(p Params) bool { return !p.Bool("train_weights") },
		Grows: "Σ_ℓ≤max_level N(d, ℓ) on the sphere of the D inputs and the bias columns: lower max_level", Param: "max_level",
		Count: func(c CountContext) (int, error) {
			if c.Shape.D == 0 {
				return 0, nil
			}
			k, s, err := c.Kernel()
			if err != nil {
				return 0, err
			}
			kb, ok := k.Bind(s.Bind(ad.NewTape()), KernelPrefix).(kernels.ZonalBound)
			if !ok {
				return 0, fmt.Errorf("harmonics features need a zonal kernel, not %s", k.Name())
			}
			return features.SphericalHarmonicsCount(kb.SphereDim(), c.Params.Int("max_level"), kb.Parity())
		},
		Build: buildHarmonics})
	RegisterFeature(FeatureBuilder{Name: "vff", FixedKuf: alwaysFixed,
		Grows: "2·frequencies − 1 per dimension, to the power D with structure = \"kronecker\" (unless mask = true): use structure = \"additive\", mask = true or fewer frequencies", Param: "frequencies",
		Count: func(c CountContext) (int, error) {
			if c.Shape.D == 0 {
				return 0, nil
			}
			return features.VFFCount(c.Params.Int("frequencies"), c.Shape.D, intervalStructure(c.Params), c.Params.Bool("mask"))
		},
		Build: func(c *FeatureContext) (Built, error) {
			return buildInterval(c, c.Kernel, func(k kernels.Kernel, ivs []features.Interval, s features.Structure) (*features.IntervalFeature, error) {
				return features.NewVFF(k, ivs, c.Params.Int("frequencies"), s, c.Params.Bool("mask"))
			})
		}})
	RegisterFeature(FeatureBuilder{Name: "bspline", FixedKuf: alwaysFixed,
		Grows: "bases per dimension, to the power D with structure = \"kronecker\": use structure = \"additive\" or fewer bases", Param: "bases",
		Count: func(c CountContext) (int, error) {
			if c.Shape.D == 0 {
				return 0, nil
			}
			return features.BSplineCount(c.Params.Int("bases"), c.Shape.D, intervalStructure(c.Params))
		},
		Build: func(c *FeatureContext) (Built, error) {
			return buildInterval(c, c.Kernel, func(k kernels.Kernel, ivs []features.Interval, s features.Structure) (*features.IntervalFeature, error) {
				return features.NewBSplines(k, ivs, c.Params.Int("bases"), s)
			})
		}})
	RegisterFeature(FeatureBuilder{Name: "vff+periodic",
		Grows: "2·frequencies − 1 Fourier features plus periodic_inducing points", Param: "frequencies",
		Count: func(c CountContext) (int, error) {
			if c.Shape.D > 1 {
				return 0, fmt.Errorf("beta = hybrid is the 1-D basis of App. C; inputs have %d dimensions (use beta = vff)", c.Shape.D)
			}
			r := c.Params.Int("periodic_inducing")
			if c.Shape.N > 0 && r > c.Shape.N {
				return 0, paramErr("periodic_inducing", fmt.Errorf("%d inducing points exceed the at most %d training inputs", r, c.Shape.N))
			}
			m, err := features.VFFCount(c.Params.Int("frequencies"), 1, intervalStructure(c.Params), c.Params.Bool("mask"))
			return m + r, err
		},
		Build: buildVFFPeriodic})
	RegisterFeature(FeatureBuilder{Name: "iff", FixedKuf: alwaysFixed,
		Grows: "2^D × the grid of freqs_per_dim^D frequencies (inside the sphere with mask = true): use fewer freqs_per_dim", Param: "freqs_per_dim",
		Count: func(c CountContext) (int, error) {
			if c.Shape.D == 0 {
				return 0, nil
			}
			return features.IFFCount(iffPerDim(c.Params, c.Shape.D), c.Params.Bool("mask"))
		},
		Build: buildIFF})
	RegisterFeature(FeatureBuilder{Name: "vof-trig",
		Grows: "num_features",
		Count: func(c CountContext) (int, error) {
			if m := c.Params.Int("num_features"); m%2 == 0 {
				return 0, paramErr("num_features", fmt.Errorf("must be odd (M = 2J+1: a constant, J cosines and J sines), got %d", m))
			}
			return c.Params.Int("num_features"), nil
		},
		Build: buildTrigVOF})
	RegisterFeature(FeatureBuilder{Name: "vof-hermite",
		Grows: "num_features",
		Count: func(c CountContext) (int, error) { return c.Params.Int("num_features"), nil },
		Build: buildHermiteVOF})
}

// pointsCount is the block's request, or the rows of z_file when the
// inputs come from a file, which must then equal num_inducing. A single
// point block larger than the training set is capped by the model
// (sparseNeeds), so it is not an error here.
func pointsCount(c CountContext) (int, error) {
	if c.Params.String("z_file") != "" && c.Params.String("inducing_init") != "file" {
		return 0, paramErr("z_file", fmt.Errorf("z_file is given but inducing_init = %q; set inducing_init = \"file\" to use it", c.Params.String("inducing_init")))
	}
	if c.Params.String("inducing_init") != "file" {
		return c.Request, nil
	}
	path := c.Params.String("z_file")
	if path == "" {
		return 0, paramErr("inducing_init", fmt.Errorf("inducing_init = file needs z_file"))
	}
	z, err := inducing.FromCSV(path, c.Shape.D)
	if err != nil {
		return 0, paramErr("z_file", err)
	}
	if rows, _ := z.Dims(); rows != c.Request {
		return 0, paramErr("z_file", fmt.Errorf("%s has %d rows but num_inducing = %d; with inducing_init = file M is the file's row count: set num_inducing = %d", path, rows, c.Request, rows))
	}
	return c.Request, nil
}

// buildActivation draws the units' directions (directions_init) and
// builds the activation features of the zonal kernel.
func buildActivation(c *FeatureContext) (Built, error) {
	kb, err := c.zonal("activation")
	if err != nil {
		return Built{}, err
	}
	dirs, err := initialDirections(c.Params.String("directions_init"), c.Request, kb, c.Train, c.RNG)
	if err != nil {
		return Built{}, fmt.Errorf("directions: %w", err)
	}
	f, err := features.NewActivation(c.Params.String("activation"), dirs, c.Params.Int("activation_levels"))
	if err != nil {
		return Built{}, err
	}
	if err := f.CheckKernel(kb); err != nil {
		return Built{}, err
	}
	b := Built{Feature: f, Declared: func(s *param.Set, prefix string) {
		s.SetTrainable(c.Params.Bool("train_directions"), prefix+"directions")
	}}
	if f.Warning() != "" {
		b.Extra = map[string]float64{"relu_rkhs_divergent": 1}
	}
	return b, nil
}

// initialDirections returns mm directions in the augmented space of kb:
// the augmented inputs x̃ of mm random training points (init "data"), or
// N(0, I) draws ("random").
func initialDirections(init string, mm int, kb kernels.ZonalBound, train gp.Data, rng *rand.Rand) (*mat.Dense, error) {
	d := kb.SphereDim()
	if init == "random" {
		z := mat.NewDense(mm, d, nil)
		for i := range z.RawMatrix().Data {
			z.RawMatrix().Data[i] = rng.NormFloat64()
		}
		return z, nil
	}
	if mm > train.N() {
		return nil, fmt.Errorf("%d directions exceed the %d training points that directions_init = data draws from; use directions_init = random", mm, train.N())
	}
	idx, err := inducing.RandomIndices(train.X, mm, rng)
	if err != nil {
		return nil, err
	}
	return kb.AugmentValue(nil, train.Subset(idx).X), nil
}

// zonalAugmentation are the kernel parameters a zonal feature's Kuf depends
// on (through x̂ and ρ).
var zonalAugmentation = []string{KernelPrefix + "weight_variances", KernelPrefix + "bias_variance"}

// buildHarmonics builds the spherical harmonics of the complete levels
// 0…max_level whose kernel coefficient does not vanish; Kuf is fixed when
// the kernel's weight and bias variances are.
func buildHarmonics(c *FeatureContext) (Built, error) {
	kb, err := c.zonal("harmonics")
	if err != nil {
		return Built{}, err
	}
	f, err := features.NewSphericalHarmonicsFor(kb, c.Params.Int("max_level"))
	if err != nil {
		return Built{}, err
	}
	b := Built{Feature: f, Extra: map[string]float64{"sphere_dim": float64(kb.SphereDim())}}
	moves := false
	for _, n := range zonalAugmentation {
		moves = moves || (c.Set.Has(n) && c.Set.Trainable(n))
	}
	if !moves {
		b.Fixed = func(dst, x *mat.Dense) (*mat.Dense, error) { return f.Phi(dst, kb, x) }
	}
	return b, nil
}

// intervalStructure is the structure parameter of the interval features.
func intervalStructure(p Params) features.Structure {
	if p.String("structure") == "additive" {
		return features.Additive
	}
	return features.Kronecker
}

// intervals returns the box from the explicit ends or the padded data range.
func intervals(p Params, x *mat.Dense) ([]features.Interval, error) {
	ivs, err := features.PaddedIntervals(x, p.Float("interval_margin"))
	if err != nil {
		return nil, err
	}
	d := len(ivs)
	for _, end := range []string{"interval_lower", "interval_upper"} {
		v := p.Floats(end)
		if len(v) == 0 {
			continue
		}
		if len(v) != 1 && len(v) != d {
			return nil, paramErr(end, fmt.Errorf("%d values for %d input dimensions; give 1 or %d", len(v), d, d))
		}
		for i := range ivs {
			e := v[0]
			if len(v) == d {
				e = v[i]
			}
			if end == "interval_lower" {
				ivs[i].A = e
			} else {
				ivs[i].B = e
			}
		}
	}
	return ivs, nil
}

// buildInterval builds an interval feature set on the box of the training
// inputs for the kernel k; the training inputs must lie in the box, where
// Kuf = Φ(x) is fixed.
func buildInterval(c *FeatureContext, k kernels.Kernel, build func(kernels.Kernel, []features.Interval, features.Structure) (*features.IntervalFeature, error)) (Built, error) {
	ivs, err := intervals(c.Params, c.Train.X)
	if err != nil {
		return Built{}, err
	}
	f, err := build(k, ivs, intervalStructure(c.Params))
	if err != nil {
		return Built{}, err
	}
	if err := f.CheckInputs(c.Train.X); err != nil {
		return Built{}, fmt.Errorf("training inputs: %w", err)
	}
	return Built{Feature: f, Fixed: inference.Allocating(f.Phi)}, nil
}

// buildVFFPeriodic is the hybrid β of Azzimonti et al. (App. C) for the
// kernel k = k_S + k_P (intervalKernel with beta = hybrid): VFF features of
// the Matérn part k_S and periodic_inducing inducing points of the periodic
// part k_P (k-means, stream 3), for which no Fourier features exist; Kuu =
// blockdiag(Kφφ(k_S), k_P(R, R)) and Kuf = [φ(x); k_P(R, x)].
func buildVFFPeriodic(c *FeatureContext) (Built, error) {
	sum, ok := c.Kernel.(*kernels.Combination)
	if !ok || len(sum.Parts()) != 2 {
		return Built{}, fmt.Errorf("vff+periodic features need the kernel k_S + k_P, not %s", c.Kernel.Name())
	}
	vff, err := buildInterval(c, sum.Parts()[0], func(k kernels.Kernel, ivs []features.Interval, s features.Structure) (*features.IntervalFeature, error) {
		return features.NewVFF(k, ivs, c.Params.Int("frequencies"), s, c.Params.Bool("mask"))
	})
	if err != nil {
		return Built{}, err
	}
	n, _ := c.Train.X.Dims()
	r := c.Params.Int("periodic_inducing")
	if r > n {
		return Built{}, paramErr("periodic_inducing", fmt.Errorf("must be in [1, %d], got %d", n, r))
	}
	z, err := kmeansZ(c.Train.X, r, c.Stream(3))
	if err != nil {
		return Built{}, fmt.Errorf("periodic inducing inputs: %w", err)
	}
	f, err := features.NewComponents(vff.Feature, &features.InducingPoints{Z: z, Fixed: !c.Params.Bool("train_inducing")})
	if err != nil {
		return Built{}, err
	}
	return Built{Feature: f}, nil
}

// iffPerDim is freqs_per_dim in each of d dimensions.
func iffPerDim(p Params, d int) []int {
	out := make([]int, d)
	for i := range out {
		out[i] = p.Int("freqs_per_dim")
	}
	return out
}

// buildIFF builds the integrated Fourier features with the spacing eps
// (or eps_factor over the data's width) for a kernel with a spectral
// density.
func buildIFF(c *FeatureContext) (Built, error) {
	x := c.Train.X
	_, d := x.Dims()
	eps, err := iffEpsilon(c.Params, x)
	if err != nil {
		return Built{}, err
	}
	f, err := features.NewIFF(iffPerDim(c.Params, d), eps, c.Params.Bool("mask"))
	if err != nil {
		return Built{}, err
	}
	if err := f.CheckKernel(c.Kernel); err != nil {
		return Built{}, err
	}
	return Built{Feature: f, Fixed: inference.Allocating(f.Phi)}, nil
}

func iffEpsilon(p Params, x *mat.Dense) ([]float64, error) {
	_, d := x.Dims()
	given := p.Floats("eps")
	switch len(given) {
	case 0:
		return features.IFFEpsilon(x, p.Float("eps_factor"))
	case 1:
		eps := make([]float64, d)
		for i := range eps {
			eps[i] = given[0]
		}
		return eps, nil
	case d:
		return given, nil
	}
	return nil, paramErr("eps", fmt.Errorf("%d values for %d input dimensions; give 1 or %d", len(given), d, d))
}
