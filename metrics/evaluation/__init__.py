"""Evaluating runs against judgments: :class:`~metrics.evaluation.evaluator.Evaluator`,
judgment groups, preference judgments, z-scores and regression checks against a baseline."""
