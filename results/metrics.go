package results

import (
	"fmt"
	"sort"
	"strings"
)

// metricDocs is the single source of the stable metric names; doc.go lists
// the same names for godoc readers and a test keeps the two in step.
var metricDocs = map[string]string{
	"elbo":                    "final training objective of a variational method: the evidence lower bound (nats, whole training set)",
	"log_marginal_likelihood": "exact log marginal likelihood of the training data (nats), for exact GP baselines",
	"kl":                      "KL divergence term of the ELBO at the end of training (nats)",
	"rmse":                    "root mean squared error of the predictive mean on the test set, in the original units of y",
	"mse":                     "mean squared error of the predictive mean on the test set, in the original units of y",
	"mae":                     "mean absolute error of the predictive mean on the test set, in the original units of y",
	"nlpd":                    "mean negative log predictive density of the test targets (nats per point); equals -test_loglik",
	"test_loglik":             "mean log predictive density of the test targets (nats per point), y-scaling Jacobian included",
	"coverage95":              "fraction of test targets inside the central 95% predictive interval of y (mean ± 1.96 sd, noise included)",
	"accuracy":                "fraction of test points classified correctly (classification)",
	"error_rate":              "fraction of test points misclassified (classification); equals 1-accuracy",
	"auc":                     "area under the ROC curve of the predictive class probability (classification)",
	"train_seconds":           "wall-clock seconds spent in Fit, excluding data loading and prediction",
	"predict_seconds":         "wall-clock seconds spent predicting the test set",
	"iterations":              "optimiser iterations actually run",
	"iters_per_second":        "iterations divided by train_seconds",
	"num_features":            "number of inducing features actually used (after any truncation, e.g. spherical harmonic levels)",
	"jitter":                  "largest diagonal jitter added to make a covariance positive definite during training",
}

// ExtensionPrefix marks metric names that are not (yet) part of the stable
// set: "x_foo" is accepted and stored but carries no promise of stability.
const ExtensionPrefix = "x_"

// IsMeasured reports whether a metric measures the machine rather than the
// run's result: wall-clock and CPU times (names ending in "_seconds"),
// rates ("_per_second"), the load average ("x_load_avg…") and the peak
// resident memory ("x_peak_rss…"). Two executions of one run differ in
// these and agree bitwise in every other metric.
func IsMeasured(name string) bool {
	return strings.HasSuffix(name, "_seconds") || strings.HasSuffix(name, "_per_second") ||
		strings.HasPrefix(name, ExtensionPrefix+"load_avg") || strings.HasPrefix(name, ExtensionPrefix+"peak_rss")
}

// MetricNames returns the stable metric names with their descriptions.
func MetricNames() map[string]string {
	out := make(map[string]string, len(metricDocs))
	for k, v := range metricDocs {
		out[k] = v
	}
	return out
}

// SortedMetricNames returns the stable metric names in lexical order.
func SortedMetricNames() []string {
	names := make([]string, 0, len(metricDocs))
	for k := range metricDocs {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// CheckMetricName reports whether name is a documented metric or an
// extension metric (ExtensionPrefix followed by lower-case snake case).
func CheckMetricName(name string) error {
	if _, ok := metricDocs[name]; ok {
		return nil
	}
	if rest, ok := strings.CutPrefix(name, ExtensionPrefix); ok && isSnake(rest) {
		return nil
	}
	return fmt.Errorf("results: unknown metric %q: use one of %s, or an extension name %q", name, strings.Join(SortedMetricNames(), ", "), ExtensionPrefix+"name")
}

func isSnake(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}
