// Package metrics computes test-set scores of probabilistic predictions:
// RMSE, MSE, NLPD, mean test log-likelihood and 95% coverage for
// regression, and accuracy, ROC AUC, NLPD and test log-likelihood for binary
// classification.
//
// Models are usually trained on standardised targets. A Scale maps a
// prediction made in standardised units back to the original units
// (mean·Scale + Shift, variance·Scale²), so that scores are reported on the
// scale a paper uses; the NLPD then gains log Scale per point, the
// log-Jacobian of the change of units.
//
// Metric names are stable keys ("rmse", "nlpd", "auc", …): they are what the
// results database stores.
package metrics
