package kernels

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/param"
)

// Kernel declares its hyperparameters in a param.Set under a prefix and
// evaluates on a tape once bound.
type Kernel interface {
	// Name identifies the kernel, e.g. "se", "matern32", "sum(se,periodic)".
	Name() string
	// Declare registers the hyperparameters, e.g. prefix+"variance" and
	// prefix+"lengthscales" (1×D for ARD, 1×1 otherwise).
	Declare(s *param.Set, prefix string) error
	// Bind returns the kernel evaluated with the hyperparameters on b.
	Bind(b *param.Bound, prefix string) Bound
}

// Bound is a kernel whose hyperparameters are nodes on a tape.
type Bound interface {
	// K is the N×M covariance between the rows of x (N×D) and z (M×D).
	K(x, z *ad.Node) *ad.Node
	// Diag is the N×1 vector k(x_n, x_n).
	Diag(x *ad.Node) *ad.Node
}

// SpectralBound is implemented by bound stationary kernels with a spectral
// density (SE and Matérn). See the package documentation for the convention.
type SpectralBound interface {
	Bound
	// Variance is k(0), 1×1.
	Variance() *ad.Node
	// Lengthscales is 1×D (an isotropic lengthscale is repeated).
	Lengthscales() *ad.Node
	// Density is S(ξ) at the rows of omega (M×D, cycles per unit), M×1.
	Density(omega *mat.Dense) *ad.Node
	// Density1D is the spectral density of τ ↦ k(τ e_d) at the entries of
	// omega (M×1), M×1.
	Density1D(omega *mat.Dense, d int) *ad.Node
}

// Matern is implemented by kernels that can be of the Matérn family (the
// stationary ones): MaternOrder is ν (½, 3⁄2 or 5⁄2), with ok false when
// the kernel is not a Matérn kernel. Features whose covariances exist in
// closed form for Matérn kernels only (VFF, B-splines) ask for it instead
// of comparing kernel names.
type Matern interface {
	Kernel
	Dim() int
	MaternOrder() (nu float64, ok bool)
}

// Options configure New. Zero values mean the defaults (GPflow's): unit
// variance, lengthscales, period, weight and bias variances. Fields a kernel
// does not use are ignored, so one Options can configure every component of
// a sum or product; an additive kernel hands lengthscale d (and weight
// variance d) to its d-th component when D values are given.
type Options struct {
	Variance float64
	// Lengthscales holds one value (isotropic, or repeated to D when ARD is
	// set) or D values (ARD).
	Lengthscales []float64
	ARD          bool
	// Period of the periodic kernel (repeated to D when ARD is set).
	Period float64
	// WeightVariances of the arc-cosine kernels: one value, or D values
	// (ARD, also implied by ARD with one value).
	WeightVariances []float64
	// BiasVariance of the arc-cosine and zonal kernels.
	BiasVariance float64
	// BiasColumns of the zonal kernels: how many copies of √b the
	// augmented input x̃ = (√w∘x, √b, …) carries (1 or 2; 0 means 1). The
	// VISH authors append two for 1-D inputs so that d ≥ 3.
	BiasColumns int
	// Truncation is the number of levels of the Mercer series that defines
	// the spectral zonal kernels (sphere-…); 0 means DefaultTruncation.
	Truncation int
}

var baseNames = []string{"se", "matern12", "matern32", "matern52", "periodic", "arccos0", "arccos1", "arccos2"}

// Names returns the names of the base kernels New accepts. New also accepts
// combinations: "sum(a,b,…)", "product(a,b,…)", "additive(a)" (the same 1-D
// kernel a on every dimension) and "additive(a1,…,aD)" (one per dimension).
func Names() []string { return append(append([]string(nil), baseNames...), zonalNames...) }

// New builds the named kernel on dim input dimensions.
func New(name string, dim int, opts Options) (Kernel, error) {
	if dim < 1 {
		return nil, fmt.Errorf("kernels: dimension %d, want ≥ 1", dim)
	}
	name = strings.ToLower(strings.TrimSpace(name))
	if open := strings.IndexByte(name, '('); open >= 0 {
		return newComposite(name, open, dim, opts)
	}
	switch name {
	case "se", "matern12", "matern32", "matern52":
		return newStationary(profile(name), dim, opts)
	case "periodic":
		return newPeriodic(dim, opts)
	case "arccos0", "arccos1", "arccos2":
		return newArcCosine(int(name[6]-'0'), dim, opts)
	}
	for _, z := range zonalNames {
		if name == z {
			return newZonal(name, dim, opts)
		}
	}
	return nil, fmt.Errorf("kernels: unknown kernel %q; valid names are %s, %s, or sum(…), product(…), additive(…) of them",
		name, strings.Join(baseNames, ", "), strings.Join(zonalNames, ", "))
}

func newComposite(name string, open, dim int, opts Options) (Kernel, error) {
	if !strings.HasSuffix(name, ")") {
		return nil, fmt.Errorf("kernels: %q: missing closing parenthesis", name)
	}
	outer := name[:open]
	args, err := splitArgs(name[open+1 : len(name)-1])
	if err != nil {
		return nil, fmt.Errorf("kernels: %q: %w", name, err)
	}
	switch outer {
	case "sum", "product":
		if len(args) < 2 {
			return nil, fmt.Errorf("kernels: %q: %s needs at least two kernels", name, outer)
		}
		ks := make([]Kernel, len(args))
		for i, a := range args {
			if ks[i], err = New(a, dim, opts); err != nil {
				return nil, err
			}
		}
		if outer == "sum" {
			return Sum(ks...)
		}
		return Product(ks...)
	case "additive":
		if len(args) != 1 && len(args) != dim {
			return nil, fmt.Errorf("kernels: %q: additive takes one kernel or %d (one per dimension), got %d", name, dim, len(args))
		}
		ls := opts.Lengthscales
		if len(ls) != 0 && len(ls) != 1 && len(ls) != dim {
			return nil, fmt.Errorf("kernels: %q: %d lengthscales for %d dimensions; give 1 or %d", name, len(ls), dim, dim)
		}
		ks := make([]Kernel, dim)
		for d := range ks {
			o := opts
			o.ARD = false
			if len(ls) == dim {
				o.Lengthscales = []float64{ls[d]}
			}
			if len(o.WeightVariances) == dim {
				o.WeightVariances = []float64{opts.WeightVariances[d]}
			}
			a := args[0]
			if len(args) == dim {
				a = args[d]
			}
			if ks[d], err = New(a, 1, o); err != nil {
				return nil, err
			}
		}
		return Additive(ks...)
	}
	return nil, fmt.Errorf("kernels: %q: unknown combination %q; valid are sum, product, additive", name, outer)
}

// splitArgs splits s at commas outside parentheses.
func splitArgs(s string) ([]string, error) {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
			if depth < 0 {
				return nil, fmt.Errorf("unbalanced parentheses")
			}
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("unbalanced parentheses")
	}
	out = append(out, strings.TrimSpace(s[start:]))
	for _, a := range out {
		if a == "" {
			return nil, fmt.Errorf("empty kernel name")
		}
	}
	return out, nil
}

// Matrix evaluates k(x, z) with the hyperparameters in s, without gradients.
func Matrix(k Kernel, s *param.Set, prefix string, x, z *mat.Dense) *mat.Dense {
	t := ad.NewTape()
	return k.Bind(fixed(s, t), prefix).K(t.Const(x), t.Const(z)).Value()
}

// DiagValues evaluates k(x_n, x_n) with the hyperparameters in s.
func DiagValues(k Kernel, s *param.Set, prefix string, x *mat.Dense) []float64 {
	t := ad.NewTape()
	d := k.Bind(fixed(s, t), prefix).Diag(t.Const(x)).Value()
	return mat.Col(nil, 0, d)
}

// fixed binds a copy of s in which every parameter is a constant, so that
// kernels skip the work they do only for gradients.
func fixed(s *param.Set, t *ad.Tape) *param.Bound {
	c := param.NewSet()
	for _, name := range s.Names() {
		c.MustAdd(name, s.Value(name), param.Identity{})
	}
	c.SetAllTrainable(false)
	return c.Bind(t)
}

// Dim returns the input dimension of a kernel built by this package, or 0
// for other implementations.
func Dim(k Kernel) int {
	if d, ok := k.(interface{ Dim() int }); ok {
		return d.Dim()
	}
	return 0
}

// positive checks an option value, returning def for zero.
func positive(name string, v, def float64) (float64, error) {
	if v == 0 {
		return def, nil
	}
	if !(v > 0) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("kernels: %s must be positive and finite, got %v", name, v)
	}
	return v, nil
}

// perDim resolves a 1-or-D option into the initial value of a 1×1 or 1×D
// parameter.
func perDim(name string, vs []float64, dim int, ard bool) ([]float64, error) {
	if len(vs) == 0 {
		vs = []float64{1}
	}
	switch {
	case len(vs) == 1 && ard:
		v := make([]float64, dim)
		for i := range v {
			v[i] = vs[0]
		}
		vs = v
	case len(vs) == 1 || len(vs) == dim:
		vs = append([]float64(nil), vs...)
	default:
		return nil, fmt.Errorf("kernels: %d %s for %d dimensions; give 1 or %d", len(vs), name, dim, dim)
	}
	for _, v := range vs {
		if !(v > 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("kernels: %s must be positive and finite, got %v", name, v)
		}
	}
	return vs, nil
}

func row(v []float64) *mat.Dense { return mat.NewDense(1, len(v), append([]float64(nil), v...)) }

// checkInputs panics with a clear message unless x and z have dim columns.
func checkInputs(kernel string, dim int, nodes ...*ad.Node) {
	for _, n := range nodes {
		if _, c := n.Dims(); c != dim {
			panic(fmt.Sprintf("kernels: %s: input has %d columns, kernel dimension is %d", kernel, c, dim))
		}
	}
}
