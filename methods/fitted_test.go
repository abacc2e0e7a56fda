package methods

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/param"
)

func TestFittedArtifact(t *testing.T) {
	single := param.NewSet()
	single.MustAdd("kernel.variance", mat.NewDense(1, 1, []float64{2}), param.Identity{})
	single.MustAdd(InducingName, mat.NewDense(2, 2, []float64{0, 1, 2, 3}), param.Identity{})
	single.MustAdd(QMuName, mat.NewDense(2, 1, []float64{0.5, -1}), param.Identity{})
	single.MustAdd(QSqrtName, mat.NewDense(2, 2, []float64{1, 99, 2, 3}), param.Identity{}) // upper triangle ignored

	two := param.NewSet() // ODVGP-like: β with a full q, γ with a mean only
	two.MustAdd("beta."+InducingName, mat.NewDense(1, 1, []float64{0.25}), param.Identity{})
	two.MustAdd("gamma."+InducingName, mat.NewDense(2, 1, []float64{-1, 1}), param.Identity{})
	two.MustAdd("beta."+QMuName, mat.NewDense(1, 1, []float64{3}), param.Identity{})
	two.MustAdd("beta."+QSqrtName, mat.NewDense(1, 1, []float64{2}), param.Identity{})
	two.MustAdd("gamma."+QMuName, mat.NewDense(2, 1, []float64{4, 5}), param.Identity{})

	diag := param.NewSet() // VOF's diagonal covariance, no points
	diag.MustAdd(QMuName, mat.NewDense(2, 1, []float64{1, 2}), param.Identity{})
	diag.MustAdd(QSqrtDiagName, mat.NewDense(2, 1, []float64{3, 0.5}), param.Identity{})

	nan := math.NaN()
	for _, tc := range []struct {
		name, artifact string
		set            *param.Set
		cols           string
		rows           int
		data           []float64
		err            string
	}{
		{"z, one set", ArtifactZ, single, "x0,x1,set", 2, []float64{0, 1, 0, 2, 3, 0}, ""},
		{"q, full covariance", ArtifactQ, single, "set,mean,cov0,cov1", 2, []float64{0, 0.5, 1, 2, 0, -1, 2, 13}, ""},
		{"z, two sets", ArtifactZ, two, "x0,set", 3, []float64{0.25, 0, -1, 1, 1, 1}, ""},
		{"q, block-diagonal, mean-only set", ArtifactQ, two, "set,mean,cov0,cov1,cov2", 3,
			[]float64{0, 3, 4, 0, 0, 1, 4, 0, nan, nan, 1, 5, 0, nan, nan}, ""},
		{"q, diagonal", ArtifactQ, diag, "set,mean,cov0,cov1", 2, []float64{0, 1, 9, 0, 0, 2, 0, 0.25}, ""},
		{"z of features that are not points", ArtifactZ, diag, "", 0, nil, "no inducing inputs"},
		{"q of a collapsed bound", ArtifactQ, param.NewSet(), "", 0, nil, "keeps no q(u)"},
		{"no parameters", ArtifactQ, nil, "", 0, nil, "no fitted parameters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := FittedArtifact(tc.artifact, tc.set)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.Name != tc.artifact || strings.Join(a.Columns, ",") != tc.cols || a.Rows != tc.rows || len(a.Data) != len(tc.data) {
				t.Fatalf("%s %v × %d rows, %d values; want %s × %d rows, %d values", a.Name, a.Columns, a.Rows, len(a.Data), tc.cols, tc.rows, len(tc.data))
			}
			for i, v := range tc.data {
				if !(a.Data[i] == v || math.IsNaN(v) && math.IsNaN(a.Data[i])) {
					t.Errorf("value %d = %v, want %v (data %v)", i, a.Data[i], v, a.Data)
					break
				}
			}
		})
	}
}
