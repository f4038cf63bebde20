"""trec_eval 10.0's preference and z-score command lines, byte for byte against the binary.

The four quicktest lines of trec_eval's Makefile that use them (``-m all_prefs -q -R prefs`` on
``prefs.test`` and on ``prefs.comment.test``, ``-m all_prefs -q -R qrels_prefs`` on the qrels,
``-q -m all_trec -Z zscores_file``), and more of their flags (without ``-q``, ``-c``, ``-M``,
``-n``, the ``prefs`` nickname, ``-Z`` with preference and judgment-group measures), run on
inputs generated here (fixed seeds; trec_eval's own files are read only by
``test_trec_eval_suite.py`` when ``TREC_EVAL_TEST_DIR`` is set):

* preference files shaped like trec_eval's ``prefs.test``: topics with one to four judgment
  groups, each of one sub-group (equivalence classes) or of several (partial orders closed by
  transitivity), groups that disagree, real rel_levels with ties, topics where every document
  has the same level, only non-relevant documents, a single document, the same preference in
  two sub-groups, docnos with ``#``, a copy with ``#`` comment lines;
* runs with tied scores (the preference measures break ties by docno ascending), unjudged
  documents, and a run missing topics (for ``-c``);
* the qrels and runs of ``test_trec_eval_suite.py`` for ``-R qrels_prefs`` (one judgment group
  of 150-900 documents per topic, and three groups per topic) and ``-Z``;
* a z-scores file of every measure of every topic but a few, some with a zero deviation, a qid
  the qrels do not have, and a last line above every qid and measure (past its last entry
  trec_eval reads outside its arrays: see :mod:`metrics.evaluation.zscores`).

Then random preference files and runs (25 seeds) against the binary. Without ``TREC_EVAL``
the comparisons are skipped; the always-on checks of the same code are in ``test_prefs.py`` and
``test_zscores.py`` (hand-worked).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.metrics.test_trec_eval_suite import _make_collection, binary, needs_binary, ours

Row = tuple[str, str, str, float]  # jg, jsg, docno, rel_level


def _group(rng: random.Random, jg: str, docs: list[str], sub_groups: int) -> list[Row]:
    """A judgment group over ``docs``: one sub-group with levels >= 0, or several sub-groups
    each listing some of the documents with a level that keeps a hidden order (a positive
    multiple of the document's hidden level: consistent, 0 stays 0)."""
    if sub_groups == 1:
        return [(jg, "0", d, rng.choice((0.0, 0.0, 1.0, 2.0, 3.0, 0.5, 4.25))) for d in docs]
    hidden = {d: rng.choice((-1.0, 0.0, 0.0, 1.0, 2.0, 3.0, 5.5)) for d in docs}
    rows: list[Row] = []
    for k in range(sub_groups):
        factor = rng.choice((1.0, 2.0, 0.5))
        for d in rng.sample(docs, rng.randint(min(2, len(docs)), len(docs))):
            rows.append((jg, f"s{k}", d, hidden[d] * factor))
    return rows


def random_prefs(rng: random.Random, topics: list[str], max_docs: int) -> dict[str, list[Row]]:
    out: dict[str, list[Row]] = {}
    for t in topics:
        pool = [f"{t}-D{i:02d}" if i % 7 != 3 else f"{t}#D{i:02d}" for i in range(max_docs)]
        rows: list[Row] = []
        for jg in rng.sample(["u1", "u2", "10", "9", "0"], rng.randint(1, 4)):
            docs = rng.sample(pool, rng.randint(1, max_docs))
            rows += _group(rng, jg, docs, rng.choice((1, 1, 2, 3)))
        out[t] = rows
    return out


def shaped_prefs(rng: random.Random) -> dict[str, list[Row]]:
    """The cases of trec_eval's prefs.test, by kind, then random topics."""
    out: dict[str, list[Row]] = {
        "1.one": [("0", "0", "A", 1.0), ("0", "0", "B", 0.0)],
        "2.same-level": [("0", "0", "A", 1.0), ("0", "0", "B", 1.0), ("0", "0", "C", 1.0)],
        "3.no-relevant": [("0", "0", "A", 0.0), ("0", "0", "B", 0.0)],
        "4.single": [("0", "0", "B", 1.0)],
        "5.twice": [("0", s, d, v) for s in ("0", "1") for d, v in (("A", 1.0), ("B", 0.0))],
        "6.chain": [
            ("0", "0", "A", 5.0),
            ("0", "0", "B", 9.0),
            ("0", "0", "C", 4.0),
            ("0", "0", "E", 6.0),
            ("0", "1", "C", 7.0),
            ("0", "1", "F", 6.0),
            ("0", "1", "G", 1.0),
        ],
        "7.mixed": [
            *_group(rng, "0", list("ABCDEFG"), 2),
            *_group(rng, "1", list("ABCDEF"), 1),
            *_group(rng, "2", list("CDEFGH"), 1),
        ],
    }
    out.update(random_prefs(rng, ["8", "9.big", "10"], 14))
    out.update(random_prefs(rng, ["11.large"], 60))
    return out


def prefs_lines(prefs: dict[str, list[Row]], rng: random.Random) -> list[str]:
    lines = [f"{t} {jg} {s} {d} {v:g}" for t, rows in prefs.items() for jg, s, d, v in rows]
    rng.shuffle(lines)
    return lines


def run_lines(
    prefs: dict[str, list[Row]], rng: random.Random, skip: tuple[str, ...] = ()
) -> list[str]:
    lines: list[str] = []
    for t, rows in prefs.items():
        if t in skip:
            continue
        judged = sorted({d for _, _, d, _ in rows})
        docs = rng.sample(judged, rng.randint(0, len(judged))) + [f"{t}-X{i}" for i in range(3)]
        for rank, d in enumerate(docs):
            lines.append(f"{t}\tQ0\t{d}\t{rank}\t{rng.randint(0, 8) / 4:.2f}\tprun")
    rng.shuffle(lines)
    return lines


def with_comments(lines: list[str]) -> list[str]:
    out = ["# a comment first"]
    for i, line in enumerate(lines):
        out.append(line)
        if i % 11 == 4 and i < len(lines) - 1:
            out.append(f"# comment {i} with five words")
    return out


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("prefs")
    coll = _make_collection(tmp)
    rng = random.Random(20261224)
    prefs = shaped_prefs(rng)
    lines = prefs_lines(prefs, rng)
    f = dict(coll.files)
    f["prefs"] = _write(tmp / "prefs", lines)
    f["prefs.comments"] = _write(tmp / "prefs.comments", with_comments(lines))
    f["prefs.run"] = _write(tmp / "prefs.run", run_lines(prefs, rng))
    f["prefs.run.missing"] = _write(
        tmp / "prefs.run.missing", run_lines(prefs, rng, skip=("2.same-level", "9.big"))
    )
    f["zscores"] = _write(tmp / "zscores", _zscores(f["qrels"], f["run"], ["-m", "all_trec"], rng))
    f["zscores.prefs"] = _write(
        tmp / "zscores.prefs",
        _zscores(f["prefs"], f["prefs.run"], ["-m", "all_prefs", "-R", "prefs"], rng),
    )
    f["zscores.jg"] = _write(
        tmp / "zscores.jg",
        _zscores(f["qrels.jg"], f["run"], ["-m", "qrels_jg", "-R", "qrels_jg"], rng),
    )
    return f


def _zscores(qrels: Path, run: Path, flags: list[str], rng: random.Random) -> list[str]:
    """A mean and deviation for every (topic, measure) our output prints, but a few; some
    deviations 0 (with the mean at 0, which some values equal); a qid not evaluated; a last
    line above every qid and measure."""
    printed = ours(["-q", *flags], qrels, run).splitlines()
    topics = sorted({line.split("\t")[1] for line in printed} - {"all"})
    names = sorted({line.split("\t")[0].strip() for line in printed} - {"runid"})
    out = []
    for t in topics:
        for name in names:
            roll = rng.random()
            if roll < 0.03:
                continue  # missing: -1000000
            if roll < 0.1:
                out.append(f"{t} {name} 0 0")
                continue
            out.append(f"{t} {name} {rng.uniform(-1, 100):.4f} {rng.uniform(0.01, 50):.4f}")
    out.append("0-not-evaluated map 0.5 0.1")
    rng.shuffle(out)
    return [*out, "~~~ ~~~ 0 1"]


QUICKTEST = [
    ("prefs-q", ["-m", "all_prefs", "-q", "-R", "prefs"], "prefs", "prefs.run"),
    ("prefs.comments-q", ["-m", "all_prefs", "-q", "-R", "prefs"], "prefs.comments", "prefs.run"),
    ("qrels_prefs-q", ["-m", "all_prefs", "-q", "-R", "qrels_prefs"], "qrels", "run"),
    ("all_trec-q-Z", ["-q", "-m", "all_trec", "-Z", "{zscores}"], "qrels", "run"),
]
MORE = [
    ("prefs", ["-m", "all_prefs", "-R", "prefs"], "prefs", "prefs.run"),
    ("prefs-nickname-q", ["-m", "prefs", "-q", "-R", "prefs"], "prefs", "prefs.run"),
    ("prefs-qc", ["-m", "all_prefs", "-q", "-c", "-R", "prefs"], "prefs", "prefs.run.missing"),
    ("prefs-qM3", ["-m", "all_prefs", "-q", "-M3", "-R", "prefs"], "prefs", "prefs.run"),
    ("prefs-n", ["-m", "all_prefs", "-q", "-n", "-R", "prefs"], "prefs", "prefs.run"),
    ("qrels_prefs-3groups-q", ["-m", "all_prefs", "-q", "-R", "qrels_prefs"], "qrels.jg", "run"),
    (
        "qrels_prefs-qcM100",
        ["-m", "all_prefs", "-q", "-c", "-M100", "-R", "qrels_prefs"],
        "qrels",
        "run.trunc",
    ),
    ("all_trec-Z", ["-m", "all_trec", "-Z", "{zscores}"], "qrels", "run"),
    ("all_trec-qc-Z", ["-q", "-c", "-m", "all_trec", "-Z", "{zscores}"], "qrels", "run.trunc"),
    ("official-qn-Z", ["-q", "-n", "-Z", "{zscores}"], "qrels", "run"),
    (
        "qrels_jg-q-Z",
        ["-m", "qrels_jg", "-q", "-R", "qrels_jg", "-Z", "{zscores.jg}"],
        "qrels.jg",
        "run",
    ),
    (
        "prefs-q-Z",
        ["-m", "all_prefs", "-q", "-R", "prefs", "-Z", "{zscores.prefs}"],
        "prefs",
        "prefs.run",
    ),
]


def _flags(flags: list[str], files: dict[str, Path]) -> list[str]:
    return [str(files[f[1:-1]]) if f.startswith("{") else f for f in flags]


@needs_binary
@pytest.mark.parametrize(
    ("name", "flags", "qrels", "run"), QUICKTEST + MORE, ids=[c[0] for c in QUICKTEST + MORE]
)
def test_matches_trec_eval_binary(
    name: str, flags: list[str], qrels: str, run: str, files: dict[str, Path]
) -> None:
    args = _flags(flags, files)
    expected = binary(args, files[qrels], files[run])
    got = ours(args, files[qrels], files[run])
    assert got.splitlines() == expected.splitlines()
    assert got == expected


def test_inputs_are_shaped_like_trec_evals(files: dict[str, Path]) -> None:
    """Groups of one and of several sub-groups in one topic, several groups per topic, real
    levels, comments, a run missing topics, z-scores with zero deviations and gaps."""
    lines = files["prefs"].read_text().splitlines()
    mixed = {tuple(line.split()[1:3]) for line in lines if line.startswith("7.mixed ")}
    assert {("0", "s0"), ("0", "s1"), ("1", "0"), ("2", "0")} <= mixed
    assert any(float(line.split()[4]) % 1 for line in lines)
    assert "# comment" in files["prefs.comments"].read_text()
    assert "2.same-level" not in files["prefs.run.missing"].read_text()
    z = files["zscores"].read_text()
    assert " 0 0\n" in z and "0-not-evaluated" in z


@needs_binary
@pytest.mark.parametrize("seed", range(25))
def test_random_prefs_match_trec_eval_binary(seed: int, tmp_path: Path) -> None:
    rng = random.Random(seed)
    prefs = random_prefs(rng, ["1", "2", "3"][: rng.randint(1, 3)], rng.randint(2, 12))
    p = _write(tmp_path / "prefs", prefs_lines(prefs, rng))
    r = _write(tmp_path / "run", run_lines(prefs, rng))
    flags = ["-q", "-m", "all_prefs", "-R", "prefs"]
    if rng.random() < 0.3:
        flags.append(f"-M{rng.randint(1, 6)}")
    assert ours(flags, p, r) == binary(flags, p, r)
