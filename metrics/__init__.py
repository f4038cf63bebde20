"""Pooljudge metrics: pure Python + numpy evaluation, statistics, pooling and bias analyses.

No Django import here (checked by ruff's banned-api rule).
"""
