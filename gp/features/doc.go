// Package features defines inducing variables for sparse Gaussian processes.
//
// A Feature knows how to compute its own covariances with a kernel: Kuu
// (between the inducing variables) and Kuf (between the inducing variables
// and function values at inputs). Inference schemes in package inference only
// consume those matrices, so inducing points and inter-domain features
// (Fourier, spherical harmonics, activation features, …) share one code path.
//
// Features with structured Kuu describe it in one form, KuuStructure
// (dense, diagonal, precision diagonal, structured root), through
// StructuredKuu (or the DiagonalKuu shorthand); StructureOf reads it and
// inference then avoids a dense Cholesky factorisation. Covariances between
// two feature sets come from Kuv, by dispatch on the pair (CrossCovariance,
// then the fallback "v is inducing points: u.Kuf at them"); wrappers expose
// what they wrap (Wrapper, Unwrap, As). A feature that knows the collapsed
// bound's trace term tr(Kff − Qff) in closed form offers it
// (TraceResidual), and the bound then avoids Σk − tr Qff, a difference of
// two nearly equal sums at large kernel scales. Kuf is differentiable in
// its inputs for every feature type (the constant fast path is for
// constant inputs only) and KufChecked reports bad inputs as errors.
//
// Interval features live on a box Π_d [a_d, b_d] (IntervalFeature): the
// variational Fourier features of Hensman, Durrande and Solin (2017)
// (NewVFF) and the cubic B-spline features of Cunningham et al. (2023)
// (NewBSplines). Both are RKHS inner products of f with a fixed 1-D basis
// per dimension, so Kuf = Φ(x) does not depend on the hyperparameters (the
// collapsed bound precomputes ΦΦᵀ once), and Kuu is the closed-form
// Matérn-½, ³⁄₂, ⁵⁄₂ Gram matrix of the basis: for VFF diagonal plus rank ≤ 2
// per cos/sin block, for B-splines banded. Dimensions combine additively
// (block-diagonal Kuu, f = Σ_d f_d) or as a Kronecker product (Kuu = ⊗_d
// Kuu_d, optionally masked to a sphere of frequencies). Whitener exposes
// that structure as b ↦ L⁻¹b without factorising the dense Kuu. Beyond the
// box Kuf follows the Matérn Markov edge formulas (interval_kuf.go), for
// features evaluated at trainable points; CheckInputs still rejects data
// outside the box, since VFF's harmonics are periodic on [a, b] and the
// prior they represent is wrong within about a lengthscale of the ends:
// leave a margin of a few lengthscales beyond the data.
//
// Spherical features live on the sphere of the bias-augmented inputs of a
// zonal kernel (kernels.ZonalBound): SphericalHarmonics are the VISH
// features of Dutordoir, Durrande & Hensman (2020), an orthonormal basis of
// complete levels of spherical harmonics (package sphere) with a diagonal
// Kuu = diag(1/λ_ℓ) offered as its precision Λ (KuuStructure), Phi for
// the once-only precompute of ΦΦᵀ, and under a truncated spectral kernel
// the trace term as Σρ² times the Mercer levels left out; Activation are the spherical ReLU and
// softplus hidden units of activated SVGP, truncated at L levels in Kuu
// (eq. 7 of Tiao et al. 2023) and in Kuf alike, whose cross-covariance with
// inducing points (Kuv) is the units' forward pass at those points.
//
// A caller can know a set's size before building it (VFFCount,
// BSplineCount, IFFCount, SphericalHarmonicsCount: the constructors'
// counts, from parameters alone, without enumerating a grid that would
// not fit in memory), and which kernels a feature accepts is a property
// the kernel declares (kernels.Matern for the interval features,
// kernels.SpectralBound for IFF, kernels.ZonalBound for the spherical
// features), never a comparison of kernel names.
package features
