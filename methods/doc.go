// Package methods is the registry of sgplab's methods. A method is a
// constructor for a Model together with its documented parameters and
// defaults and what a run of it will need; inference code lives in gp/, a
// method only wires features, kernels, likelihoods and a training recipe
// together.
//
// Methods register themselves in init functions; Lookup finds one by name.
//
// # The contract
//
// A Method is a registry entry: its name, tasks and documented parameters
// (ParamDoc), what it declares for the runner (below), and New, which
// builds an untrained Model from validated Params. The Model is all the
// runner drives:
//
//   - Fit(ctx, train, FitOptions, progress) trains on the training set with
//     the grid's fit settings (iterations, optimiser, step, batch size,
//     tolerances, the seed of every random draw, the stopping Rule) and
//     returns a FitResult: the final objective, iterations, why the
//     optimiser stopped, the trace, the fitted hyperparameters in natural
//     units, the fitted parameter set and method-specific Extra metrics.
//     It reports Progress after every iteration and stops when ctx ends.
//   - Predict(x) returns the predictive marginals (Prediction): latent mean
//     and variance, VarY for regression, p(y = +1) for classification; the
//     runner scores them (gp/metrics).
//
// Optional interfaces add to it: ArtifactModel exports named arrays a grid
// lists under artifacts (kernel matrices, variance terms), ExactLMLModel the
// exact log marginal likelihood at the fitted hyperparameters (the metric
// log_marginal_likelihood, outside the timed fit).
//
// # What a method declares
//
// Beside New, a Method declares what the runner checks before anything
// runs, so that the runner never guesses from parameter names:
//
//   - each parameter's kind, default, choices and valid Range (ParamDoc):
//     Validate checks a value alone (finite, in range, a known choice, with
//     "did you mean" for a typo) and fills in defaults; Check checks
//     combinations (Method.CheckParams);
//   - Exact (one N×N factorisation per step) and MaxDim (the input
//     dimensions it handles);
//   - Needs: for parameters and the data's Shape (N, D, batch), the Plan of
//     a run: its number of inducing variables M, a lower bound of its
//     memory, warnings, or why it cannot run. Method.Plan combines them;
//   - Fit: its default fit Recipe (optimiser, Adam's step, natural
//     gradients on q(u), budget and stopping tolerance) for parameters,
//     task and minibatches; Method.Recipe resolves a grid's settings
//     against it, the sparse methods train by it, the runner stores it.
//     Legacy is the default before the method declared one, so that a run
//     whose recipe changed gets a new id;
//   - KernelName (when the kernel is not the kernel parameter), for the
//     runner's warning that compared methods share no kernel family.
//
// # Recipes
//
// A Recipe (recipe.go) is how a fit trains: L-BFGS or Adam with its step,
// natural gradients on every q(u) beside Adam (variational methods), an
// L-BFGS warm start on a subset of the rows (the default with minibatches
// and natural gradients), an iteration budget and a stopping tolerance that ends the
// fit once the objective's trace stalls (optim.Rule). Method.Fit declares the default
// per FitCase (task, minibatches); Method.Recipe resolves the grid's fit
// settings against it, the result is what the fit runs and what the
// runner stores in the run's spec.
//
// Defaults are chosen to be comparable (sgplab methods, docs/methods.md):
// the SE kernel family from lengthscale 1 wherever a method allows it,
// whitened q(u), recipes that converge on the staged UCI sets. A paper's
// own choices live in its config, set explicitly.
//
// # Sizes
//
// Every sparse run records the M it used as the metric num_features (the
// sum over both sets of a decoupled model, which also records num_base and
// num_orthogonal). num_inducing is M for every sparse family (size.go): a
// feature set with a structure declares a size rule, by which
// num_inducing chooses its frequencies, bases or levels (the count on the
// data's dimension nearest to M; ParamDoc.Chooses); a decoupled method's
// orthogonal set defaults to as many inputs as its base set. A single set of inducing points larger than the
// training set is capped at N (Plan warns when the dataset is known to be
// smaller); two sets larger than N, or a z_file whose rows differ from
// num_inducing, are errors.
//
// # One sparse model
//
// Every sparse method (sgpr, svgp, vff, avff, bspline, iff, vish,
// activated-svgp, odvgp, odvff, solvegp, spherical-orthogonal) is a
// sparseDecl over one orchestration (sparse.go): a kernel builder, the
// feature builder of each of its one or two Blocks (the declared side of
// an inference.Block: the names of a feature set's parameters and its
// q(u)), the objective and the defaults. The model builds the kernel and
// likelihood, builds and declares the feature sets (inducing points of all
// blocks in one draw), declares q, trains (the collapsed bound, from
// ΦΦᵀ, Φy, yᵀy precomputed once when Kuf is fixed, else O(NM²) per step;
// or the ELBO of one block or two by the variational recipe of
// variational.go), conditions, reports the full-data ELBO after
// minibatches, predicts and exports artifacts. VOF keeps its own Monte
// Carlo model (vof.go) but builds its features through the same registry.
//
// Parameters follow one naming rule: the kernel's under KernelPrefix
// ("kernel."), the Gaussian noise as noise_variance, and a block's under
// Block.FeaturePrefix() (inducing.z, inducing.directions,
// beta.inducing.z) and Block.QMu/QSqrt (q_mu, gamma.q_mu).
//
// # Feature sets
//
// Inducing features are built by name from a registry of FeatureBuilders
// (featureset.go, RegisterFeature): each says how many features it makes
// for given parameters and data dimension (Count), how that count grows and
// what to change when it is too large (Grows, for the runner's messages),
// and how to build the feature from the training inputs (Build, with Fixed
// set when Kuf does not train, so the collapsed bound precomputes ΦΦᵀ).
// Any block of any sparse method uses a builder by name: inducing points,
// VFF and A-VFF, B-splines, IFF, VISH's spherical harmonics, activation
// features.
//
// # Adding a new inducing-feature type
//
// A feature type is a gp/features Feature plus one registration here; no
// switch elsewhere names it. The B-spline features (Cunningham et al.
// 2023) show every file a new type touches:
//
//  1. gp/features/bspline.go: the Feature (NewBSplines): its Kuu with the
//     kernel (banded Matérn Gram matrices per dimension), Kuf = Φ(x), the
//     kernels it accepts (asked of the kernel: kernels.Matern, never by
//     name), and in gp/features/count.go BSplineCount, its size from
//     parameters alone (bases^D Kronecker, D·bases additive).
//  2. methods/featureset.go: one RegisterFeature call naming it "bspline",
//     with Count (BSplineCount for the data's D), Grows (how the count
//     grows and what to change when it is too large, for the runner's
//     messages) and Build (the box from the training inputs, NewBSplines,
//     and Fixed = inference.Allocating(Φ), which makes the collapsed bound
//     precompute ΦΦᵀ; a Φ that can write into a given matrix, as the
//     harmonics' does, is a FeatureMap itself and reuses one buffer per
//     core over the whole pass).
//  3. methods/vff.go: the method: intervalDecl("bspline", "bspline") (the
//     interval kernel, one block of the "bspline" builder, the collapsed
//     bound or the ELBO by the objective parameter) and its parameters,
//     with ranges (bases: AtLeast(4)).
//  4. Tests: gp/features TestCountsMatchConstructors (the count is the
//     constructor's M) and a TestPinnedBits case (testdata/pinned, -update).
//
// Another method can then use the builder by name in any block, e.g. as a
// base set of a decoupled model (decoupled.go) or a choice of
// spherical-orthogonal's base and orthogonal parameters.
package methods
