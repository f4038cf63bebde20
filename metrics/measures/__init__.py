"""The measures: their names (one grammar), the registry of families, and their definitions."""
