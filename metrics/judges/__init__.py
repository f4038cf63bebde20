"""Judges and their labels: inter-annotator agreement (:mod:`~metrics.judges.agreement`), label
quality (:mod:`~metrics.judges.quality`), the audit of an automatic judge against people
(:mod:`~metrics.judges.audit`, with :mod:`~metrics.judges.families` and
:mod:`~metrics.judges.robustness`), probes (:mod:`~metrics.judges.probes`) and calibration of a
judge's grades (:mod:`~metrics.judges.calibration`), the meta-evaluation of many judges against
people (:mod:`~metrics.judges.meta`: system-ranking agreement; :mod:`~metrics.judges.meta_labels`:
label agreement; both with intervals over topics, undefined with a reason, never 0.0) and
juries that combine judges (:mod:`~metrics.judges.juries`)."""
