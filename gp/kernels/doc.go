// Package kernels provides covariance functions for Gaussian processes:
// stationary kernels (squared exponential, Matérn ½, ³⁄₂, ⁵⁄₂, periodic),
// arc-cosine kernels of orders 0, 1 and 2, zonal kernels on the sphere of
// the bias-augmented inputs (Matérn and SE, spectral or chordal), and sums, products and additive
// combinations of them.
//
// A Kernel declares its hyperparameters in a param.Set under a prefix
// (prefix+"variance", prefix+"lengthscales", …) and, once bound to a tape,
// evaluates covariance matrices as single ad nodes with analytic backward
// passes with respect to the hyperparameters and both inputs, so inducing
// inputs can be optimised. Pairwise squared distances go through one matrix
// product (‖x‖² + ‖z‖² − 2xzᵀ) and large matrices are filled in row chunks
// on all cores. The squared exponential's e^(−r²/2) uses a table-driven
// exponential within 0.51 ulp (math.Exp promises 1), four entries at a time
// with AVX2 on amd64 and one at a time elsewhere, with the same bits
// either way (exp.go).
//
// # Conventions
//
// Stationary kernels are k(x, z) = σ² f(r) with r² = Σ_d (x_d − z_d)²/ℓ_d²:
//
//	se        f = exp(−r²/2)
//	matern12  f = exp(−r)
//	matern32  f = (1 + √3 r) exp(−√3 r)
//	matern52  f = (1 + √5 r + 5r²/3) exp(−√5 r)
//
// The periodic kernel uses GPflow's form (the one the ODVFF paper suggests):
//
//	periodic  k = σ² exp(−½ Σ_d sin²(π(x_d − z_d)/p_d) / ℓ_d²)
//
// which is MacKay's / Rasmussen & Williams' exp(−2 sin²(πτ/p)/ℓ²) with
// ℓ_RW = 2ℓ.
//
// The arc-cosine kernels (Cho & Saul 2009) follow GPflow's ArcCosine, which is
// the parameterisation of the spherical-ODGP and VISH papers: with weight
// variances w (1×1 or 1×D) and bias variance b, the augmented input is
// x̂ = (√w∘x, √b), and
//
//	k(x, z) = σ²/π ‖x̂‖ⁿ ‖ẑ‖ⁿ J_n(θ),  cos θ = x̂ᵀẑ / (‖x̂‖‖ẑ‖),
//	J_0 = π − θ,  J_1 = sin θ + (π − θ) cos θ,
//	J_2 = 3 sin θ cos θ + (π − θ)(1 + 2cos²θ).
//
// This equals 2σ² E[σ_n(wᵀx̂) σ_n(wᵀẑ)] for w ~ N(0, I) and the activation
// σ_n(u) = max(u, 0)ⁿ (step, ReLU, squared ReLU). For order 1, k(x, x) =
// σ²‖x̂‖², the VISH paper's ‖x‖‖x'‖J(θ) with J(0) = 1.
//
// # Zonal kernels
//
// Zonal kernels live on the sphere S^{d−1} of the bias-augmented inputs
// x̃ = (√w∘x, √b[, √b]) ∈ R^d (d = D + 1, or D + 2 with Options.BiasColumns
// = 2, as the VISH authors do for 1-D inputs) and are carried to input
// space by the radius ρ = ‖x̃‖ (vish-spec §1.2):
//
//	k(x, z) = ρ(x) ρ(z) s(x̂ᵀẑ),   x̂ = x̃/ρ,   s(1) = σ².
//
// Two routes give the shape s (parameters variance, lengthscales (one
// value), weight_variances, bias_variance):
//
//	sphere-matern12/32/52, sphere-se  the spectral route of the VISH paper:
//	    λ_ℓ ∝ S(√(ℓ(ℓ+d−2))) with the Euclidean density on R^{d−1} of
//	    lengthscale κ, normalised so that s(1) = σ²; the kernel is the
//	    Mercer series truncated at Options.Truncation levels (default 64).
//	chordal-matern12/32/52, chordal-se  the stationary kernel of the
//	    chordal distance, s(t) = σ² f(√(2−2t)/ℓ), exact; its λ_ℓ come from
//	    Funk–Hecke quadrature (the spherical-ODGP paper's kernels).
//
// The arc-cosine kernels are zonal too, with radial power n. Bound zonal
// kernels implement ZonalBound: the augmentation, the coefficients λ_ℓ
// (differentiable in σ² and the lengthscale) and which levels vanish
// exactly. ZonalSeries evaluates Σ_ℓ c_ℓ N(d,ℓ)/Ω_{d−1} R_ℓ(t) for any
// coefficients (package sphere has the conventions).
//
// # Spectral densities
//
// SE and Matérn bound kernels implement SpectralBound. Densities use
// frequency ξ in cycles per unit length and the convention
//
//	k(τ) = ∫ S(ξ) e^{2πi ξᵀτ} dξ,   S(ξ) = ∫ k(τ) e^{−2πi ξᵀτ} dτ,
//
// so ∫ S = σ² = k(0). This is the IFF paper's convention (with its typo
// corrected). Other conventions in the papers:
//
//   - VOF (unitary, angular ω): s(ω) = (2π)^{−D/2} S(ω/2π).
//   - Non-unitary angular, k(τ) = ∫ p(ω) e^{iωᵀτ} dω (R&W, VISH):
//     p(ω) = (2π)^{−D} S(ω/2π).
//
// In D dimensions with ARD lengthscales (ν the Matérn order):
//
//	SE:      S(ξ) = σ² (2π)^{D/2} Πℓ_d exp(−2π² Σ ℓ_d² ξ_d²)
//	Matérn:  S(ξ) = σ² 2^D π^{D/2} Γ(ν+D/2) / (Γ(ν)(2ν)^{D/2}) Πℓ_d
//	                 · (1 + Σ 4π²ℓ_d²ξ_d²/(2ν))^{−(ν+D/2)}
//
// Density1D(ξ, d) is the density of the one-dimensional kernel τ ↦ k(τ e_d),
// the marginal of S along dimension d: the formula above with D = 1 and ℓ_d.
// For SE, S(ξ) = σ^{2(1−D)} Π_d Density1D(ξ_d, d).
package kernels
