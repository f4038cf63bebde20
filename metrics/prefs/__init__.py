"""Preference judgments below the measures: judgment groups built from preference rows and the
counts of a ranking against them (read by :mod:`metrics.measures.prefs`)."""
