-- claim 1 (reproduction): declarative: SGPR on concrete
SELECT (SELECT AVG(v) FROM (SELECT m.value AS v FROM runs r JOIN metrics m ON m.run_id = r.id AND m.name = 'rmse' WHERE r.status = 'done' AND r.dataset IN ('concrete') AND r.grid IN ('uci', 'demo/uci') AND r.method IN ('sgpr')));

-- claim 1 is inconclusive: 1 of the 3 runs it reads did not converge (x_converged = 0). Its runs:
WITH claim_runs(id) AS (SELECT r.id AS id FROM runs r JOIN metrics m ON m.run_id = r.id AND m.name = 'rmse' WHERE r.status = 'done' AND r.dataset IN ('concrete') AND r.grid IN ('uci', 'demo/uci') AND r.method IN ('sgpr')) SELECT r.id, c.value, c.run_id IS NOT NULL FROM runs r LEFT JOIN metrics c ON c.run_id = r.id AND c.name = 'x_converged' WHERE r.status = 'done' AND r.id IN (SELECT id FROM claim_runs) ORDER BY r.id;

-- claim 2 (reproduction): declarative ratio on energy
SELECT (CAST((SELECT AVG(v) FROM (SELECT m.value AS v FROM runs r JOIN metrics m ON m.run_id = r.id AND m.name = 'rmse' WHERE r.status = 'done' AND r.dataset IN ('energy') AND r.grid IN ('uci', 'demo/uci') AND r.method IN ('svgp'))) AS REAL) / (SELECT AVG(v) FROM (SELECT m.value AS v FROM runs r JOIN metrics m ON m.run_id = r.id AND m.name = 'rmse' WHERE r.status = 'done' AND r.dataset IN ('energy') AND r.grid IN ('uci', 'demo/uci') AND r.method IN ('sgpr'))));

-- claim 3 (reproduction): raw, runs_where
SELECT AVG(value) FROM run_metrics WHERE dataset = 'concrete' AND metric = 'rmse';

-- claim 3 is inconclusive: 1 of the 9 runs it reads did not converge (x_converged = 0). Its runs:
WITH claim_runs(id) AS (SELECT r.id AS id FROM runs r WHERE r.status = 'done' AND r.dataset IN ('concrete') AND r.grid IN ('uci', 'demo/uci')) SELECT r.id, c.value, c.run_id IS NOT NULL FROM runs r LEFT JOIN metrics c ON c.run_id = r.id AND c.name = 'x_converged' WHERE r.status = 'done' AND r.id IN (SELECT id FROM claim_runs) ORDER BY r.id;

-- claim 4 (reproduction): raw, runs_query
SELECT AVG(value) FROM run_metrics WHERE dataset = 'energy' AND metric = 'rmse';

-- claim 5 (reproduction): raw, no runs declared
SELECT AVG(value) FROM run_metrics WHERE dataset = 'concrete' AND metric = 'rmse';

-- claim 6 (sanity): sanity check on fig3
SELECT (SELECT AVG(v) FROM (SELECT m.value AS v FROM runs r JOIN metrics m ON m.run_id = r.id AND m.name = 'elbo' WHERE r.status = 'done' AND r.grid IN ('fig3', 'demo/fig3') AND r.method IN ('vof')));

-- claim 6 is inconclusive: 8 of the 24 runs it reads did not converge (x_converged = 0). Its runs:
WITH claim_runs(id) AS (SELECT r.id AS id FROM runs r JOIN metrics m ON m.run_id = r.id AND m.name = 'elbo' WHERE r.status = 'done' AND r.grid IN ('fig3', 'demo/fig3') AND r.method IN ('vof')) SELECT r.id, c.value, c.run_id IS NOT NULL FROM runs r LEFT JOIN metrics c ON c.run_id = r.id AND c.name = 'x_converged' WHERE r.status = 'done' AND r.id IN (SELECT id FROM claim_runs) ORDER BY r.id;

