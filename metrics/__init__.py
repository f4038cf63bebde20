"""Pooljudge metrics: pure Python + numpy evaluation, statistics, pooling and bias analyses.

No Django import here (checked by ruff's banned-api rule).
"""

from metrics.evaluation.evaluator import Evaluator, evaluate
from metrics.evaluation.results import Aggregate, EvaluationResult, Excluded
from metrics.io import (
    InvalidInput,
    Problem,
    Qrels,
    ReadWarning,
    Run,
    RunTable,
    parse_run,
    read_qrels,
    read_run,
    write_qrels,
    write_run,
)
from metrics.measures.names import Measure, UnknownMeasureError, parse_measure, parse_measures

__all__ = [
    "Aggregate",
    "EvaluationResult",
    "Evaluator",
    "Excluded",
    "InvalidInput",
    "Measure",
    "Problem",
    "Qrels",
    "ReadWarning",
    "Run",
    "RunTable",
    "UnknownMeasureError",
    "evaluate",
    "parse_measure",
    "parse_measures",
    "parse_run",
    "read_qrels",
    "read_run",
    "write_qrels",
    "write_run",
]
