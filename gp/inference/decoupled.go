package inference

import (
	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/kernels"
)

// Orthogonally decoupled models are the two-block case of the block bound
// (blocks.go): a base set u with a full q(u) and an orthogonal set v with
// q(v') on v' = v − Kvu Kuu⁻¹u, prior N(0, S_vv), S_vv = Kvv − Kvu Kuu⁻¹Kuv.
//
//   - SOLVE-GP (Shi et al. 2020): []Block{{u, q(u)}, {v, q(v')}};
//   - ODVGP/ODVFF (Salimbeni et al. 2018; Azzimonti et al.): the mean basis γ
//     is the second block, mean-only, with Weights (a_γ); the first block is
//     β (inducing points, or VFF features with their structured Kuu);
//   - SVGP: one block.
//
// The bound needs the blocks' Kuu (with its structure), Kuf and the
// cross-covariance Kvu = features.Kuv(k, v, u); pairs without one fail with
// a message that lists the defined pairs.

// BlockMarginalTerms returns the terms of the marginals of q(f) at the rows
// of x on the tape (see BlockTerms): at training inputs for objectives built
// on the bound, at test inputs (constant parameters) for the predictive
// decomposition of eq. (12).
func BlockMarginalTerms(k kernels.Bound, blocks []Block, x *ad.Node, opt Options) (BlockTerms, Info, error) {
	if err := opt.validate(); err != nil {
		return BlockTerms{}, Info{}, err
	}
	s, err := newBlockSet(k, blocks, opt)
	if err != nil {
		return BlockTerms{}, Info{}, err
	}
	tm, err := s.terms(x)
	if err != nil {
		return BlockTerms{}, Info{}, err
	}
	return tm, Info{Jitter: s.jitter()}, nil
}

// BlockPrediction holds the terms of q(f_*) per test input: Mean and Var,
// and per block its mean part, its Prior and Cov terms (nil for mean-only
// blocks), as BlockTerms. Var = Kff − Σ Prior + Σ Cov.
type BlockPrediction struct {
	Mean, Var, Kff []float64
	BlockMean      [][]float64
	Prior, Cov     [][]float64
}

// BlockBinder records a block model on t with constant parameters.
type BlockBinder func(t *ad.Tape) (kernels.Bound, []Block, error)

// BlockPredict returns the predictive terms at the rows of x, PredictChunk
// rows at a time (O(M·PredictChunk) memory; the blocks' roots are rebuilt
// per chunk, O(Σ M_b³), which the chunk's O(n Σ M_b²) dominates).
func BlockPredict(x *mat.Dense, bind BlockBinder, opt Options) (*BlockPrediction, error) {
	n, d := x.Dims()
	out := &BlockPrediction{}
	col := func(dst *[]float64, v *ad.Node) { *dst = append(*dst, mat.Col(nil, 0, v.Value())...) }
	for lo := 0; lo < n; lo += PredictChunk {
		hi := min(lo+PredictChunk, n)
		t := ad.NewTape()
		k, blocks, err := bind(t)
		if err != nil {
			return nil, err
		}
		tm, _, err := BlockMarginalTerms(k, blocks, t.Const(mat.DenseCopyOf(x.Slice(lo, hi, 0, d))), opt)
		if err != nil {
			return nil, err
		}
		if out.BlockMean == nil {
			nb := len(blocks)
			out.BlockMean, out.Prior, out.Cov = make([][]float64, nb), make([][]float64, nb), make([][]float64, nb)
		}
		mu, v := tm.Sum()
		col(&out.Mean, mu)
		col(&out.Var, v)
		col(&out.Kff, tm.Kff)
		for b := range tm.Mean {
			col(&out.BlockMean[b], tm.Mean[b])
			if tm.Prior[b] != nil {
				col(&out.Prior[b], tm.Prior[b])
				col(&out.Cov[b], tm.Cov[b])
			}
		}
	}
	return out, nil
}
