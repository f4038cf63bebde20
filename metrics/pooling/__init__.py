"""Pooling: which documents of the runs to judge (strategies, simulation) and pool inference."""
