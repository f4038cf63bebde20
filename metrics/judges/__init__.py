"""Judges and their labels: inter-annotator agreement, label quality, audits of an automatic
judge against people, probes, and calibration of a judge's grades."""
