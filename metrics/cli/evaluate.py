"""``python -m metrics evaluate``: runs against qrels (trec_eval's output, TREC, CSV or JSON), with
trec_eval's ``-R qrels_jg`` and ``-R prefs`` forms and ``-Z``; the CLI's exit codes."""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections.abc import Iterator
from typing import Any, TextIO

from metrics.cli._read import add_line_limit, line_limits, read_qrels_any, read_run_said
from metrics.cli.evaluate_sampled import parse_gains, run_sampled, sampled_asked
from metrics.evaluation.evaluator import Evaluator
from metrics.evaluation.results import EvaluationResult
from metrics.evaluation.sampled import sampled_warnings
from metrics.evaluation.zscores import ZScores, read_zscores, zscore_jg, zscore_result
from metrics.io import Run
from metrics.io.sampled import SampledQrels, has_unsampled, sampled_from_qrels
from metrics.measures.names import (
    Measure,
    UnknownMeasureError,
    expand_groups,
    parse_measure,
    parse_measures,
    trec_eval_selection,
    trec_sort_key,
)
from metrics.measures.registry import TREC_ORDER

EXIT_OK = 0


EXIT_USAGE = 2


EXIT_INPUT = 3


EXIT_MEASURE = 4


DEFAULT_MEASURES = ["P@10", "R@100", "nDCG@10", "AP", "RR", "Rprec", "Bpref", "NumRel", "NumRet"]


def _add_eval_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("qrels", help="qrels file (qid iter docid grade; plain or gzip)")
    p.add_argument(
        "-m",
        "--measure",
        action="append",
        dest="measures",
        metavar="MEASURE",
        help="measure, ir_measures or trec_eval style (nDCG@10, ndcg_cut_10, P.5,10); repeatable",
    )
    p.add_argument(
        "--compat",
        choices=("trec_eval", "sample_eval"),
        default=None,
        help="reproduce trec_eval 10.0 exactly, or NIST's sample_eval.pl on sampled qrels "
        "(default: the honest mode)",
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help="refuse a measure of complete qrels on sampled qrels (default: a warning naming "
        "the inferred measure to use)",
    )
    p.add_argument(
        "-G",
        "--gains",
        type=parse_gains,
        default=None,
        metavar="MAP",
        help="sampled qrels: grade=gain,... before the inferred measures (sample_eval.pl -G)",
    )
    p.add_argument(
        "-c",
        "--complete",
        action="store_true",
        help="trec_eval mode: average over all qrels queries, missing ones scoring 0",
    )
    p.add_argument(
        "-l", "--level", type=int, default=1, help="relevance level: relevant = grade >= LEVEL"
    )
    p.add_argument("--average", choices=("macro", "micro"), default="macro")
    p.add_argument(
        "--ci",
        choices=("bootstrap", "t", "none"),
        default="bootstrap",
        help="confidence interval method (default: bootstrap over queries)",
    )
    p.add_argument("--ci-level", type=float, default=0.95)
    p.add_argument("--seed", type=int, default=0, help="bootstrap / randomization seed")
    p.add_argument(
        "-M",
        "--depth",
        type=int,
        default=None,
        metavar="N",
        help="use only the first N documents of each query (trec_eval -M)",
    )
    p.add_argument(
        "-J",
        "--judged-only",
        action="store_true",
        help="remove unjudged documents before evaluating (trec_eval -J; biased, see the guide)",
    )
    p.add_argument(
        "-N",
        "--num-docs",
        type=int,
        default=None,
        metavar="N",
        help="documents in the collection, for utility (trec_eval -N)",
    )
    add_line_limit(p)


def register_evaluate(subparsers: Any) -> None:
    """Add ``evaluate``."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "evaluate", help="evaluate runs against qrels (trec_eval-compatible output available)"
    )
    _add_eval_options(p)
    p.add_argument("runs", nargs="+", metavar="RUN", help="run file(s) (plain or gzip)")
    p.add_argument("-q", "--per-query", action="store_true", help="also print per-query values")
    p.add_argument(
        "-n", "--no-summary", action="store_true", help="no summary lines (trec_eval -n)"
    )
    p.add_argument(
        "-R",
        "--qrels-format",
        choices=("qrels", "qrels_jg", "prefs", "qrels_prefs", "sampled", "prels"),
        default="qrels",
        help="sampled: a sample of the pool judged (sample_eval.pl's 'qid iter docid stratum "
        "grade', or trec_eval's 'qid iter docid grade' with -1 for pooled, not sampled; "
        "detected from five columns or an inferred measure such as xinfAP, iP@10); "
        "prels: the Million Query track's 'topic docid grade method probability', for statAP; "
        "qrels_jg: the second column names a judgment group (trec_eval -R qrels_jg); "
        "prefs: preference judgments (qid jg jsg docno rel_level); qrels_prefs: qrels read as "
        "preferences; both with the prefs_* measures (-m all_prefs)",
    )
    p.add_argument(
        "-Z",
        "--zscores",
        metavar="FILE",
        default=None,
        help="print z-scores: (value - mean) / stddev, from FILE's 'qid measure mean stddev' "
        "lines (trec_eval -Z)",
    )
    p.add_argument("--format", choices=("trec", "json", "csv"), default="trec")
    p.set_defaults(func=_cmd_evaluate)


def _evaluator(
    args: argparse.Namespace, measures: list[str], *, intervals: bool = True
) -> tuple[Evaluator, list[Measure]]:
    parsed = parse_measures(measures)
    qrels = read_qrels_any(args.qrels, line_limits(args))
    if has_unsampled(qrels):  # trec_eval's -1: a sample of the pool was judged
        _say_unsampled(sampled_from_qrels(qrels), parsed, strict=args.strict)
    ev = Evaluator(
        qrels,
        parsed,
        compat=args.compat,
        relevance_level=args.level,
        complete=args.complete,
        average=args.average,
        ci=None if args.ci == "none" or not intervals else args.ci,
        ci_level=args.ci_level,
        seed=args.seed,
        depth=args.depth,
        judged_only=args.judged_only,
        num_docs=args.num_docs,
    )
    return ev, parsed


def _say_unsampled(qrels: SampledQrels, measures: list[Measure], *, strict: bool) -> None:
    """Warn (or refuse, ``--strict``) measures that read qrels' -1 grades as unjudged."""
    warnings = sampled_warnings(qrels, measures)
    if warnings and strict:
        raise UnknownMeasureError("--strict: " + "; ".join(warnings))
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)


def _display_names(texts: list[str]) -> dict[str, str]:
    """Canonical measure name -> the spelling to print (trec_eval's when asked that way)."""
    out: dict[str, str] = {}
    for text in expand_groups(texts):
        if _label_kind(text):
            continue
        for m in parse_measures([text]):
            trec_style = "@" not in text and text.strip() != m.name and m.trec_name is not None
            out.setdefault(m.name, m.trec_name if trec_style and m.trec_name else m.name)
    return out


def _label_kind(text: str) -> str | None:
    """ "runid" and "relstring" (``relstring.20``): output lines that are not measures."""
    root = text.strip().split(".", 1)[0].split("_", 1)[0] if text.strip() else ""
    if text.strip() == "runid":
        return "runid"
    if root == "relstring" and "@" not in text:
        return "relstring"
    return None


def _relstring_depths(texts: list[str], trec_mode: bool = False) -> list[tuple[str, int]]:
    """(label, depth) of each ``relstring`` asked (trec_eval: ``relstring.20``, default 10)."""
    out: list[tuple[str, int]] = []
    for text in expand_groups(texts):
        if _label_kind(text) != "relstring":
            continue
        rest = text.strip()[len("relstring") :].lstrip("._")
        try:
            depth = int(float(rest)) if rest else 10
        except ValueError:
            raise UnknownMeasureError(
                f"invalid measure {text!r} (relstring takes a depth, e.g. relstring.20)"
            ) from None
        out.append((f"relstring_{rest}" if rest else "relstring", depth))
    out = list(dict.fromkeys(out))
    if trec_mode:
        # trec_eval has one relstring, its depth the first one given (meas_init.c takes the
        # first ``-m relstring.N``): ``-m all_trec -m relstring.20`` prints relstring_20 alone
        given = [entry for entry in out if entry[0] != "relstring"]
        return given[:1] or out[:1]
    return out


def _relstrings(ev: Evaluator, run: Run, depth: int) -> dict[str, str]:
    """trec_eval's relstring per query: the grade of each of the first ``depth`` documents
    (``-`` not in the qrels, ``.`` a negative grade, ``>`` above 9). trec_eval's form_res_rels.c
    maps every negative qrels grade to RELVALUE_UNJUDGED, which m_relstring.c prints ``.``."""
    names, r = ev.rows(run)
    out: dict[str, str] = {}
    grades = r.grade.tolist()
    pooled = r.pooled.tolist()
    offsets = r.offsets.tolist()
    for i, qid in enumerate(names):
        chars = []
        for row in range(offsets[i], min(offsets[i + 1], offsets[i] + depth)):
            g = grades[row]
            if not pooled[row]:
                chars.append("-")
            elif g > 9:
                chars.append(">")
            elif g >= 0:
                chars.append(str(g))
            else:
                chars.append(".")
        out[qid] = "".join(chars)
    return out


def _iter_runs(args: argparse.Namespace) -> Iterator[tuple[str, Run]]:
    """(tag, run) for each of ``args.runs``, read when asked for: a caller that evaluates each
    run before the next is read holds one run in memory, not all of them."""
    seen: dict[str, int] = {}
    for path in args.runs:
        run = read_run_said(path, line_limits(args))
        tag = run.tag or path
        seen[tag] = seen.get(tag, 0) + 1
        if seen[tag] > 1:  # the same tag twice: keep labels unambiguous
            tag = f"{tag}#{seen[tag]}"
        yield tag, run


def _cmd_evaluate(args: argparse.Namespace, out: TextIO) -> int:
    trec_mode = args.compat == "trec_eval"
    # trec_eval's default is its "official" set; ours names what an honest report needs
    texts = args.measures or (["official"] if trec_mode else DEFAULT_MEASURES)
    if sampled_asked(args, args.measures or []):
        if args.zscores or args.judged_only or args.complete:
            raise ValueError("-Z, -J and -c are not available on sampled qrels")
        return run_sampled(args, args.measures, out, _iter_runs(args))
    zscores = _zscores(args)
    if args.qrels_format == "qrels_jg":
        return _cmd_evaluate_jg(args, texts, out, zscores)
    if args.qrels_format in ("prefs", "qrels_prefs"):
        return _cmd_evaluate_prefs(args, zscores, out)
    if trec_mode:  # each trec_eval measure once, with the first parameters given for it
        texts = trec_eval_selection(texts)
    measures = [t for t in expand_groups(texts) if not _label_kind(t)]
    relstrings = _relstring_depths(texts, trec_mode)
    runid = trec_mode and "runid" in expand_groups(texts)
    if not measures and not relstrings:
        raise UnknownMeasureError("no measures requested (runid alone labels nothing)")
    # trec lines have no place for intervals: compute them only for json and csv, which print them
    ev, _ = _evaluator(args, measures or ["NumQ"], intervals=args.format != "trec")
    # each run is evaluated as soon as it is read, then dropped: one run in memory at a time
    results: list[tuple[str, EvaluationResult]] = []
    strings: dict[str, list[tuple[str, dict[str, str]]]] = {}
    for tag, run in _iter_runs(args):
        res = ev.evaluate(run)
        if zscores is not None:
            res = zscore_result(res, zscores, _display_names(measures))
        results.append((tag, res))
        if relstrings and args.per_query and args.format == "trec":
            strings[tag] = [(label, _relstrings(ev, run, d)) for label, d in relstrings]
    if args.format == "json":
        doc = {"runs": [{**r.to_dict(per_query=args.per_query), "run": t} for t, r in results]}
        json.dump(doc, out, indent=2)
        out.write("\n")
    elif args.format == "csv":
        _write_csv(results, out, per_query=args.per_query)
    else:
        names = _display_names(measures)
        # RBP is graded, RBP(rel=1) binary (ir_measures' names): the trec lines cannot say it
        said = [f"# {names.get(m.name, m.name)}: {m.relevance}" for m in ev.measures if m.relevance]
        if said:
            print("\n".join(said), file=sys.stderr)
        for tag, res in results:
            if res.mode == "honest" or res.excluded:
                _summary(tag, res, ci_asked=args.ci != "none")
            if trec_mode:
                _write_trec_eval(
                    tag,
                    res,
                    names,
                    out,
                    per_query=args.per_query,
                    summary=not args.no_summary,
                    runid=runid,
                    strings=strings.get(tag, []),
                    shown=bool(measures),
                    zscores=zscores is not None,
                )
            else:
                _write_trec(tag, res, names, out, per_query=args.per_query, runid=len(results) > 1)
    return EXIT_OK


def _write_trec_eval(
    tag: str,
    res: EvaluationResult,
    names: dict[str, str],
    out: TextIO,
    *,
    per_query: bool,
    summary: bool,
    runid: bool,
    strings: list[tuple[str, dict[str, str]]],
    shown: bool,
    zscores: bool = False,
) -> None:
    """trec_eval's output, byte for byte: measures in its table's order with cutoffs ascending
    (whatever order they were asked in), per-query lines first (queries in byte order, measures
    trec_eval prints per query only), then ``runid`` if asked and the summary. ``zscores``
    (``-Z``): every value ``Z`` + the name padded to 22, ``%6.4f`` (counts too)."""
    measures = sorted((parse_measure(n) for n in res.measures) if shown else [], key=trec_sort_key)
    label = {m.name: names.get(m.name, m.name) for m in measures}
    if zscores:
        label = {k: f"Z{v:<22}" for k, v in label.items()}

    def fmt(value: float, count: bool) -> str:
        return f"{value:6.4f}" if zscores else _fmt(value, count)

    rows: list[tuple[str, str, str]] = []
    if per_query:
        # relstring (a text per query) goes where trec_eval's table puts it
        at = TREC_ORDER.index("relstring")
        before = [m for m in measures if trec_sort_key(m)[0] < at]
        after = measures[len(before) :]
        for qid in sorted(res.queries, key=lambda q: q.encode()):
            for m in before:
                if m.spec.per_query:
                    rows.append((label[m.name], qid, fmt(res.per_query[m.name][qid], m.is_count)))
            for name, values in strings:
                if qid in values:
                    rows.append((name, qid, f"'{values[qid]}'"))
            for m in after:
                if m.spec.per_query:
                    rows.append((label[m.name], qid, fmt(res.per_query[m.name][qid], m.is_count)))
    if summary:
        if runid:
            rows.append(("runid", "all", tag))
        for m in measures:
            rows.append((label[m.name], "all", fmt(res.aggregates[m.name].value, m.is_count)))
    out.writelines(f"{a:<22}\t{b}\t{c}\n" for a, b, c in rows)


def _summary(tag: str, res: EvaluationResult, *, ci_asked: bool = False) -> None:
    if res.ci_method:
        ci = f"{res.ci_level:.0%} {res.ci_method} CI"
    else:
        ci = "CIs with --format json|csv" if ci_asked else "no CI"
    lines = [f"# {tag}: {res.mode} mode, {res.average} average, {ci}, {len(res.queries)} queries"]
    lines += [f"# {tag}: {s}" for s in res.excluded_summary]
    print("\n".join(lines), file=sys.stderr)


def _fmt(value: float, count: bool) -> str:
    if value != value:  # NaN: no query evaluated
        return "nan"
    return str(round(value)) if count else f"{value:.4f}"


def _write_trec(
    tag: str,
    res: EvaluationResult,
    names: dict[str, str],
    out: TextIO,
    *,
    per_query: bool,
    runid: bool,
) -> None:
    rows: list[tuple[str, str, str]] = []
    measures = [parse_measure(n) for n in res.measures]
    extra: list[tuple[str, Measure]] = []
    for m in measures:
        for comp in res.companions.get(m.name, {}).values():
            if comp not in res.measures and comp not in [e for e, _ in extra]:
                extra.append((comp, parse_measure(comp)))
    shown = [(names.get(m.name, m.name), m) for m in measures] + extra
    if per_query:
        for qid in sorted(res.queries, key=lambda q: q.encode()):
            for label, m in shown:
                rows.append((label, qid, _fmt(res.per_query[m.name][qid], m.is_count)))
    if runid:
        rows.append(("runid", "all", tag))
    for label, m in shown:
        rows.append((label, "all", _fmt(res.aggregates[m.name].value, m.is_count)))
    for m in measures:
        for treatment in ("condensed", "upper"):
            t = res.treatments.get(m.name, {}).get(treatment)
            if t is not None:
                label = f"{names.get(m.name, m.name)}:{treatment}"
                rows.append((label, "all", _fmt(t.value, False)))
    out.writelines(f"{a:<22}\t{b}\t{c}\n" for a, b, c in rows)


CSV_FIELDS = [
    "run",
    "mode",
    "average",
    "measure",
    "treatment",
    "query",
    "value",
    "ci_low",
    "ci_high",
    "ci_method",
    "n_queries",
    "note",
]


def _write_csv(
    results: list[tuple[str, EvaluationResult]], out: TextIO, *, per_query: bool
) -> None:
    w = csv.DictWriter(out, fieldnames=CSV_FIELDS, lineterminator="\n")
    w.writeheader()
    for tag, res in results:
        base = {"run": tag, "mode": res.mode, "average": res.average}
        owners: dict[str, list[str]] = {}
        for owner, comps in res.companions.items():
            for role, name in comps.items():
                owners.setdefault(name, []).append(f"{role} of {owner}")
        for name, agg in res.aggregates.items():
            relevance = parse_measure(name).relevance
            note = "; ".join(owners.get(name, []) + ([relevance] if relevance else []))
            w.writerow({**base, **agg.to_dict(), "measure": name, "query": "all", "note": note})
            for treatment, t in res.treatments.get(name, {}).items():
                w.writerow(
                    {**base, **t.to_dict(), "measure": name, "treatment": treatment, "query": "all"}
                )
        if per_query:
            for name, values in res.per_query.items():
                for qid, v in values.items():
                    w.writerow({**base, "measure": name, "query": qid, "value": v})
        for e in res.excluded:
            w.writerow({**base, "measure": "excluded", "query": e.qid, "note": e.reason})


def _cmd_evaluate_jg(
    args: argparse.Namespace, texts: list[str], out: TextIO, zscores: ZScores | None = None
) -> int:
    """``-R qrels_jg``: trec_eval's judgment-group measures (map_avgjg, P_avgjg, ...)."""
    from metrics.evaluation.judgment_groups import evaluate_jg, format_trec, read_qrels_jg

    if args.compat != "trec_eval" or args.format != "trec":
        raise ValueError("-R qrels_jg is trec_eval's: use it with --compat trec_eval --format trec")
    if args.depth is not None or args.judged_only:
        raise ValueError("-M and -J are not available with -R qrels_jg")
    jg = read_qrels_jg(args.qrels, limits=line_limits(args))
    wanted = args.measures or ["qrels_jg"]
    for _tag, run in _iter_runs(args):
        res = evaluate_jg(jg, run, wanted, complete=args.complete, relevance_level=args.level)
        if zscores is not None:
            res = zscore_jg(res, zscores)
        out.write(format_trec(res, run.tag, per_query=args.per_query, zscores=zscores is not None))
    return EXIT_OK


def _zscores(args: argparse.Namespace) -> ZScores | None:
    """``-Z FILE``, read (trec_eval's: trec output only)."""
    if args.zscores is None:
        return None
    if args.compat != "trec_eval" or args.format != "trec":
        raise ValueError("-Z is trec_eval's: use it with --compat trec_eval --format trec")
    return read_zscores(args.zscores, limits=line_limits(args))


def _cmd_evaluate_prefs(args: argparse.Namespace, zscores: ZScores | None, out: TextIO) -> int:
    """``-R prefs`` / ``-R qrels_prefs``: trec_eval's preference measures (prefs_simp, ...)."""
    from metrics.evaluation.prefs import evaluate_prefs, format_trec, read_prefs, zscore_prefs

    flag = f"-R {args.qrels_format}"
    if args.compat != "trec_eval" or args.format != "trec":
        raise ValueError(f"{flag} is trec_eval's: use it with --compat trec_eval --format trec")
    prefs = read_prefs(args.qrels, format=args.qrels_format, limits=line_limits(args))
    wanted = args.measures or ["prefs"]
    for _tag, run in _iter_runs(args):
        res = evaluate_prefs(prefs, run, wanted, complete=args.complete, depth=args.depth)
        if zscores is not None:
            res = zscore_prefs(res, zscores)
        out.write(format_trec(res, run.tag, per_query=args.per_query, summary=not args.no_summary))
    return EXIT_OK
