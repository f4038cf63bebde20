"""Automatic judges: versioned judges (an OpenAI-compatible endpoint with the UMBRELA prompt, a
local embedding model, imported label files), their labels kept apart from human judgments,
their audits against people, and metric estimates corrected by a human sample."""
