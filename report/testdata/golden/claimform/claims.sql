-- claim 1 (reproduction): mean
SELECT (SELECT AVG(v) FROM (SELECT m.value AS v FROM runs r JOIN metrics m ON m.run_id = r.id AND m.name = 'rmse' WHERE r.status = 'done' AND r.dataset IN ('concrete') AND r.grid IN ('uci', 'demo/uci') AND r.method IN ('sgpr')));

-- claim 2 (reproduction): ratio of medians
SELECT (CAST((SELECT AVG(v) FROM (SELECT v, ROW_NUMBER() OVER (ORDER BY v) AS k, COUNT(*) OVER () AS n FROM (SELECT m.value AS v FROM runs r JOIN metrics m ON m.run_id = r.id AND m.name = 'rmse' WHERE r.status = 'done' AND r.dataset IN ('energy') AND r.grid IN ('uci', 'demo/uci') AND r.method IN ('svgp'))) WHERE k IN ((n + 1) / 2, (n + 2) / 2)) AS REAL) / (SELECT AVG(v) FROM (SELECT v, ROW_NUMBER() OVER (ORDER BY v) AS k, COUNT(*) OVER () AS n FROM (SELECT m.value AS v FROM runs r JOIN metrics m ON m.run_id = r.id AND m.name = 'rmse' WHERE r.status = 'done' AND r.dataset IN ('energy') AND r.grid IN ('uci', 'demo/uci') AND r.method IN ('sgpr'))) WHERE k IN ((n + 1) / 2, (n + 2) / 2)));

-- claim 3 (reproduction): difference, parameter filters, per-side metric
SELECT ((SELECT AVG(v) FROM (SELECT m.value AS v FROM runs r JOIN metrics m ON m.run_id = r.id AND m.name = 'elbo' WHERE r.status = 'done' AND r.dataset IN ('gp-sample') AND r.grid IN ('fig3', 'demo/fig3') AND r.method IN ('vof') AND (EXISTS (SELECT 1 FROM run_params p WHERE p.run_id = r.id AND p.name = 'num_inducing' AND (ABS(p.num - 80) <= 8e-08))))) - (SELECT MAX(v) FROM (SELECT m.value AS v FROM runs r JOIN metrics m ON m.run_id = r.id AND m.name = 'elbo' WHERE r.status = 'done' AND r.dataset IN ('gp-sample') AND r.grid IN ('fig3', 'demo/fig3') AND r.method IN ('vof') AND (EXISTS (SELECT 1 FROM run_params p WHERE p.run_id = r.id AND p.name = 'num_inducing' AND (ABS(p.num - 10) <= 1e-08 OR ABS(p.num - 20) <= 2e-08))))));

-- claim 4 (sanity): grid stored as experiment/grid, float parameter
SELECT (SELECT MIN(v) FROM (SELECT m.value AS v FROM runs r JOIN metrics m ON m.run_id = r.id AND m.name = 'rmse' WHERE r.status = 'done' AND r.grid IN ('sweep', 'demo/sweep') AND (EXISTS (SELECT 1 FROM run_params p WHERE p.run_id = r.id AND p.name = 'lengthscale' AND (ABS(p.num - 0.3) <= 1e-09))) AND (EXISTS (SELECT 1 FROM run_params p WHERE p.run_id = r.id AND p.name = 'num_inducing' AND (ABS(p.num - 64) <= 6.4e-08)))));

-- claim 5 (reproduction): only finished runs count
SELECT (SELECT COUNT(*) FROM (SELECT 1 AS v FROM runs r WHERE r.status = 'done' AND r.dataset IN ('yacht') AND r.grid IN ('uci', 'demo/uci') AND r.method IN ('svgp')));

-- claim 6 (reproduction): per-M means, smallest across M, over two parameter names
SELECT (SELECT MIN(v) FROM (SELECT v FROM (SELECT AVG(v) AS v, grp, MIN(n0) AS n0, MIN(s0) AS s0, MIN(n1) AS n1, MIN(s1) AS s1 FROM (SELECT m.value AS v, CAST(COALESCE(g0.value, '') AS TEXT) || '' || CAST(COALESCE(g1.value, '') AS TEXT) AS grp, g0.num AS n0, COALESCE(g0.value, '') AS s0, g1.num AS n1, COALESCE(g1.value, '') AS s1 FROM runs r JOIN metrics m ON m.run_id = r.id AND m.name = 'elbo' LEFT JOIN run_params g0 ON g0.run_id = r.id AND g0.name = 'num_inducing' LEFT JOIN run_params g1 ON g1.run_id = r.id AND g1.name = 'lengthscale' WHERE r.status = 'done' AND r.dataset IN ('gp-sample') AND r.grid IN ('fig3', 'demo/fig3') AND r.method IN ('vof')) GROUP BY grp) WHERE 1));

-- claim 7 (reproduction): derived metric
WITH derived_x_double_rmse(run_id, value) AS (SELECT run_id, 2 * value FROM metrics WHERE name = 'rmse') SELECT (SELECT AVG(v) FROM (SELECT m.value AS v FROM runs r JOIN derived_x_double_rmse m ON m.run_id = r.id WHERE r.status = 'done' AND r.dataset IN ('concrete') AND r.grid IN ('uci', 'demo/uci') AND r.method IN ('sgpr') AND (r.split = 0 OR r.split = 2)));

