"""Statistics over per-query scores: confidence intervals, paired tests, multiple comparisons,
rank correlations, Tukey's HSD.

Every function takes plain sequences or numpy arrays of per-query values and returns plain Python
floats, so results serialise to JSON without conversion. NaN input values are rejected: a missing
per-query value is a decision for the caller (drop the query or score it 0), not for a statistic.

- :mod:`metrics.stats.intervals`: bootstrap and t intervals of a mean;
- :mod:`metrics.stats.paired`: paired tests, effect size, all-pairs and against-a-baseline
  comparisons;
- :mod:`metrics.stats.multiple`: adjusting a family of p-values (Holm, Bonferroni, BH);
- :mod:`metrics.stats.rank`: Kendall's tau-b and tau_AP between two orderings;
- :mod:`metrics.stats.matrices`: every pair of runs at once (p-value and effect size matrices);
- :mod:`metrics.stats.tukey`: Tukey's HSD and the studentized range distribution.

References
----------
- Efron & Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 13 (percentile interval) and
  sec. 16.4 (bootstrap test of a mean).
- Smucker, Allan & Carterette (2007), "A comparison of statistical significance tests for
  information retrieval evaluation", CIKM (paired t, randomization and bootstrap tests).
- Sakai (2006), "Evaluating evaluation metrics based on the bootstrap", SIGIR.
- Phipson & Smyth (2010), "Permutation p-values should never be zero", Stat. Appl. Genet. Mol.
  Biol. 9(1).
- Holm (1979), "A simple sequentially rejective multiple test procedure", Scand. J. Statist.
- Benjamini & Hochberg (1995), "Controlling the false discovery rate", J. R. Statist. Soc. B.
- Yilmaz, Aslam & Robertson (2008), "A new rank correlation coefficient for information
  retrieval", SIGIR (tau_AP).
"""
