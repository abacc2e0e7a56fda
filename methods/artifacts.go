package methods

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp"
	"sgplab/gp/param"
)

// Artifact is an array a model exports after Fit for figures that need more
// than scalar metrics (e.g. an approximate kernel matrix): a Rows×len(Columns)
// table, row-major.
type Artifact struct {
	Name    string
	Columns []string
	Rows    int
	Data    []float64
}

// ArtifactModel is implemented by models that can export named arrays. The
// runner asks for the names a grid lists under `artifacts` that it does not
// produce itself ("predictions", "train").
type ArtifactModel interface {
	// Artifact computes the named array after Fit; test are the run's test
	// inputs. An unknown name is an error listing the names offered.
	Artifact(name string, train, test gp.Data) (Artifact, error)
}

// Artifacts the runner builds from a fit's parameters (FitResult.Fitted)
// for any method that has them.
const (
	// ArtifactZ holds the inducing inputs: one row per point, columns x0,
	// x1, … and set (0, 1, … for the point sets of a method with several,
	// such as ODVGP's β and γ, in declaration order).
	ArtifactZ = "z"
	// ArtifactQ holds q(u) = N(mean, S): one row per inducing variable,
	// columns set, mean and cov0 … cov{M−1} (S, block-diagonal across the
	// sets; NaN for a set with a mean only). It is q in the method's own
	// parameterisation: with whiten = true, q(v) with u = L v, L the
	// Cholesky factor of Kuu.
	ArtifactQ = "q"
)

// FittedArtifact builds ArtifactZ or ArtifactQ from the parameters of a
// fitted model; the error says when the model has none (features that are
// not points; a collapsed bound, whose q(u) is optimal and not stored).
func FittedArtifact(name string, set *param.Set) (Artifact, error) {
	if set == nil {
		return Artifact{}, fmt.Errorf("artifact %q: the method keeps no fitted parameters to export it from", name)
	}
	switch name {
	case ArtifactZ:
		return zArtifact(set)
	case ArtifactQ:
		return qArtifact(set)
	}
	return Artifact{}, fmt.Errorf("artifact %q: FittedArtifact builds %q and %q", name, ArtifactZ, ArtifactQ)
}

// withSuffix lists the parameters of set named suffix or ending in
// "."+suffix (a Group's prefix), in declaration order.
func withSuffix(set *param.Set, suffix string) []string {
	var out []string
	for _, n := range set.Names() {
		if n == suffix || strings.HasSuffix(n, "."+suffix) {
			out = append(out, n)
		}
	}
	return out
}

func zArtifact(set *param.Set) (Artifact, error) {
	names := withSuffix(set, InducingName)
	if len(names) == 0 {
		return Artifact{}, fmt.Errorf("artifact %q: the method has no inducing inputs (its features are not points)", ArtifactZ)
	}
	a := Artifact{Name: ArtifactZ}
	for s, n := range names {
		z := set.Value(n)
		r, d := z.Dims()
		if a.Columns == nil {
			for j := 0; j < d; j++ {
				a.Columns = append(a.Columns, "x"+strconv.Itoa(j))
			}
			a.Columns = append(a.Columns, "set")
		}
		if len(a.Columns) != d+1 {
			return Artifact{}, fmt.Errorf("artifact %q: the point sets have different dimensions", ArtifactZ)
		}
		for i := 0; i < r; i++ {
			a.Data = append(a.Data, z.RawRowView(i)[:d]...)
			a.Data = append(a.Data, float64(s))
		}
		a.Rows += r
	}
	return a, nil
}

func qArtifact(set *param.Set) (Artifact, error) {
	means := withSuffix(set, QMuName)
	if len(means) == 0 {
		return Artifact{}, fmt.Errorf("artifact %q: the method keeps no q(u) (a collapsed bound's q(u) is optimal and not stored)", ArtifactQ)
	}
	type block struct {
		mean []float64
		cov  *mat.Dense // nil: mean only
	}
	var blocks []block
	total := 0
	for _, n := range means {
		prefix := strings.TrimSuffix(n, QMuName)
		mu := set.Value(n)
		m, _ := mu.Dims()
		b := block{mean: mat.Col(nil, 0, mu)}
		switch {
		case set.Has(prefix + QSqrtName):
			l := mat.NewTriDense(m, mat.Lower, nil)
			raw := set.Value(prefix + QSqrtName)
			for i := 0; i < m; i++ {
				for j := 0; j <= i; j++ {
					l.SetTri(i, j, raw.At(i, j))
				}
			}
			b.cov = mat.NewDense(m, m, nil)
			b.cov.Mul(l, l.T())
		case set.Has(prefix + QSqrtDiagName):
			d := set.Value(prefix + QSqrtDiagName)
			b.cov = mat.NewDense(m, m, nil)
			for i := 0; i < m; i++ {
				b.cov.Set(i, i, d.At(i, 0)*d.At(i, 0))
			}
		}
		blocks = append(blocks, b)
		total += m
	}
	a := Artifact{Name: ArtifactQ, Columns: []string{"set", "mean"}, Rows: total}
	for j := 0; j < total; j++ {
		a.Columns = append(a.Columns, "cov"+strconv.Itoa(j))
	}
	off := 0
	for s, b := range blocks {
		m := len(b.mean)
		for i := 0; i < m; i++ {
			row := make([]float64, 2+total)
			row[0], row[1] = float64(s), b.mean[i]
			for j := 0; j < m; j++ {
				v := nanValue
				if b.cov != nil {
					v = b.cov.At(i, j)
				}
				row[2+off+j] = v
			}
			a.Data = append(a.Data, row...)
		}
		off += m
	}
	return a, nil
}

var nanValue = math.NaN()
