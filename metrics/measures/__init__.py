"""The measures: the registry of families (:mod:`metrics.measures.registry`, which also says
where the other definitions of a measure live and why), the one name grammar
(:mod:`metrics.measures.grammar`) and the names read through it (:mod:`metrics.measures.names`),
what a measure reads (:mod:`metrics.measures.ranked`), and the definitions (basic, gain, trec,
prefs, diversity, curve)."""
