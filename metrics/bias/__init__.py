"""Pool bias: how much a qrels built from some runs' pools underrates the runs outside them.

- :mod:`metrics.bias.leaveout`: :class:`~metrics.bias.leaveout.LeaveOut` (the parameters of
  every leave-out analysis, given once) and leave-one-run/group-out
  (:class:`~metrics.bias.leaveout.LeaveOneOut`), with its results in :mod:`metrics.bias.results`;
- :mod:`metrics.bias.judged` (Judged@k), :mod:`metrics.bias.penalty` (the estimated penalty),
  :mod:`metrics.bias.versions` (two qrels versions compared on the topics both can score, by the
  rule of :mod:`metrics.bias.topics`);
- :mod:`metrics.bias.estimators`: the published pool-bias estimators and their validation
  (:mod:`~metrics.bias.nested`, :mod:`~metrics.bias.lipani`, :mod:`~metrics.bias.validation`,
  :mod:`~metrics.bias.estimator_report`), composed with a prepared leave-out analysis;
- :mod:`metrics.bias.reusability`: the reusability report of a qrels version.
"""
