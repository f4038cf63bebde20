"""Tests of the automatic judges (judging/autojudge)."""
