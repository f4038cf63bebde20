"""Charts that read well (issue 16, point 4): the geometry the SVG says it has (plot area and
legend box, written as ``data-box``) is checked here, not eyeballed. The legend never meets the
plot or a drawn point, text is at least 13 px, the log axis has its ticks at 1, 10, 100, 1000,
the elbow and plateau labels never overlap, every scatter point is labelled or numbered in the
key; the Recall@k curve reaches the run's full depth (capped by POOLJUDGE_CURVE_MAX_DEPTH) and an
old 100-point curve still renders, saying it stops at 100."""

from __future__ import annotations

import gzip
import itertools
import json
import math
import random
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from judging.campaigns.models import Topic
from judging.evaluation.models import Evaluation
from judging.evaluation.services import curve_depth, curve_dict, stored_ks
from judging.web import bias_pages, charts
from judging.web.charts import Box
from judging.web.results import curve_note
from judging.workflows.qrels import qrels_imported
from judging.workflows.runs import run_submitted
from metrics.measures.curve import recall_curve
from tests import _bias_reports as fx
from tests._page_checks import wording_problems
from tests._shared_data import needs_shared_data
from tests.knobs import set_knobs
from tests.test_bias_page import page as bias_page
from tests.test_bias_page import store, world  # noqa: F401 (the bias report fixture)

pytestmark = pytest.mark.follow_ups

NS = "{http://www.w3.org/2000/svg}"


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def elements(root: ET.Element, tag: str, cls: str | None = None) -> list[ET.Element]:
    found = root.iter(f"{NS}{tag}")
    return [e for e in found if cls is None or cls in (e.get("class") or "").split()]


def box_of(root: ET.Element, tag: str, cls: str) -> Box:
    (element,) = elements(root, tag, cls)
    return Box.parse(element.get("data-box", ""))


def polyline_points(root: ET.Element) -> dict[str, list[tuple[float, float]]]:
    out = {}
    for line in elements(root, "polyline"):
        pts = [tuple(float(v) for v in p.split(",")) for p in (line.get("points") or "").split()]
        out[line.get("data-series", "")] = [(x, y) for x, y in pts]
    return out


def font_sizes(root: ET.Element) -> list[float]:
    return [float(e.get("font-size", "0")) for e in root.iter() if e.get("font-size")]


def recall_chart(depth: int = 1000, *, x_log: bool = False, label: str = "R@k") -> str:
    ks = list(range(1, depth + 1))
    return charts.line_chart(
        [
            charts.Series(label, ks, [min(1.0, 0.9 * (1 - math.exp(-k / 80))) for k in ks]),
            charts.Series(
                "achievable ceiling min(k,R)/R",
                ks,
                [min(1.0, k / 60) for k in ks],
                color="#7f8c8d",
                dashed=True,
            ),
        ],
        title="Recall@k of run 3 (qrels v2, macro over 100 queries)",
        x_label="k (depth)",
        y_label="recall",
        y_range=(0.0, 1.0),
        markers=[(180, "elbow k=180"), (200, "plateau k=200")],
        x_log=x_log,
        note="To the run's full depth, k = 1..1000.",
    )


# --- layout -------------------------------------------------------------------------------------


@pytest.mark.parametrize("x_log", [False, True])
def test_the_legend_sits_outside_the_plot_and_clear_of_every_curve(x_log: bool) -> None:
    root = parse(recall_chart(x_log=x_log))
    plot = box_of(root, "rect", "plot-area")
    legend = box_of(root, "g", "legend-box")
    assert not legend.intersects(plot)
    assert legend.y >= plot.y + plot.h  # below the plot, and its x axis label
    for series, pts in polyline_points(root).items():
        assert pts, series
        for x, y in pts:
            assert (
                plot.x - 0.1 <= x <= plot.x + plot.w + 0.1
                and plot.y - 0.1 <= y <= plot.y + plot.h + 0.1
            )
            assert not legend.intersects(Box(x - 1, y - 1, 2, 2)), (series, x, y)
    # the ceiling at recall 1 is drawn along the plot's top, which no legend covers
    assert any(
        abs(y - plot.y) < 0.5 for _, y in polyline_points(root)["achievable ceiling min(k,R)/R"]
    )
    width = float(root.get("width", "0"))
    height = float(root.get("height", "0"))
    assert legend.x + legend.w <= width and legend.y + legend.h <= height


def test_text_is_readable_at_the_natural_size_and_the_svg_scales() -> None:
    for svg in (
        recall_chart(),
        charts.scatter([charts.Point(0.1, 0.2, "a")], title="t", x_label="x", y_label="y"),
        charts.bars([("a", 0.1, False)], title="t", value_label="v"),
    ):
        root = parse(svg)
        assert min(font_sizes(root)) >= 13
        assert [float(t.get("font-size", "0")) for t in elements(root, "text", "chart-title")] == [
            15
        ]
        assert root.get("viewBox") == f"0 0 {root.get('width')} {root.get('height')}"
        assert "pj-chart" in (root.get("class") or "")  # the page's CSS: width 100%, a max-width
        assert 500 <= float(root.get("width", "0")) <= 900


def test_log_scale_ticks_are_the_powers_of_ten_evenly_spaced() -> None:
    assert charts.log_ticks(1, 1000)[0] == [1, 10, 100, 1000]
    assert charts.log_ticks(1, 300)[0] == [1, 10, 100]
    assert 200 in charts.log_ticks(1, 300)[1] and 300 in charts.log_ticks(1, 300)[1]
    root = parse(recall_chart(x_log=True))
    ticks = {t.get("data-value"): float(t.get("x", "0")) for t in elements(root, "text", "tick")}
    xs = [ticks[v] for v in ("1", "10", "100", "1000")]
    steps = [b - a for a, b in itertools.pairwise(xs)]
    assert max(steps) - min(steps) < 0.5 and steps[0] > 100
    plot = box_of(root, "rect", "plot-area")
    assert xs[0] == pytest.approx(plot.x, abs=0.1) and xs[-1] == pytest.approx(
        plot.x + plot.w, abs=0.1
    )
    assert any("log scale" in (t.text or "") for t in elements(root, "text", "axis-label"))
    linear = parse(recall_chart())
    assert {t.get("data-value") for t in elements(linear, "text", "tick")} >= {"200", "1000"}


@pytest.mark.parametrize("x_log", [False, True])
def test_elbow_and_plateau_labels_do_not_collide_with_each_other_the_plot_or_the_legend(
    x_log: bool,
) -> None:
    root = parse(recall_chart(x_log=x_log))
    labels = elements(root, "text", "marker-label")
    assert {t.text for t in labels} == {"elbow k=180", "plateau k=200"}
    boxes = [Box.parse(t.get("data-box", "")) for t in labels]
    assert not boxes[0].intersects(boxes[1])
    plot = box_of(root, "rect", "plot-area")
    legend = box_of(root, "g", "legend-box")
    width = float(root.get("width", "0"))
    for b in boxes:
        assert b.y + b.h <= plot.y + 0.1  # in the band above the plot: clear of every curve
        assert not b.intersects(legend)
        assert b.x >= 0 and b.x + b.w <= width
    assert len(elements(root, "line", "marker")) == 2


def test_marker_rows_stack_labels_that_would_overlap() -> None:
    placed = charts.marker_rows([(100, "elbow k=10"), (104, "plateau k=11")], right_edge=700)
    assert {row for *_, row, _, _ in [(p[0], p[1], p[2], p[3], p[4]) for p in placed]} == {0, 1}
    apart = charts.marker_rows([(100, "elbow k=10"), (400, "plateau k=90")], right_edge=700)
    assert [p[2] for p in apart] == [0, 0]
    near_edge = charts.marker_rows([(695, "plateau k=1000")], right_edge=700)
    assert near_edge[0][3] == "end" and near_edge[0][4].x + near_edge[0][4].w <= 700


def test_a_long_legend_label_wraps_and_keeps_its_full_text() -> None:
    long = "not pooled: estimate if pooled (a very long estimator name, with its reference) " * 2
    svg = charts.line_chart(
        [charts.Series(long.strip(), [1, 2, 3], [0.1, 0.2, 0.3])],
        title="t",
        x_label="x",
        y_label="y",
    )
    root = parse(svg)
    (entry,) = elements(root, "text", "legend")
    assert entry.get("data-label") == long.strip()
    assert len(list(entry.iter(f"{NS}tspan"))) >= 2
    assert wording_problems(svg) == []
    plot = box_of(root, "rect", "plot-area")
    assert not box_of(root, "g", "legend-box").intersects(plot)


def test_a_chart_with_nothing_to_draw_says_so_and_has_no_legend() -> None:
    svg = charts.line_chart(
        [charts.Series("s", [1, 2], [None, math.nan])], title="t", x_label="x", y_label="y"
    )
    assert "no data to draw" in svg and 'class="legend"' not in svg
    assert wording_problems(svg) == []
    svg = charts.line_chart(
        [charts.Series("s", [0, 1, 10], [0.1, 0.2, 0.3])],
        title="t",
        x_label="x",
        y_label="y",
        x_log=True,
    )
    assert wording_problems(svg) == [] and "NaN" not in svg  # x = 0 left out of a log axis


# --- scatter ------------------------------------------------------------------------------------


def spread_points(n: int) -> list[charts.Point]:
    rng = random.Random(7)
    out = []
    for i in range(n):
        x = rng.uniform(0.1, 0.4)
        out.append(charts.Point(x, x - rng.uniform(0, 0.04), f"run {i + 1}", i % 5 == 0))
    return out


def test_few_scatter_points_are_each_labelled_directly_without_overlaps() -> None:
    points = [charts.Point(0.1 + 0.03 * i, 0.09 + 0.028 * i, f"run-{i}", i == 3) for i in range(8)]
    svg = charts.scatter(
        points,
        title="Leave-one-out",
        x_label="with",
        y_label="without",
        point_label="pooled run",
        highlight_label="not pooled",
    )
    root = parse(svg)
    labels = elements(root, "text", "point-label")
    assert sorted(t.text or "" for t in labels) == sorted(p.label for p in points)
    boxes = [Box.parse(t.get("data-box", "")) for t in labels]
    for i, a in enumerate(boxes):
        assert all(not a.intersects(b) for b in boxes[i + 1 :])
    marks = [
        e for e in root.iter() if e.get("data-point") and e.tag in (f"{NS}circle", f"{NS}path")
    ]
    assert len(marks) == 8
    # the highlighted point is a diamond (a path), the others dots: shape, not colour alone
    assert [e.tag for e in marks].count(f"{NS}path") == 1
    for m in marks:
        if m.tag == f"{NS}circle":
            cx, cy = float(m.get("cx", "0")), float(m.get("cy", "0"))
            dot = Box(cx - 5, cy - 5, 10, 10)
            assert all(not dot.intersects(b) for b in boxes)
    legend = box_of(root, "g", "legend-box")
    plot = box_of(root, "rect", "plot-area")
    assert not legend.intersects(plot) and all(not legend.intersects(b) for b in boxes)
    assert charts.scatter_key(points) == []
    assert wording_problems(svg) == []


def test_a_long_direct_label_is_cut_with_its_full_text_in_a_title() -> None:
    name = "a-run-with-an-extremely-long-anonymised-label-indeed"
    root = parse(
        charts.scatter([charts.Point(0.2, 0.1, name)], title="t", x_label="x", y_label="y")
    )
    (label,) = elements(root, "text", "point-label")
    assert len(label.text or "") <= charts.LABEL_CHARS and (label.text or "").endswith("…")
    assert name in "".join(label.itertext())  # the <title> inside it


def test_many_scatter_points_are_numbered_and_every_number_is_in_the_key() -> None:
    points = spread_points(127)
    svg = charts.scatter(points, title="t", x_label="x", y_label="y", point_label="pooled")
    root = parse(svg)
    numbers = sorted(int(t.text or "0") for t in elements(root, "text", "point-number"))
    assert numbers == list(range(1, 128))
    key = charts.scatter_key(points)
    assert [r.number for r in key] == list(range(1, 128))
    assert sorted(r.label for r in key) == sorted(p.label for p in points)
    assert [r.x for r in key] == sorted((p.x for p in points), reverse=True)  # #1 scores highest
    # each numbered mark's tooltip names the run its number stands for
    for row in key[:5]:
        (mark,) = [
            e
            for e in root.iter()
            if e.get("data-point") == str(row.number) and e.tag != f"{NS}text"
        ]
        assert f"#{row.number} {row.label}:" in "".join(mark.itertext())
    assert not elements(root, "text", "key-row")  # the page shows the key as a table
    download = parse(charts.scatter(points, title="t", x_label="x", y_label="y", key=True))
    rows = {int(t.text or "0") for t in elements(download, "text", "key-row")}
    assert rows == set(range(1, 128))
    assert wording_problems(svg) == []


def test_the_bias_scatter_numbers_a_big_campaign_and_keeps_the_reports_labels() -> None:
    runs = {
        f"run {i}": {"score": 0.2 + i / 1000, "score_without": 0.19 + i / 1000, "delta": 0.01}
        for i in range(30)
    }
    report = {
        "result": {"loo": {"runs": runs}, "penalty": {"runs": {}}},
        "measure": "P@10",
        "depth": 10,
        "qrels_version": 4,
    }
    key = bias_pages.scatter_key(report)
    assert [r.label for r in key][:2] == ["run 29", "run 28"] and len(key) == 30
    svg = bias_pages._scatter_download(report)
    assert "run 29" in svg and 'class="key-row"' in svg
    assert bias_pages.chart_name("scatter", "P@10", 4) == "scatter-P@10-qrels-v4"


def test_bar_values_never_sit_on_the_zero_line() -> None:
    root = parse(charts.bars([("a", 0.05, False), ("b", -0.01, False)], title="t", value_label="v"))
    (zero,) = [e for e in elements(root, "line") if e.get("x1") == e.get("x2")]
    zx = float(zero.get("x1", "0"))
    values = [t for t in elements(root, "text") if (t.text or "").startswith(("+", "-"))]
    for t in values:
        x = float(t.get("x", "0"))
        if t.get("text-anchor") == "end":
            assert x < zx
        else:
            assert x > zx


# --- the curve to full depth --------------------------------------------------------------------


def deep_case(depth: int, topics: int) -> tuple[dict[str, dict[str, int]], dict[str, list[str]]]:
    rng = random.Random(depth)
    qrels, ranked = {}, {}
    for t in range(topics):
        docs = [f"d{t}-{i}" for i in range(depth)]
        ranked[str(t)] = docs
        qrels[str(t)] = {d: 1 for d in rng.sample(docs, 30)} | {f"missing-{t}": 1}
    return qrels, ranked


def test_the_stored_curve_keeps_every_k_to_100_then_a_log_spaced_subset() -> None:
    ks = stored_ks(1000, (333, None))
    assert ks[:100] == list(range(1, 101)) and ks[-1] == 1000 and 333 in ks
    assert len(ks) < 150
    assert stored_ks(60) == list(range(1, 61))
    qrels, ranked = deep_case(1000, 100)
    curve = recall_curve(qrels, ranked, max_k=curve_depth(ranked))
    data = curve_dict(curve)
    assert data["depth"] == 1000 and data["k"][-1] == 1000
    assert len(data["k"]) == len(data["recall"]) == len(data["ceiling"])
    for i, k in enumerate(data["k"]):
        assert data["recall"][i] == pytest.approx(float(curve.recall[k - 1]))
    if curve.elbow:
        assert curve.elbow in data["k"]
    size = len(json.dumps({k: data[k] for k in ("k", "recall", "ceiling")}))
    full = len(json.dumps(curve.to_dict(per_query=False)["recall"]))
    assert size < 10_000 < 2 * full  # thinning stores a fraction of the 1000-point arrays


@pytest.mark.data
@needs_shared_data("robust03")
def test_a_real_1000_deep_run_stores_a_small_full_depth_curve(shared_data: Path) -> None:
    """TREC 2003 Robust, run InexpC2: 100 topics, 1000 documents each. Its stored curve has 142
    points (k/recall/ceiling about 6 KB of JSON, 35 KB unthinned); the whole curve is smaller
    than the 100-deep one stored before, whose never-retrieved lists counted every relevant
    document below rank 100 as never retrieved."""
    root = shared_data / "robust03"
    qrels: dict[str, dict[str, int]] = {}
    for line in (root / "qrels.txt").read_text().splitlines():
        q, _, d, g = line.split()
        qrels.setdefault(q, {})[d] = int(g)
    rows: dict[str, list[tuple[float, str]]] = {}
    with gzip.open(root / "runs" / "input.InexpC2.gz", "rt") as f:
        for line in f:
            q, _, d, _, score, _ = line.split()
            rows.setdefault(q, []).append((-float(score), d))
    ranked = {q: [d for _, d in sorted(v)] for q, v in rows.items()}
    assert len(ranked) == 100 and curve_depth(ranked) == 1000
    curve = recall_curve(qrels, ranked, max_k=curve_depth(ranked))
    data = curve_dict(curve)
    assert data["depth"] == 1000 and len(data["k"]) < 150
    assert len(json.dumps({k: data[k] for k in ("k", "recall", "ceiling")})) < 8_000
    before = recall_curve(qrels, {q: r[:100] for q, r in ranked.items()}, max_k=100)
    assert len(json.dumps(data)) < len(json.dumps(before.to_dict(per_query=False)))
    assert data["recall"][-1] > data["recall"][data["k"].index(100)]  # found beyond k = 100


@pytest.mark.django_db
def test_a_300_deep_run_gets_a_300_k_curve_and_the_cap_is_honoured(
    campaign: Any, researcher: Any, settings: Any
) -> None:
    Topic.objects.filter(campaign=campaign).update(tags=[])
    results = {q: {f"{q}-d{i}": 1000.0 - i for i in range(300)} for q in ("401", "402")}
    results["403"] = {"403-d0": 1.0}
    run = run_submitted(campaign=campaign, owner=researcher, tag="deep", results=results)
    qrels = "401 0 401-d5 1\n401 0 401-d250 1\n402 0 402-d40 1\n403 0 403-d0 1\n"
    qrels_imported(campaign=campaign, data=qrels.encode())
    from judging.assessments.models import QrelsVersion
    from judging.evaluation.services import evaluate_runs

    version = QrelsVersion.objects.get(campaign=campaign, number=1)
    (ev,) = evaluate_runs(version=version, runs=[run], force=True)
    assert ev.curve["depth"] == 300 and ev.curve["k"][-1] == 300
    assert ev.curve["recall"][-1] == pytest.approx(1.0)
    at_100 = ev.curve["recall"][ev.curve["k"].index(100)]
    assert at_100 < 1.0  # 401-d250 is found only beyond k = 100
    assert curve_note(ev.curve, run) == "To the run's full depth, k = 1..300."
    set_knobs(settings, curve_max_depth=150)
    (ev,) = evaluate_runs(version=version, runs=[run], force=True)
    assert ev.curve["depth"] == 150 and ev.curve["k"][-1] == 150
    run.refresh_from_db()
    assert "To depth 150, the cap (POOLJUDGE_CURVE_MAX_DEPTH); the run ranks up to 300" in (
        curve_note(ev.curve, run)
    )


# --- the pages ----------------------------------------------------------------------------------


@pytest.fixture
def evaluated(campaign: Any, researcher: Any, other_researcher: Any, as_committed: Any) -> Any:
    results = {q: {f"{q}-d{i}": 500.0 - i for i in range(250)} for q in ("401", "402", "403")}
    run_submitted(campaign=campaign, owner=researcher, tag="rita-deep", results=results)
    run_submitted(campaign=campaign, owner=other_researcher, tag="oscar-secret", results=results)
    with as_committed():
        qrels_imported(
            campaign=campaign,
            data=b"401 0 401-d3 1\n401 0 401-d200 1\n402 0 402-d20 1\n403 0 403-d90 2\n",
        )
    return campaign


def client_for(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.django_db
def test_the_run_page_offers_a_log_axis_and_both_downloads(evaluated: Any, researcher: Any) -> None:
    run = evaluated.runs.get(tag="rita-deep")
    client = client_for(researcher)
    html = client.get(f"/runs/{run.pk}/").content.decode()
    assert wording_problems(html) == []
    assert "To the run&#x27;s full depth, k = 1..250." in html or "k = 1..250" in html
    assert "scale=log#recall-chart" in html and "Download SVG" in html
    assert 'id="curve-depth-note"' not in html
    png = re.search(r'data-chart-png="([^"]+)" data-filename="([^"]+)"', html)
    assert png is not None
    assert png.group(2) == "recall-rita-deep-qrels-v1.png" and "scale=linear" in png.group(1)
    assert "pooljudge/charts.js" in html
    logged = client.get(f"/runs/{run.pk}/?scale=log").content.decode()
    assert "<strong>log</strong>" in logged and "log scale" in logged
    svg = client.get(f"/runs/{run.pk}/recall.svg?scale=log&download=1")
    assert (
        svg.status_code == 200 and "recall-rita-deep-qrels-v1-log.svg" in svg["Content-Disposition"]
    )
    root = parse(svg.content.decode())
    assert {t.get("data-value") for t in elements(root, "text", "tick")} >= {"1", "10", "100"}
    assert client.get(f"/runs/{run.pk}/recall.svg?scale=bogus").status_code == 200  # linear


@pytest.mark.django_db
def test_an_old_100_point_curve_renders_and_says_it_stops_at_100(
    evaluated: Any, researcher: Any
) -> None:
    run = evaluated.runs.get(tag="rita-deep")
    ev = Evaluation.objects.get(run=run, mode="honest")
    old = {k: v for k, v in ev.curve.items() if k not in ("depth", "k_sampling")}
    keep = [i for i, k in enumerate(old["k"]) if k <= 100]
    for name in ("k", "recall", "ceiling"):
        old[name] = [old[name][i] for i in keep]
    ev.curve = old
    ev.save()
    html = client_for(researcher).get(f"/runs/{run.pk}/").content.decode()
    assert "To depth 100 (computed before full-depth curves" in html
    assert 'id="curve-depth-note"' in html and "--force" in html
    assert wording_problems(html) == []
    svg = client_for(researcher).get(f"/runs/{run.pk}/recall.svg?scale=log").content.decode()
    assert "computed before full-depth curves" in svg and wording_problems(svg) == []


@pytest.mark.django_db
def test_the_charts_are_for_their_researcher_only(
    evaluated: Any, researcher: Any, annotator: Any, other_researcher: Any
) -> None:
    run = evaluated.runs.get(tag="rita-deep")
    url = f"/runs/{run.pk}/recall.svg?scale=log&download=1"
    assert Client().get(url).status_code == 302
    assert client_for(annotator).get(url).status_code == 403
    assert client_for(other_researcher).get(url).status_code == 404
    mine = client_for(researcher).get(url).content.decode()
    assert "oscar-secret" not in mine
    theirs = evaluated.runs.get(tag="oscar-secret")
    assert client_for(researcher).get(f"/runs/{theirs.pk}/recall.svg").status_code == 404


@pytest.mark.django_db
def test_the_bias_page_keys_a_numbered_scatter_in_a_table(
    world: Any,  # noqa: F811
    researcher: Any,
) -> None:
    result = fx.result()
    for i in range(30):
        result["loo"]["runs"][f"run-{i:02d}"] = {
            **result["loo"]["runs"]["alpha"],
            "score": 0.1 + i / 100,
            "score_without": 0.09 + i / 100,
            "rank": 4 + i,
        }
    store(world, result)
    html = bias_page(researcher, world)
    table = html[
        html.index('id="scatter-key-table"') : html.index(
            "</table>", html.index("scatter-key-table")
        )
    ]
    rows = re.findall(r'<tr class="[^"]*" data-point="(\d+)">', table)
    assert [int(n) for n in rows] == list(range(1, len(rows) + 1)) and len(rows) == 34
    assert "novel-x (not pooled)" in table and "◇ not pooled" not in table  # said once
    assert "beta" not in table  # Oscar's run keeps its anonymised label
    svg = html[
        html.index(
            '<svg xmlns="http://www.w3.org/2000/svg" class="pj-chart" data-chart="scatter"'
        ) :
    ]
    root = parse(svg[: svg.index("</svg>") + 6])
    assert sorted(int(t.text or "0") for t in elements(root, "text", "point-number")) == list(
        range(1, 35)
    )
    download = client_for(researcher).get(
        f"/campaigns/{world.pk}/bias/scatter.svg?measure=P@10&download=1"
    )
    assert "scatter-P%4010-qrels-v2.svg" in download["Content-Disposition"]  # as the PNG's
    keyed = parse(download.content.decode())
    assert {int(t.text or "0") for t in elements(keyed, "text", "key-row")} == set(range(1, 35))
