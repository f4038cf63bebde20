"""Judges and their labels: inter-annotator agreement (:mod:`~metrics.judges.agreement`), label
quality (:mod:`~metrics.judges.quality`), the audit of an automatic judge against people
(:mod:`~metrics.judges.audit`, with :mod:`~metrics.judges.families` and
:mod:`~metrics.judges.robustness`), probes (:mod:`~metrics.judges.probes`) and calibration of a
judge's grades (:mod:`~metrics.judges.calibration`)."""
