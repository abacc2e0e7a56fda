#!/usr/bin/env python3
"""The GPyTorch side of sgplab's peer benchmark (bench/peerbench, docs/performance.md).

Reads a data directory written by `peerbench gen` (meta.json, x.f64, y.f64,
z<M>.csv: the reference recipe and its inducing inputs), builds GPyTorch's
documented SGPR or SVGP model on it in float64 with the same kernel (SE-ARD,
ScaleKernel(RBFKernel)), zero mean, the same initial hyperparameters and the
same inducing inputs, trains it by one recipe and writes JSON lines to stdout:

  {"kind": "header", ...}                      versions, threads, environment
  {"kind": "iter", "it", "wall", "cpu", "f", "evals"}   one per iteration
  {"kind": "final", "status", "f_full", "hyper", ...}

f is the maximised objective in nats over the whole training set (GPyTorch's
losses are divided by N: they are multiplied back), wall and cpu are seconds
since training started (cpu: this process, every thread).

Recipes (GPyTorch 1.10's examples):
  sgpr adam   examples/02_Scalable_Exact_GPs/SGPR_Regression_CUDA.ipynb:
              InducingPointKernel + ExactMarginalLogLikelihood, Adam lr 0.01
  sgpr lbfgs  the same objective by PyTorch's torch.optim.LBFGS with the strong
              Wolfe line search (PyTorch's documented usage; GPyTorch documents
              no L-BFGS for SGPR)
  svgp ngd    examples/04_Variational_and_Approximate_GPs/Natural_Gradient_Descent.ipynb:
              NaturalVariationalDistribution, gpytorch.optim.NGD lr 0.1 on q(u),
              Adam lr 0.01 on the rest, minibatches
  svgp adam   .../SVGP_Regression_CUDA.ipynb: CholeskyVariationalDistribution,
              Adam lr 0.01 on everything, minibatches

--mode converge stops when sgplab's convergence rule (gp/optim/converge.go,
docs/results.md; reimplemented below, and re-checked by peerbench on the
trace) holds on the objective trace, or at --max-iter / --max-seconds;
--mode step runs --steps iterations without stopping (for seconds per step).

Exit status 3: torch or gpytorch cannot be imported (the bench skips the peer).
"""

import argparse
import json
import math
import os
import sys
import time


def emit(rec):
    sys.stdout.write(json.dumps(rec) + "\n")


class Rule:
    """sgplab's optim.Rule: converged when the least-squares slope b of the
    last w = max(ceil(T/10), min_window) points satisfies
    |b| <= max(tol * max(|mean|, floor), z * se(b))."""

    def __init__(self, tol, floor, min_window=10, z=3.0):
        self.tol, self.floor, self.min_window, self.z = tol, max(floor, 1.0), min_window, z

    def check(self, f):
        t = len(f)
        if self.tol <= 0 or t < 2 * self.min_window:
            return False
        w = max((t + 9) // 10, self.min_window)
        win = f[t - w:]
        if any(not math.isfinite(v) for v in win):
            return False
        n = float(w)
        xm = (n - 1) / 2
        mean = sum(win) / n
        sxy = sxx = 0.0
        for i, v in enumerate(win):
            dx = i - xm
            sxy += dx * (v - mean)
            sxx += dx * dx
        slope = sxy / sxx
        rss = 0.0
        for i, v in enumerate(win):
            e = v - mean - slope * (i - xm)
            rss += e * e
        sd = math.sqrt(rss / (n - 2))
        se = sd * math.sqrt(12 / (n * n * n - n))
        s = max(abs(mean), self.floor)
        return abs(slope) <= max(self.tol * s, self.z * se)


class Stop(Exception):
    pass


class Recorder:
    """Keeps the trace, writes it, and stops the fit when the rule holds or
    a budget is spent."""

    def __init__(self, rule, max_iter, max_seconds):
        self.rule, self.max_iter, self.max_seconds = rule, max_iter, max_seconds
        self.f, self.evals, self.status = [], 0, ""
        self.t0 = self.c0 = None

    def start(self):
        self.t0, self.c0 = time.perf_counter(), time.process_time()

    def record(self, f):
        """Records the objective of the next iteration (0 = initial point)."""
        it = len(self.f)
        self.f.append(f)
        wall, cpu = time.perf_counter() - self.t0, time.process_time() - self.c0
        emit({"kind": "iter", "it": it, "wall": wall, "cpu": cpu, "f": f, "evals": self.evals})
        if not math.isfinite(f):
            self.status = "non-finite objective"
            raise Stop
        if self.rule is not None and self.rule.check(self.f):
            self.status = "converged: stopping rule"
            raise Stop
        if it >= self.max_iter:
            self.status = "iteration budget"
            raise Stop
        if self.max_seconds > 0 and wall >= self.max_seconds:
            self.status = "time budget"
            raise Stop


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True, help="data directory of peerbench gen")
    ap.add_argument("--model", required=True, choices=["sgpr", "svgp"])
    ap.add_argument("--recipe", required=True, choices=["adam", "lbfgs", "ngd"])
    ap.add_argument("--m", type=int, required=True, help="number of inducing inputs (z<M>.csv)")
    ap.add_argument("--batch", type=int, default=1000, help="SVGP minibatch size")
    ap.add_argument("--mode", choices=["step", "converge"], default="converge")
    ap.add_argument("--steps", type=int, default=20, help="iterations of --mode step")
    ap.add_argument("--max-iter", type=int, default=10000)
    ap.add_argument("--max-seconds", type=float, default=0, help="0: no time budget")
    ap.add_argument("--stop-tol", type=float, default=1e-5, help="the rule's tolerance (sgplab's DefaultStopTol)")
    ap.add_argument("--stop-window", type=int, default=10, help="the rule's smallest window (sgplab's recipe's)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    if (a.model, a.recipe) not in {("sgpr", "adam"), ("sgpr", "lbfgs"), ("svgp", "ngd"), ("svgp", "adam")}:
        ap.error(f"no recipe {a.recipe} for {a.model}: sgpr takes adam or lbfgs, svgp ngd or adam")

    try:
        import numpy as np
        import torch
        import gpytorch
        import linear_operator
    except ImportError as e:
        print(f"gpytorch_peer: {e}", file=sys.stderr)
        sys.exit(3)

    torch.set_num_threads(a.threads)
    torch.set_default_dtype(torch.float64)
    torch.manual_seed(a.seed)

    with open(os.path.join(a.data, "meta.json")) as fh:
        md = json.load(fh)
    n, d = md["n"], md["d"]
    x = torch.from_numpy(np.fromfile(os.path.join(a.data, md["x"]), dtype="<f8").reshape(n, d).copy())
    y = torch.from_numpy(np.fromfile(os.path.join(a.data, md["y"]), dtype="<f8").copy())
    zname = md["z"].get(str(a.m))
    if zname is None:
        ap.error(f"{a.data} has no Z for M = {a.m} (has {sorted(md['z'])})")
    z = torch.from_numpy(np.loadtxt(os.path.join(a.data, zname), delimiter=",", ndmin=2))

    emit({"kind": "header", "side": "gpytorch", "gpytorch": version(gpytorch), "linear_operator":
          version(linear_operator), "torch": torch.__version__, "python": sys.version.split()[0],
          "threads": torch.get_num_threads(), "interop_threads": torch.get_num_interop_threads(),
          "blas": blas_rate(torch, a.m),
          "env": {k: os.environ.get(k, "") for k in ("OMP_WAIT_POLICY", "GLIBC_TUNABLES", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OPENBLAS_CORETYPE")}})

    def kernel():
        k = gpytorch.kernels.ScaleKernel(gpytorch.kernels.RBFKernel(ard_num_dims=d))
        k.base_kernel.lengthscale = torch.full((1, d), md["lengthscale"])
        k.outputscale = md["variance"]
        return k

    likelihood = gpytorch.likelihoods.GaussianLikelihood()
    likelihood.noise = md["noise_variance"]
    rule = Rule(a.stop_tol, float(n), a.stop_window) if a.mode == "converge" else None
    max_iter = a.steps if a.mode == "step" else a.max_iter
    rec = Recorder(rule, max_iter, a.max_seconds if a.mode == "converge" else 0)

    if a.model == "sgpr":
        class SGPR(gpytorch.models.ExactGP):
            def __init__(self):
                super().__init__(x, y, likelihood)
                self.mean_module = gpytorch.means.ZeroMean()
                self.base_covar_module = kernel()
                self.covar_module = gpytorch.kernels.InducingPointKernel(
                    self.base_covar_module, inducing_points=z.clone(), likelihood=likelihood)

            def forward(self, xx):
                return gpytorch.distributions.MultivariateNormal(self.mean_module(xx), self.covar_module(xx))

        model = SGPR()
        model.train()
        likelihood.train()
        mll = gpytorch.mlls.ExactMarginalLogLikelihood(likelihood, model)

        def loss():
            return -mll(model(x), y)

        if a.recipe == "adam":
            opt = torch.optim.Adam(model.parameters(), lr=0.01)
            train_first_order(rec, [opt], loss, n)
        else:
            train_lbfgs(rec, model, loss, n, torch)
        f_full = rec.f[-1] if rec.f else float("nan")
        hyper = {"lengthscales": model.base_covar_module.base_kernel.lengthscale.detach().flatten().tolist(),
                 "variance": model.base_covar_module.outputscale.item(), "noise_variance": likelihood.noise.item()}
    else:
        dist = (gpytorch.variational.NaturalVariationalDistribution if a.recipe == "ngd"
                else gpytorch.variational.CholeskyVariationalDistribution)

        class SVGP(gpytorch.models.ApproximateGP):
            def __init__(self):
                strategy = gpytorch.variational.VariationalStrategy(
                    self, z.clone(), dist(z.size(0)), learn_inducing_locations=True)
                super().__init__(strategy)
                self.mean_module = gpytorch.means.ZeroMean()
                self.covar_module = kernel()

            def forward(self, xx):
                return gpytorch.distributions.MultivariateNormal(self.mean_module(xx), self.covar_module(xx))

        model = SVGP()
        model.train()
        likelihood.train()
        mll = gpytorch.mlls.VariationalELBO(likelihood, model, num_data=n)
        loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=a.batch, shuffle=True,
                                             generator=torch.Generator().manual_seed(a.seed))
        batches = minibatches(loader)

        def loss():
            xb, yb = next(batches)
            return -mll(model(xb), yb)

        if a.recipe == "ngd":
            opts = [gpytorch.optim.NGD(model.variational_parameters(), num_data=n, lr=0.1),
                    torch.optim.Adam([{"params": model.hyperparameters()}, {"params": likelihood.parameters()}], lr=0.01)]
        else:
            opts = [torch.optim.Adam([{"params": model.parameters()}, {"params": likelihood.parameters()}], lr=0.01)]
        train_first_order(rec, opts, loss, n)
        f_full = full_elbo(torch, model, likelihood, x, y)
        hyper = {"lengthscales": model.covar_module.base_kernel.lengthscale.detach().flatten().tolist(),
                 "variance": model.covar_module.outputscale.item(), "noise_variance": likelihood.noise.item()}

    emit({"kind": "final", "status": rec.status, "iters": len(rec.f) - 1, "evals": rec.evals,
          "wall": time.perf_counter() - rec.t0, "cpu": time.process_time() - rec.c0,
          "f_full": f_full, "hyper": hyper})


def version(mod):
    """The module's version; from source without a build it is "Unknown",
    and the directory it was unpacked into names the tag instead."""
    v = getattr(mod, "__version__", "Unknown")
    if v == "Unknown":
        v = "from " + os.path.dirname(os.path.dirname(os.path.abspath(mod.__file__)))
    return v


def minibatches(loader):
    while True:
        yield from loader


def train_first_order(rec, opts, loss, n):
    """One objective and gradient per iteration, then every optimiser steps
    (the documented loops). Iteration i records the objective at the point
    before its step."""
    rec.start()
    try:
        while True:
            for o in opts:
                o.zero_grad()
            out = loss()
            out.backward()
            rec.evals += 1
            for o in opts:
                o.step()
            rec.record(-out.item() * n)
    except Stop:
        pass


def train_lbfgs(rec, model, loss, n, torch):
    """torch.optim.LBFGS with the strong Wolfe line search in one step() call
    (its iterations share one state), with the accepted objective of every
    iteration read from the line search's result."""
    import torch.optim.lbfgs as lb

    opt = torch.optim.LBFGS(model.parameters(), lr=1, max_iter=rec.max_iter, max_eval=100 * rec.max_iter,
                            history_size=100, line_search_fn="strong_wolfe")
    line_search = lb._strong_wolfe

    def observed(*args, **kw):
        res = line_search(*args, **kw)
        rec.record(-res[0] * n)  # the accepted point's loss
        return res

    def closure():
        opt.zero_grad()
        out = loss()
        out.backward()
        rec.evals += 1
        if len(rec.f) == 0:
            rec.record(-out.item() * n)  # the initial point
        return out

    lb._strong_wolfe = observed
    rec.start()
    try:
        opt.step(closure)
        rec.status = rec.status or "converged: torch.optim.LBFGS's tolerances"
    except Stop:
        pass
    finally:
        lb._strong_wolfe = line_search


def full_elbo(torch, model, likelihood, x, y, chunk=10000):
    """The ELBO over every training row at the final parameters (no
    gradient), in nats."""
    with torch.no_grad():
        ell = 0.0
        for i in range(0, x.size(0), chunk):
            out = model(x[i:i + chunk])
            ell += likelihood.expected_log_prob(y[i:i + chunk], out).sum().item()
        return ell - model.variational_strategy.kl_divergence().item()


def blas_rate(torch, m, k=10000, reps=5):
    """GFLOP/s of torch's A Aᵀ for an m × k A (the BLAS the peer calls)."""
    a = torch.randn(m, k)
    a @ a.T
    t0 = time.perf_counter()
    for _ in range(reps):
        a @ a.T
    return 2.0 * m * m * k * reps / (time.perf_counter() - t0) / 1e9


if __name__ == "__main__":
    main()
