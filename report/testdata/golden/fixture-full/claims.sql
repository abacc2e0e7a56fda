-- claim 1 (reproduction): SGPR beats SVGP on concrete
SELECT (SELECT AVG(value) FROM run_metrics WHERE method='svgp' AND dataset='concrete' AND metric='rmse') - (SELECT AVG(value) FROM run_metrics WHERE method='sgpr' AND dataset='concrete' AND metric='rmse');

-- claim 2 (reproduction): VFF is twice as good
SELECT AVG(value) FROM run_metrics WHERE method='vff' AND metric='rmse';

-- claim 3 (reproduction): Nothing ran for boston
SELECT AVG(value) FROM run_metrics WHERE dataset='boston';

