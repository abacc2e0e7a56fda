// Package sphere provides the harmonic analysis of the unit sphere
// S^{d−1} ⊂ R^d that spherical inducing features rest on: Gegenbauer
// polynomials, the number of spherical harmonics per level, surface areas,
// an orthonormal basis of real spherical harmonics in any dimension d ≥ 2,
// and the Funk–Hecke coefficients of zonal functions.
//
// Conventions (one everywhere). Harmonics are orthonormal for the
// un-normalised surface measure dσ, whose total mass is Ω_{d−1} =
// SurfaceArea(d) = 2π^{d/2}/Γ(d/2). With α = (d−2)/2 and the normalised
// Gegenbauer polynomial R_ℓ(t) = C_ℓ^{(α)}(t)/C_ℓ^{(α)}(1) (Chebyshev T_ℓ
// when d = 2), the addition theorem reads
//
//	Σ_k φ_{ℓ,k}(x) φ_{ℓ,k}(x') = N(d,ℓ)/Ω_{d−1} · R_ℓ(xᵀx'),
//
// and a zonal function s(xᵀx') has the Mercer (Funk–Hecke) expansion
//
//	s(xᵀx') = Σ_ℓ λ_ℓ Σ_k φ_{ℓ,k}(x) φ_{ℓ,k}(x'),
//	λ_ℓ = Ω_{d−2} ∫_0^π s(cos θ) R_ℓ(cos θ) sin^{d−2}θ dθ,
//
// so s(1) = Σ_ℓ λ_ℓ N(d,ℓ)/Ω_{d−1}. The VISH paper's authors use the
// normalised (probability) measure instead; their harmonics are larger by
// √Ω_{d−1} and their coefficients smaller by 1/Ω_{d−1}; the model is the
// same (vish-spec §1.4).
//
// The basis is the explicit recursive construction in hyperspherical
// coordinates (vish-spec §1.6 (B)): a degree-ℓ harmonic in d dimensions is
// a normalised Gegenbauer polynomial in the last coordinate, written as the
// homogeneous polynomial R^j C_j^{(λ)}(y_d/R), times a degree-(ℓ−j)
// harmonic of the first d−1 coordinates, down to cos/sin of the angle in
// the plane of the first two. Every harmonic is a product of such factors
// along a path in a tree, so a chunk of n points is evaluated one
// harmonic at a time as an elementwise product of two length-n rows:
// O(n·M) multiplications for M harmonics, no fundamental systems, no
// Gram–Schmidt, no caches, stable in any dimension and at high degree.
package sphere
