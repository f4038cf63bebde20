"""Estimating measures from a sample of judgments: prediction-powered inference and stopping
rules."""
