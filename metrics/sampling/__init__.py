"""Estimating measures from a sample of judgments.

Prediction-powered inference (PPI: automatic labels for the whole pool corrected by a human
sample; the method, its definitions and references are in :mod:`metrics.sampling.ppi`):

- :mod:`metrics.sampling.ppi`: the public entry points (:func:`~metrics.sampling.ppi.estimate_runs`,
  :func:`~metrics.sampling.ppi.by_item`, :class:`~metrics.sampling.ppi.PPIReport`);
- :mod:`metrics.sampling.designs`: which items people judge (uniform, stratified, active) and the
  pilot slice judged first;
- :mod:`metrics.sampling.structure`: :class:`~metrics.sampling.structure.PoolStructure`, the
  runs' ranks of every pool item, built once per run set;
- :mod:`metrics.sampling.forms`: PPI's own forms of P@k, R@k, nDCG@k and AP as functions of
  item-level label functionals (not the registry's measures: see
  :mod:`metrics.measures.registry`), and :mod:`metrics.sampling.gradients`: their per-topic cells
  and per-item gradients;
- :mod:`metrics.sampling.linear`: :class:`~metrics.sampling.linear.LinearStructure`, measures
  linear in the labels of arbitrary items (answer runs' nugget and support scores), estimated
  by the same machinery;
- :mod:`metrics.sampling.calibration`: the calibrated predictor from the pilot;
- :mod:`metrics.sampling.estimator`: the corrected estimate (plug-in or model-assisted per topic)
  and :mod:`metrics.sampling.variance`: its variance (P@k's averaged with the model's), degrees
  of freedom and PPI++ blend.

Stopping rules for judging (:mod:`metrics.sampling.stopping`): when to stop judging a topic.
"""
