"""Tests change Pooljudge's settings by field: ``override_knobs(max_upload_bytes=100)`` (a
decorator or a ``with`` block) or ``set_knobs(settings, login_lock_seconds=60)`` with
pytest-django's ``settings`` fixture. Each replaces that field of its group
(``settings.POOLJUDGE_UPLOADS``..., judging/core/conf.py) and leaves the others as they are."""

from __future__ import annotations

import dataclasses
from typing import Any

from django.conf import settings as django_settings
from django.test import override_settings

from judging.core.conf import group_of


def _replaced(current: Any, knobs: dict[str, Any]) -> dict[str, Any]:
    """The groups holding ``knobs``, as ``current`` (the settings) has them, with those fields
    replaced: ``{"POOLJUDGE_UPLOADS": Uploads(..., max_upload_bytes=100, ...)}``."""
    groups: dict[str, Any] = {}
    for name, value in knobs.items():
        setting = group_of(name).setting
        group = groups.get(setting, getattr(current, setting))
        groups[setting] = dataclasses.replace(group, **{name: value})
    return groups


class override_knobs(override_settings):
    """``override_settings`` for fields of the settings groups, read when the test or block
    starts, so that overrides nest."""

    def __init__(self, **knobs: Any) -> None:
        for name in knobs:
            group_of(name)  # a misspelt field fails where it is written
        self.knobs = knobs
        super().__init__()

    def enable(self) -> None:
        self.options = _replaced(django_settings, self.knobs)
        super().enable()


def set_knobs(settings: Any, **knobs: Any) -> None:
    """Replace fields of the settings groups through pytest-django's ``settings`` fixture (which
    restores them after the test)."""
    for setting, group in _replaced(settings, knobs).items():
        setattr(settings, setting, group)
