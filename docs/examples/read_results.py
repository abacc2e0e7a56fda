#!/usr/bin/env python3
"""Read an sgplab results database from Python.

Usage: python3 docs/examples/read_results.py out/demo/results.db

Shows, with the standard library's sqlite3 only, the runs, their test
metrics, which fits converged and the fitted hyperparameters; then, when
pandas is installed, the same as DataFrames. The database is opened
read-only. docs/results.md explains the tables; `go test ./cmd/sgplab`
runs this script on a fresh sweep when python3 is on the PATH.
"""
import sqlite3
import sys


def connect(path):
    # mode=ro: reading never changes the file, even while a sweep writes it.
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)


def with_sqlite3(con):
    (version,) = con.execute("PRAGMA user_version").fetchone()
    print(f"schema version {version}")
    if version < 4:
        sys.exit("this database predates the hyperparameters table (schema 4); "
                 "open it once with a newer sgplab (sgplab run) to migrate it")

    counts = dict(con.execute("SELECT status, count(*) FROM runs GROUP BY status"))
    total = sum(counts.values())
    print(f"runs: {total} ({counts.get('done', 0)} done, {counts.get('failed', 0)} failed)")

    # Mean test metrics of the finished runs, per method and dataset.
    rows = con.execute("""
        SELECT r.method, r.dataset, count(*), avg(rm.value), avg(nl.value)
        FROM runs r
        JOIN metrics rm ON rm.run_id = r.id AND rm.name = 'rmse'
        JOIN metrics nl ON nl.run_id = r.id AND nl.name = 'nlpd'
        WHERE r.status = 'done'
        GROUP BY r.method, r.dataset ORDER BY r.method, r.dataset""")
    for method, dataset, n, rmse, nlpd in rows:
        print(f"{method} on {dataset}: {n} runs, mean rmse {rmse:.4g}, mean nlpd {nlpd:.4g}")

    # Convergence: converged is 1, 0, or NULL (None) for a run without training.
    unconverged = con.execute("""
        SELECT run_id, method, dataset, split, iterations, rel_change
        FROM run_convergence WHERE status = 'done' AND converged = 0
        ORDER BY method, dataset, split""").fetchall()
    print(f"unconverged runs: {len(unconverged)}")
    for run_id, method, dataset, split, iters, rel in unconverged:
        rel = "n/a" if rel is None else f"{rel:.3g}"
        print(f"  {run_id} {method} on {dataset} split {split}: {iters:.0f} iterations, relative change per iteration {rel}")
    for (value,) in con.execute("SELECT DISTINCT converged FROM run_convergence WHERE status = 'done'"):
        assert value in (0, 1, None), f"x_converged = {value!r}"

    # Hyperparameters: one row per entry; a vector (ARD lengthscales) is
    # gathered by idx.
    hyper = {}
    for run_id, method, name, idx, value in con.execute("""
            SELECT run_id, method, name, idx, value FROM run_hyperparameters
            ORDER BY run_id, name, idx"""):
        entry = hyper.setdefault((run_id, method), {}).setdefault(name, [])
        assert idx == len(entry), f"{run_id} {name}: index {idx} out of order"
        entry.append(value)
    for (run_id, method), params in hyper.items():
        text = ", ".join(f"{n} = {v[0]!r}" if len(v) == 1 else f"{n} = {v!r}" for n, v in params.items())
        print(f"hyperparameters of {run_id} ({method}): {text}")
    return counts.get("done", 0)


def with_pandas(con, done):
    try:
        import pandas as pd
    except ImportError:
        print("pandas not installed: skipped the DataFrame examples")
        return
    print(f"pandas {pd.__version__}")
    runs = pd.read_sql_query(
        "SELECT id AS run_id, grid, method, dataset, split, seed, status FROM runs", con)
    metrics = pd.read_sql_query("SELECT run_id, name, value FROM metrics", con)
    # One row per run, one column per metric; NULL (NaN in Go) reads as NaN.
    wide = runs.merge(metrics.pivot(index="run_id", columns="name", values="value"),
                      left_on="run_id", right_index=True, how="left")
    done_runs = wide[wide.status == "done"]
    assert len(done_runs) == done, (len(done_runs), done)
    print(f"wide table: {len(done_runs)} done runs x {wide.shape[1]} columns")
    print(done_runs.groupby("method")[["rmse", "nlpd", "x_converged"]].mean().to_string())

    hyper = pd.read_sql_query("SELECT run_id, name, idx, value FROM hyperparameters", con)
    # Vectors as lists, one column per hyperparameter.
    vectors = (hyper.sort_values(["run_id", "name", "idx"])
               .groupby(["run_id", "name"])["value"].agg(list).unstack("name"))
    print(f"hyperparameters: {vectors.shape[0]} runs x {vectors.shape[1]} names")


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    con = connect(argv[1])
    try:
        done = with_sqlite3(con)
        with_pandas(con, done)
    finally:
        con.close()


if __name__ == "__main__":
    main(sys.argv)
