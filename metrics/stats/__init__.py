"""Statistics over per-topic scores: intervals, paired tests, multiple comparisons, rank
correlations."""
