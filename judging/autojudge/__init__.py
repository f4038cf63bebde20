"""Automatic judges: their labels kept apart from human judgments, audits and hybrid estimates."""
