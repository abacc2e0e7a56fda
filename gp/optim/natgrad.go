package optim

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// NatGradStep takes one natural-gradient ascent step of size gamma on an
// objective L(m, S) of a Gaussian q(u) = N(m, S) (Salimbeni et al. 2018).
//
// With natural parameters θ₁ = S⁻¹m, θ₂ = −½S⁻¹ and expectation parameters
// η₁ = m, η₂ = S + mmᵀ, the natural gradient in θ equals the ordinary
// gradient in η: ∂L/∂η₁ = ∂L/∂m − 2(∂L/∂S)m and ∂L/∂η₂ = ∂L/∂S. The step is
// θ ← θ + γ ∂L/∂η, mapped back to (m, S). For a conjugate (Gaussian
// likelihood) objective, γ = 1 lands on the optimal q in one step.
//
// dLdS must be the symmetric gradient G with dL = tr(G dS); an autodiff
// gradient Ĝ of a function of a full matrix S should be passed as ½(Ĝ + Ĝᵀ).
// It fails when S is not positive definite or when the step leaves the new
// precision S⁻¹ − 2γG indefinite (then γ is too large).
func NatGradStep(m *mat.VecDense, S *mat.SymDense, dLdm *mat.VecDense, dLdS *mat.SymDense, gamma float64) (*mat.VecDense, *mat.SymDense, error) {
	if m == nil || S == nil || dLdm == nil || dLdS == nil {
		return nil, nil, fmt.Errorf("optim: NatGradStep: nil argument")
	}
	n := m.Len()
	if S.SymmetricDim() != n || dLdm.Len() != n || dLdS.SymmetricDim() != n {
		return nil, nil, fmt.Errorf("optim: NatGradStep: m has %d entries but S is %d×%[2]d, dL/dm has %d, dL/dS is %d×%[4]d",
			n, S.SymmetricDim(), dLdm.Len(), dLdS.SymmetricDim())
	}
	if !(gamma > 0) || math.IsInf(gamma, 0) {
		return nil, nil, fmt.Errorf("optim: NatGradStep: step size %g must be positive and finite", gamma)
	}
	var chS mat.Cholesky
	if !chS.Factorize(S) {
		return nil, nil, fmt.Errorf("optim: NatGradStep: S (%d×%d) is not positive definite", n, n)
	}
	// θ₁ + γ(∂L/∂m − 2Gm), with θ₁ = S⁻¹m.
	theta1 := mat.NewVecDense(n, nil)
	if err := chS.SolveVecTo(theta1, m); err != nil {
		return nil, nil, fmt.Errorf("optim: NatGradStep: solving with S: %w", err)
	}
	var gm mat.VecDense
	gm.MulVec(dLdS, m)
	theta1.AddScaledVec(theta1, gamma, dLdm)
	theta1.AddScaledVec(theta1, -2*gamma, &gm)
	// New precision −2θ₂ = S⁻¹ − 2γG.
	var prec mat.SymDense
	if err := chS.InverseTo(&prec); err != nil {
		return nil, nil, fmt.Errorf("optim: NatGradStep: inverting S: %w", err)
	}
	prec.AddSym(&prec, scaledSym(-2*gamma, dLdS))
	var chP mat.Cholesky
	if !chP.Factorize(&prec) {
		return nil, nil, fmt.Errorf("optim: NatGradStep: step %g leaves the precision indefinite; use a smaller step", gamma)
	}
	newS := mat.NewSymDense(n, nil)
	if err := chP.InverseTo(newS); err != nil {
		return nil, nil, fmt.Errorf("optim: NatGradStep: inverting the new precision: %w", err)
	}
	newM := mat.NewVecDense(n, nil)
	if err := chP.SolveVecTo(newM, theta1); err != nil {
		return nil, nil, fmt.Errorf("optim: NatGradStep: solving for the new mean: %w", err)
	}
	return newM, newS, nil
}

func scaledSym(c float64, a *mat.SymDense) *mat.SymDense {
	var out mat.SymDense
	out.ScaleSym(c, a)
	return &out
}
