-- claim 1 (reproduction): Reproduction (§4.2, Table 3): adding K = 128 orthogonal inducing points beats doubling M — fraction of the (dataset × kernel × activation) cells where the proposed M = 128 + K = 128 has a lower mean test RMSE than activated SVGP with M = 256.
WITH c AS (SELECT REPLACE(REPLACE(REPLACE(r.grid, 'spherical-odgp/', ''), '-m128k128', ''), '-m256', '') cell, r.dataset ds,
  CASE WHEN r.grid LIKE '%-m128k128' THEN 'k' ELSE 'm256' END cfg, AVG(m.value) v
  FROM runs r JOIN metrics m ON m.run_id = r.id AND m.name = 'rmse'
  WHERE r.status = 'done' AND (r.grid LIKE '%uci-relu-%' OR r.grid LIKE '%uci-softplus-%') AND (r.grid LIKE '%-m128k128' OR r.grid LIKE '%-m256') GROUP BY 1, 2, 3)
SELECT AVG(a.v < b.v) FROM c a JOIN c b ON a.cell = b.cell AND a.ds = b.ds WHERE a.cfg = 'k' AND b.cfg = 'm256';

-- claim 2 (reproduction): Reproduction (§4.2, Table 4): the same by test NLPD — fraction of cells where M = 128 + K = 128 has a lower mean NLPD than activated SVGP with M = 256.
WITH c AS (SELECT REPLACE(REPLACE(REPLACE(r.grid, 'spherical-odgp/', ''), '-m128k128', ''), '-m256', '') cell, r.dataset ds,
  CASE WHEN r.grid LIKE '%-m128k128' THEN 'k' ELSE 'm256' END cfg, AVG(m.value) v
  FROM runs r JOIN metrics m ON m.run_id = r.id AND m.name = 'nlpd'
  WHERE r.status = 'done' AND (r.grid LIKE '%uci-relu-%' OR r.grid LIKE '%uci-softplus-%') AND (r.grid LIKE '%-m128k128' OR r.grid LIKE '%-m256') GROUP BY 1, 2, 3)
SELECT AVG(a.v < b.v) FROM c a JOIN c b ON a.cell = b.cell AND a.ds = b.ds WHERE a.cfg = 'k' AND b.cfg = 'm256';

-- claim 3 (reproduction): Reproduction (§4.2, Table 3): orthogonal inducing points improve activated SVGP — fraction of cells where M = 128 + K = 128 has a lower mean test RMSE than activated SVGP with M = 128.
WITH c AS (SELECT REPLACE(REPLACE(REPLACE(r.grid, 'spherical-odgp/', ''), '-m128k128', ''), '-m128', '') cell, r.dataset ds,
  CASE WHEN r.grid LIKE '%-m128k128' THEN 'k' ELSE 'm128' END cfg, AVG(m.value) v
  FROM runs r JOIN metrics m ON m.run_id = r.id AND m.name = 'rmse'
  WHERE r.status = 'done' AND (r.grid LIKE '%uci-relu-%' OR r.grid LIKE '%uci-softplus-%') AND (r.grid LIKE '%-m128k128' OR r.grid LIKE '%-m128') GROUP BY 1, 2, 3)
SELECT AVG(a.v < b.v) FROM c a JOIN c b ON a.cell = b.cell AND a.ds = b.ds WHERE a.cfg = 'k' AND b.cfg = 'm128';

-- claim 4 (reproduction): Reproduction (§4.2 (b), Table 3): with Arccos the proposed method beats every standard-IP counterpart (SVGP 128, SVGP 256, SOLVE-GP 128 + 128) on concrete, kin8nm and yacht — fraction of those datasets (present in the profile) where the better of ReLU/softplus at M = 128 + K = 128 has the lowest mean RMSE.
WITH v AS (SELECT r.grid g, r.dataset ds, AVG(m.value) v FROM runs r JOIN metrics m ON m.run_id = r.id AND m.name = 'rmse'
  WHERE r.status = 'done' AND r.grid LIKE '%uci-%-arccos-%' AND r.dataset IN ('concrete', 'kin8nm', 'yacht') GROUP BY 1, 2),
p AS (SELECT ds, MIN(v) v FROM v WHERE g LIKE '%-m128k128' AND g NOT LIKE '%uci-ip-%' GROUP BY 1),
i AS (SELECT ds, MIN(v) v, COUNT(*) n FROM v WHERE g LIKE '%uci-ip-%' GROUP BY 1)
SELECT AVG(p.v < i.v) FROM p JOIN i ON p.ds = i.ds WHERE i.n = 3;

-- claim 5 (reproduction): Reproduction (§4.2 (c), Table 3): with Matérn-5/2 standard inducing points stay best on yacht — mean RMSE of the better proposed Matérn model (ReLU/softplus, M = 128 + K = 128) divided by that of SVGP (Matérn-5/2, M = 256).
WITH v AS (SELECT r.grid g, AVG(m.value) v FROM runs r JOIN metrics m ON m.run_id = r.id AND m.name = 'rmse'
  WHERE r.status = 'done' AND r.dataset = 'yacht' AND r.grid LIKE '%uci-%-matern52-%' GROUP BY 1)
SELECT (SELECT MIN(v) FROM v WHERE g LIKE '%-m128k128' AND g NOT LIKE '%uci-ip-%') / (SELECT v FROM v WHERE g LIKE '%uci-ip-matern52-m256');

-- claim 6 (reproduction): Reproduction (§3 cost argument): K = M orthogonal inducing points cost about 2× per iteration rather than the 8× of doubling M — seconds per L-BFGS iteration of the proposed M = 128 + K = 128 divided by activated SVGP M = 128 (mean over the cells present).
WITH c AS (SELECT REPLACE(REPLACE(REPLACE(r.grid, 'spherical-odgp/', ''), '-m128k128', ''), '-m128', '') cell, r.dataset ds,
  CASE WHEN r.grid LIKE '%-m128k128' THEN 'k' ELSE 'm128' END cfg, AVG(1.0 / m.value) v
  FROM runs r JOIN metrics m ON m.run_id = r.id AND m.name = 'iters_per_second'
  WHERE r.status = 'done' AND (r.grid LIKE '%uci-relu-%' OR r.grid LIKE '%uci-softplus-%') AND (r.grid LIKE '%-m128k128' OR r.grid LIKE '%-m128') GROUP BY 1, 2, 3)
SELECT AVG(a.v / b.v) FROM c a JOIN c b ON a.cell = b.cell AND a.ds = b.ds WHERE a.cfg = 'k' AND b.cfg = 'm128';

-- claim 7 (diagnostic): Diagnostic (cost): seconds per L-BFGS iteration of activated SVGP M = 256 divided by M = 128 (mean over cells) — the other side of the 2× vs 8× argument on our implementation.
WITH c AS (SELECT REPLACE(REPLACE(REPLACE(r.grid, 'spherical-odgp/', ''), '-m256', ''), '-m128', '') cell, r.dataset ds,
  CASE WHEN r.grid LIKE '%-m256' THEN 'm256' ELSE 'm128' END cfg, AVG(1.0 / m.value) v
  FROM runs r JOIN metrics m ON m.run_id = r.id AND m.name = 'iters_per_second'
  WHERE r.status = 'done' AND (r.grid LIKE '%uci-relu-%' OR r.grid LIKE '%uci-softplus-%') AND (r.grid LIKE '%-m256' OR (r.grid LIKE '%-m128' AND r.grid NOT LIKE '%k128')) GROUP BY 1, 2, 3)
SELECT AVG(a.v / b.v) FROM c a JOIN c b ON a.cell = b.cell AND a.ds = b.ds WHERE a.cfg = 'm256' AND b.cfg = 'm128';

-- claim 8 (sanity): Sanity check (construction, spec §1.13/§6.13): on power the L = 6 truncated units span only 75 dimensions, so activated SVGP at M = 128 and M = 256 give the same fit — max over the four activation cells of |RMSE(M = 256) − RMSE(M = 128)| / RMSE(M = 128) (full profile: power is not in quick).
WITH c AS (SELECT REPLACE(REPLACE(REPLACE(r.grid, 'spherical-odgp/', ''), '-m256', ''), '-m128', '') cell,
  CASE WHEN r.grid LIKE '%-m256' THEN 'm256' ELSE 'm128' END cfg, AVG(m.value) v
  FROM runs r JOIN metrics m ON m.run_id = r.id AND m.name = 'rmse'
  WHERE r.status = 'done' AND r.dataset = 'power' AND (r.grid LIKE '%uci-relu-%' OR r.grid LIKE '%uci-softplus-%') AND (r.grid LIKE '%-m256' OR (r.grid LIKE '%-m128' AND r.grid NOT LIKE '%k128')) GROUP BY 1, 2)
SELECT MAX(ABS(a.v - b.v) / b.v) FROM c a JOIN c b ON a.cell = b.cell WHERE a.cfg = 'm256' AND b.cfg = 'm128';

-- claim 9 (sanity): Sanity check (Fig. 2, parity): number of odd levels 3…35 where the Matérn-5/2 coefficient √λ_ℓ is positive while the ReLU unit's ζ_ℓ is exactly 0 (the spectra mismatch).
WITH c AS (SELECT r.id, l.value lv, q.value qt, m.value v FROM main.runs r JOIN metrics m ON m.run_id = r.id AND m.name = 'x_coefficient'
  JOIN main.run_params_v l ON l.run_id = r.id AND l.param = 'level' JOIN main.run_params_v q ON q.run_id = r.id AND q.param = 'quantity'
  WHERE r.status = 'done' AND r.grid LIKE '%fig2-matern52-relu')
SELECT COUNT(*) FROM c k JOIN c a ON k.lv = a.lv WHERE k.qt = 'kernel' AND a.qt = 'activation' AND k.v > 0 AND a.v = 0 AND CAST(k.lv AS INTEGER) % 2 = 1 AND CAST(k.lv AS INTEGER) >= 3;

-- claim 10 (reproduction): Reproduction (§3, Fig. 2): ReLU coefficients decay at the rate of √λ_ℓ of the Arccos kernel, softplus much faster — ζ_16 / ζ_2 of softplus divided by that of ReLU (Arccos pane; softplus reaches the quadrature floor ≈ 1e−15 near ℓ = 20).
WITH c AS (SELECT r.grid g, CAST(l.value AS INTEGER) lv, m.value v FROM main.runs r JOIN metrics m ON m.run_id = r.id AND m.name = 'x_coefficient'
  JOIN main.run_params_v l ON l.run_id = r.id AND l.param = 'level' JOIN main.run_params_v q ON q.run_id = r.id AND q.param = 'quantity'
  WHERE r.status = 'done' AND r.grid LIKE '%fig2-arccos-%' AND q.value = 'activation')
SELECT ((SELECT v FROM c WHERE g LIKE '%softplus' AND lv = 16) / (SELECT v FROM c WHERE g LIKE '%softplus' AND lv = 2))
     / ((SELECT v FROM c WHERE g LIKE '%relu' AND lv = 16) / (SELECT v FROM c WHERE g LIKE '%relu' AND lv = 2));

-- claim 11 (reproduction): Reproduction (§4.1, Fig. 6): L = 8 → 16 roughly halves throughput — mean iterations per second of activated SVGP at L = 16 divided by L = 8 (over the four panes).
WITH c AS (SELECT REPLACE(REPLACE(REPLACE(r.grid, 'spherical-odgp/', ''), '-L16', ''), '-L8', '') pane,
  CASE WHEN r.grid LIKE '%-L16' THEN 'L16' ELSE 'L8' END cfg, AVG(m.value) v
  FROM runs r JOIN metrics m ON m.run_id = r.id AND m.name = 'iters_per_second'
  WHERE r.status = 'done' AND r.grid LIKE '%snelson-%' AND r.grid NOT LIKE '%K8' GROUP BY 1, 2)
SELECT AVG(a.v / b.v) FROM c a JOIN c b ON a.pane = b.pane WHERE a.cfg = 'L16' AND b.cfg = 'L8';

-- claim 12 (reproduction): Reproduction (§4.1, Fig. 6): K = 8 orthogonal points beat L = 16 on the ELBO in the Matérn-5/2 panes — fraction of the two Matérn panes where the mean ELBO at L = 8, K = 8 exceeds that at L = 16.
WITH c AS (SELECT REPLACE(REPLACE(REPLACE(r.grid, 'spherical-odgp/', ''), '-L16', ''), '-L8K8', '') pane,
  CASE WHEN r.grid LIKE '%-L8K8' THEN 'K' ELSE 'L16' END cfg, AVG(m.value) v
  FROM runs r JOIN metrics m ON m.run_id = r.id AND m.name = 'elbo'
  WHERE r.status = 'done' AND r.grid LIKE '%snelson-matern52-%' AND (r.grid LIKE '%-L16' OR r.grid LIKE '%-L8K8') GROUP BY 1, 2)
SELECT AVG(a.v > b.v) FROM c a JOIN c b ON a.pane = b.pane WHERE a.cfg = 'K' AND b.cfg = 'L16';

-- claim 13 (sanity): Sanity check (Tables 3–4 headers): the training sizes are the paper's N = 927 / 691 / 7372 / 8611 / 277 — fraction of the UCI runs whose training set has the size printed for its dataset.
SELECT AVG(json_extract(r.provenance, '$.NTrain') = CASE r.dataset WHEN 'concrete' THEN 927 WHEN 'energy' THEN 691 WHEN 'kin8nm' THEN 7372 WHEN 'power' THEN 8611 WHEN 'yacht' THEN 277 END)
FROM runs r WHERE r.status = 'done' AND r.grid LIKE '%uci-%';

