"""Small things every page owes (issue 29, point 16): the site's icon at /favicon.ico (asked by
browsers on every page, and by none of them answered with a 404) and on every page; the API docs
page links back to the site."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.contrib.staticfiles import finders
from django.templatetags.static import static
from django.test import Client

pytestmark = pytest.mark.django_db

ICON = "pooljudge/favicon.svg"


def test_favicon_ico_answers_everybody_with_the_site_icon(client: Client, researcher: Any) -> None:
    for who in (None, researcher):
        if who is not None:
            client.force_login(who)
        r = client.get("/favicon.ico")
        assert r.status_code == 200 and r["Content-Type"] == "image/svg+xml"
        assert client.head("/favicon.ico").status_code == 200
    found = finders.find(ICON)
    assert found, "the icon is not a static file"
    svg = Path(str(found)).read_bytes()
    assert r.content == svg  # the file the pages name
    assert svg.lstrip().startswith(b"<svg") and b"</svg>" in svg


def test_the_pages_name_the_icon(client: Client, researcher: Any) -> None:
    link = f'<link rel="icon" href="{static(ICON)}" type="image/svg+xml">'
    assert link in client.get("/login/").content.decode()
    client.force_login(researcher)
    assert link in client.get("/").content.decode()
    assert f'href="{static(ICON)}"' in client.get("/api/v1/docs/").content.decode()


def test_the_api_docs_page_links_back_to_the_site(client: Client, researcher: Any) -> None:
    client.force_login(researcher)
    page = client.get("/api/v1/docs/").content.decode()
    back = re.search(r'<a[^>]*id="back-to-site"[^>]*href="([^"]+)"[^>]*>([^<]+)</a>', page)
    assert back, "no link back to the site"
    assert back.group(1) == "/" and "Pooljudge" in back.group(2)
    assert page.index('id="back-to-site"') < page.index('id="swagger-ui"')  # above the docs
