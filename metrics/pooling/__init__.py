"""Pooling: which documents of the runs to judge, and in what order.

The conventions every strategy shares are in :mod:`metrics.pooling.strategies` (with the
registry of strategies); :mod:`~metrics.pooling.base` defines a strategy and the pool it builds,
:mod:`~metrics.pooling.static` and :mod:`~metrics.pooling.adaptive` the strategies,
:mod:`~metrics.pooling.state` the adaptive ones' judging state, :mod:`~metrics.pooling.runs` the
runs cut to a depth, :mod:`~metrics.pooling.simulation` judging simulated with the qrels as the
oracle, :mod:`~metrics.pooling.inference` how an existing qrels was pooled, and
:mod:`~metrics.pooling.answers` the segments an answer received or cites.
"""
