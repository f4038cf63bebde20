"""Every setting is declared once (judging/core/conf.py), read by some module, and documented in
the generated reference, docs/reference/settings.md, which is kept up to date."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from judging.core import conf
from tests.knobs import override_knobs, set_knobs

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "docs" / "reference" / "settings.md"
# Read flat until the branches reworking their readers merge (issue 30): the evaluation tasks read
# the group's value through this name; the bias report's second path goes, with its setting.
FLAT: set[str] = set()


def test_the_reference_is_up_to_date() -> None:
    assert REFERENCE.is_file(), f"{REFERENCE} is missing: run `{conf.COMMAND}`"
    assert REFERENCE.read_text(encoding="utf-8") == conf.reference_markdown(), (
        f"{REFERENCE.relative_to(ROOT)} is out of date: run `{conf.COMMAND}` and commit it"
    )


def test_every_variable_the_settings_read_is_in_the_reference() -> None:
    source = (ROOT / "judging" / "settings.py").read_text(encoding="utf-8")
    read = set(re.findall(r'env_[a-z]+\(\s*"([A-Z][A-Z0-9_]+)"', source))
    documented = set(conf.all_variables())
    assert read - documented == set()
    assert len(conf.all_variables()) == len(documented), "a variable is described twice"
    reference = REFERENCE.read_text(encoding="utf-8")
    for name in documented:
        assert f"| `{name}` |" in reference


def test_pooljudge_settings_are_the_groups() -> None:
    names = {name for name in dir(settings) if name.startswith("POOLJUDGE_")}
    assert names == {group.setting for group in conf.GROUPS} | FLAT
    for group in conf.GROUPS:
        assert isinstance(getattr(settings, group.setting), group)


def test_a_field_is_named_after_its_variable() -> None:
    for group in conf.GROUPS:
        for field, knob in group.knobs():
            assert knob.env == "POOLJUDGE_" + field.name.upper(), (group.setting, field.name)
            assert knob.help.endswith("."), knob.env


def test_every_setting_is_read_by_some_module() -> None:
    sources = "\n".join(
        path.read_text(encoding="utf-8")
        for path in (ROOT / "judging").rglob("*.py")
        if path.name != "conf.py"
    )
    unread = [
        f"{group.setting}.{field.name}"
        for group in conf.GROUPS
        for field, _ in group.knobs()
        if f"{group.setting}.{field.name}" not in sources
    ]
    assert unread == [], "settings read by nothing: drop them"


def test_the_environment_sets_a_group(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POOLJUDGE_MAX_UPLOAD_BYTES", "1MB")
    monkeypatch.setenv("POOLJUDGE_MAX_LINE_BYTES", "0")  # 0: the default, as before
    monkeypatch.setenv("POOLJUDGE_STAGING_DIR", "/srv/staging")
    uploads = conf.Uploads.from_env(staging_dir=Path("/elsewhere"))
    assert uploads.max_upload_bytes == 1024**2
    assert uploads.max_line_bytes == 64 * 1024
    assert uploads.staging_dir == Path("/srv/staging")
    assert uploads.max_problems == 100

    monkeypatch.setenv("POOLJUDGE_SWEEP_IN_WORKER", "no")
    assert conf.Tasks.from_env().sweep_in_worker is False
    monkeypatch.setenv("POOLJUDGE_PREFETCH", "6")
    with pytest.raises(ImproperlyConfigured, match="POOLJUDGE_PREFETCH=6 must be at most 5"):
        conf.Judging.from_env()


def test_llm_endpoints_come_from_json_and_the_shorthand(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POOLJUDGE_LLM_ENDPOINTS", '{"lab": {"base_url": "http://h:1/v1"}}')
    monkeypatch.setenv("POOLJUDGE_LLM_BASE_URL", "http://d:2/v1")
    monkeypatch.setenv("POOLJUDGE_LLM_API_KEY", "k")
    assert conf.Autojudge.from_env().llm_endpoints == {
        "lab": {"base_url": "http://h:1/v1"},
        "default": {"base_url": "http://d:2/v1", "api_key": "k"},
    }
    monkeypatch.setenv("POOLJUDGE_LLM_ENDPOINTS", "[1")
    with pytest.raises(ImproperlyConfigured, match="POOLJUDGE_LLM_ENDPOINTS is not JSON"):
        conf.Autojudge.from_env()


def test_overrides_replace_one_field_and_nest() -> None:
    before = settings.POOLJUDGE_UPLOADS
    with override_knobs(max_problems=2):
        assert settings.POOLJUDGE_UPLOADS.max_problems == 2
        with override_knobs(max_line_bytes=10):
            assert settings.POOLJUDGE_UPLOADS.max_problems == 2
            assert settings.POOLJUDGE_UPLOADS.max_line_bytes == 10
        changed = settings.POOLJUDGE_UPLOADS
        assert changed == dataclasses.replace(before, max_problems=2)
    after = settings.POOLJUDGE_UPLOADS
    assert after == before
    with pytest.raises(KeyError, match="no settings group has a field 'max_problem'"):
        override_knobs(max_problem=2)


def test_the_settings_fixture_replaces_fields(settings: Any) -> None:
    set_knobs(settings, login_lock_seconds=5, prefetch=0)
    assert settings.POOLJUDGE_SECURITY.login_lock_seconds == 5
    assert settings.POOLJUDGE_JUDGING.prefetch == 0


def test_the_command_checks_and_writes_the_reference(tmp_path: Path) -> None:
    from django.core.management import CommandError, call_command

    out = tmp_path / "settings.md"
    with pytest.raises(CommandError, match=re.escape(f"out of date: run `{conf.COMMAND}`")):
        call_command("settings_reference", "--check", "--output", str(out))
    call_command("settings_reference", "--output", str(out))
    call_command("settings_reference", "--check", "--output", str(out))
    assert out.read_text(encoding="utf-8") == conf.reference_markdown()
