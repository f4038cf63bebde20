"""In a real browser (Chromium) at 1400 px: the run page's Recall@k chart keeps its legend off the
plot (as rendered, not as the server estimates), its text is readable, the k axis switches to a
log scale, "Download PNG" saves a real PNG at twice the chart's size and "Download SVG" the SVG;
the bias page's scatter labels every point, no two labels overlapping."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest

from judging.assessments.services import qrels_import
from judging.campaigns.models import Topic
from judging.evaluation.services import evaluate_runs
from judging.workflows.runs import run_submitted
from tests import _bias_reports as fx
from tests.test_bias_page import store, world  # noqa: F401 (the bias report fixture)
from tests.test_browser_judging import page  # noqa: F401 (the browser fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.follow_ups]

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def deep_run(campaign: Any, researcher: Any) -> Any:
    """Rita's 300-deep run, evaluated against qrels v1 (relevant documents beyond k = 100)."""
    Topic.objects.filter(campaign=campaign).update(tags=[])
    results = {q: {f"{q}-d{i}": 1000.0 - i for i in range(300)} for q in ("401", "402", "403")}
    run = run_submitted(campaign=campaign, owner=researcher, tag="deep-run", results=results)
    qrels = "".join(
        f"{q} 0 {q}-d{i} 1\n" for q in ("401", "402", "403") for i in (2, 9, 40, 150, 280)
    )
    # the qrels alone, evaluated here: not the bias and reusability reports an import asks for
    version = qrels_import(campaign=campaign, data=qrels.encode())
    evaluate_runs(version=version, runs=[run])
    return run


@pytest.fixture
def quiet_imports(monkeypatch: Any) -> None:
    """Importing qrels computes nothing (the bias test stores its report; computing the default
    ones would only make the test slow)."""
    monkeypatch.setattr("judging.workflows.qrels.after_qrels", lambda version: None)


def login(page: Any, live_server: Any, user: Any, next_url: str) -> None:  # noqa: F811
    user.set_password("see-the-charts")
    user.save()
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.goto(f"{live_server.url}/login/?next={next_url}")
    page.fill("#id_username", user.username)
    page.fill("#id_password", "see-the-charts")
    with page.expect_navigation():
        page.click("button[type=submit]")


def apart(a: dict[str, float], b: dict[str, float]) -> bool:
    return (
        a["x"] + a["width"] <= b["x"]
        or b["x"] + b["width"] <= a["x"]
        or a["y"] + a["height"] <= b["y"]
        or b["y"] + b["height"] <= a["y"]
    )


def test_the_recall_chart_reads_well_switches_to_log_and_downloads_as_png_and_svg(
    page: Any,  # noqa: F811
    live_server: Any,
    deep_run: Any,
    researcher: Any,
    tmp_path: Path,
) -> None:
    login(page, live_server, researcher, f"/runs/{deep_run.pk}/")
    chart = page.locator("#recall-chart svg.pj-chart")
    chart.wait_for()
    svg_box = chart.bounding_box()
    assert 700 <= svg_box["width"] <= 900  # at 1400 px: neither tiny nor huge
    plot = chart.locator("rect.plot-area").bounding_box()
    legend = chart.locator("g.legend-box").bounding_box()
    assert apart(plot, legend)
    for marker in chart.locator("text.marker-label").all():
        assert apart(marker.bounding_box(), plot) and apart(marker.bounding_box(), legend)
    tick = chart.locator("text.tick").first.bounding_box()
    assert tick["height"] >= 13  # 13 px text, drawn a little larger than natural
    assert "k = 1..300" in chart.locator("text.chart-note").text_content()

    with page.expect_navigation():
        page.click("#recall-scale a")
    assert "scale=log" in page.url
    assert page.locator("#recall-scale strong").inner_text() == "log"
    ticks = page.locator("#recall-chart text.tick[data-value]").all_text_contents()
    assert {"1", "10", "100"} <= set(ticks)

    button = page.locator("#recall-chart button[data-chart-png]")
    assert button.is_visible()  # shown by charts.js
    with page.expect_download() as info:
        button.click()
    png = info.value
    assert png.suggested_filename == "recall-deep-run-qrels-v1-log.png"
    target = tmp_path / "chart.png"
    png.save_as(target)
    data = target.read_bytes()
    assert data[:8] == PNG_SIGNATURE
    width, height = struct.unpack(">II", data[16:24])
    natural = float(chart.get_attribute("width") or 0)
    assert width == round(2 * natural) and height > 600  # drawn at twice the natural size

    with page.expect_download() as info:
        page.click("#recall-chart a.chart-svg-link")
    svg = info.value
    assert svg.suggested_filename == "recall-deep-run-qrels-v1-log.svg"
    svg.save_as(tmp_path / "chart.svg")
    text = (tmp_path / "chart.svg").read_text()
    assert text.startswith("<svg") and "log scale" in text


def test_the_bias_scatter_labels_every_point_without_overlaps(
    page: Any,  # noqa: F811
    live_server: Any,
    quiet_imports: None,
    world: Any,  # noqa: F811
    researcher: Any,
) -> None:
    store(world, fx.result())
    login(page, live_server, researcher, f"/campaigns/{world.pk}/bias/?measure=P@10")
    chart = page.locator("#scatter-chart svg.pj-chart")
    chart.wait_for()
    labels = chart.locator("text.point-label")
    points = chart.locator("[data-point]:not(text)")
    assert labels.count() == points.count() >= 4
    names = {label.evaluate("t => t.firstChild.nodeValue") for label in labels.all()}
    assert {"alpha", "gamma"} <= names and any("not pooled" in n for n in names)
    assert "beta" not in names  # Oscar's run, anonymised
    boxes = [label.bounding_box() for label in labels.all()]
    for i, a in enumerate(boxes):
        assert all(apart(a, b) for b in boxes[i + 1 :])
    legend = chart.locator("g.legend-box").bounding_box()
    assert apart(legend, chart.locator("rect.plot-area").bounding_box())
    assert all(apart(b, legend) for b in boxes)
    assert chart.locator("path[data-point]").count() >= 1  # not pooled: diamonds, not dots
    with page.expect_download() as info:
        page.click("#scatter-chart button[data-chart-png]")
    assert info.value.suggested_filename == "scatter-P@10-qrels-v2.png"
    assert Path(info.value.path()).read_bytes()[:8] == PNG_SIGNATURE
