"""Is a ``SECRET_KEY`` fit for production? Read by the settings (start-up refuses a bad one with
DEBUG off) and by the deploy system check (``judging.core.checks``); no Django imports, so that
the settings module can use it before Django is set up."""

from __future__ import annotations

# Keys that are published (in this repository, its docs or Django's) and so are no secret.
KNOWN_PLACEHOLDERS = frozenset(
    {
        "change-me-to-a-long-random-string-of-at-least-fifty-characters-please",
        "django-insecure-local-only-pooljudge-demo-key-never-use-in-production",
    }
)
# Words that mark a value someone was meant to replace.
PLACEHOLDER_MARKS = (
    "change-me",
    "changeme",
    "change_me",
    "replace-me",
    "replaceme",
    "replace_me",
    "your-secret",
    "your_secret",
    "insecure",
    "placeholder",
    "example",
)
MIN_LENGTH = 50
MIN_UNIQUE_CHARACTERS = 5


def secret_key_problem(key: str) -> str | None:
    """Why the key is unfit for production, or None when it looks like a real random secret."""
    lowered = key.lower()
    if key in KNOWN_PLACEHOLDERS:
        return "it is a published placeholder (from .env.example or the local default)"
    for mark in PLACEHOLDER_MARKS:
        if mark in lowered:
            return f"it looks like a placeholder (it contains {mark!r})"
    if len(key) < MIN_LENGTH:
        return f"it has {len(key)} characters; use at least {MIN_LENGTH} random ones"
    if len(set(key)) < MIN_UNIQUE_CHARACTERS:
        return f"it has fewer than {MIN_UNIQUE_CHARACTERS} distinct characters"
    return None


HOW_TO_GENERATE = 'python -c "import secrets; print(secrets.token_urlsafe(64))"'
