// Package inducing chooses inducing inputs Z from training inputs X:
// k-means (k-means++ seeding, Lloyd iterations), greedy conditional-variance
// selection (partial pivoted Cholesky of K_ff, the approximate k-DPP MAP of
// Burt et al. 2020), a random subset, or a CSV file.
//
// Nothing here forms an N×N matrix: greedy selection keeps the N×M
// Cholesky columns and the N residual variances, in O(NM²) time.
// Randomised choices take an explicit *rand.Rand, so a seed fixes the result.
package inducing
