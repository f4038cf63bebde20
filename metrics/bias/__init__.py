"""Pool bias: how much a qrels built from some runs' pools underrates the runs outside them.

- :mod:`metrics.bias.leaveout`: Judged@k, leave-one-run/group-out re-scoring, the estimated
  penalty, and comparing two qrels versions on the topics both can score;
- :mod:`metrics.bias.estimators`: the published pool-bias estimators (Webber & Park, Lipani's
  two, condensed, ...), each scored against the leave-out truth;
- :mod:`metrics.bias.reusability`: the reusability report of a qrels version.
"""
