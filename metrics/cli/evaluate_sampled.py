"""``python -m metrics evaluate`` on sampled qrels (issue 32, point 2).

Reached with ``-R sampled``, with ``--compat sample_eval``, or when the qrels file has
``sample_eval.pl``'s five columns, or an inferred measure is asked (``xinfAP``, ``iP@10``, ...).
The qrels are read into :class:`metrics.io.sampled.SampledQrels` (five columns, or trec_eval's
four with -1 for a pooled document not sampled). Inferred measures come from
:func:`metrics.evaluation.sampled.evaluate_sampled`; measures of complete qrels asked beside them
are evaluated as usual on the trec_eval form of the qrels (-1 kept: unjudged), each with a
warning naming the inferred measure to use, or refused under ``--strict``.

``--compat sample_eval`` prints what ``sample_eval.pl [-q]`` prints, in its format and order
(its measure set is fixed: ``-m`` is refused).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from typing import Any, TextIO

from metrics.evaluation.evaluator import Evaluator
from metrics.evaluation.results import EvaluationResult
from metrics.evaluation.sampled import (
    STATMAP_CAVEAT,
    SampledResult,
    evaluate_prels,
    evaluate_sampled,
    sampled_warnings,
)
from metrics.io.prels import read_prels
from metrics.io.sampled import SampledQrels, read_sampled_qrels
from metrics.measures.names import Measure, UnknownMeasureError, expand_groups, parse_measures
from metrics.measures.sampled_registry import SAMPLE_EVAL_SET, SampledMeasure, parse_sampled

__all__ = ["DEFAULT_SAMPLED", "parse_gains", "run_sampled", "sampled_asked"]

DEFAULT_SAMPLED = ["xinfAP", "infNDCG", "iP@10", "inum_rel", "NumRet"]


def parse_gains(text: str) -> dict[int, int]:
    """``-G 1=3,2=7`` (or space separated): grade -> gain, as ``sample_eval.pl -G``."""
    out: dict[int, int] = {}
    for part in text.replace(",", " ").split():
        grade, eq, gain = part.partition("=")
        try:
            out[int(grade)] = int(gain)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{part!r} is not grade=gain (e.g. -G 1=3,2=7)"
            ) from None
        if not eq:
            raise argparse.ArgumentTypeError(f"{part!r} is not grade=gain")
    return out


def _first_fields(path: str) -> list[bytes]:
    """The first data line of ``path``, split (empty if unreadable: the reader will say why)."""
    from metrics.io.trec import _open_source

    try:
        stream, _, closer = _open_source(path, None)
    except OSError:
        return []
    head = b""
    try:
        while len(head) < 1 << 16 and b"\n" not in head.lstrip():
            more = bytes(stream.read(1 << 16))
            if not more:
                break
            head += more
    finally:
        if closer is not None:
            closer.close()
    for line in head.splitlines():
        fields = line.split()
        if fields and not fields[0].startswith(b"#"):
            return fields
    return []


def sampled_asked(args: argparse.Namespace, texts: list[str]) -> bool:
    """Whether this evaluation is on sampled qrels (see the module docstring)."""
    if args.qrels_format in ("sampled", "prels") or args.compat == "sample_eval":
        return True
    if args.qrels_format != "qrels":
        return False
    first = _first_fields(args.qrels)
    if len(first) == 5 and not _is_int(first[4]):
        raise ValueError(
            f"{args.qrels}: five fields whose last is not a grade: a Million Query prels file "
            "(topic docid grade method probability)? Read it with -R prels"
        )
    if any(_sampled(t, args) for t in expand_groups(texts)):
        return True
    return len(first) == 5


def _is_int(field: bytes) -> bool:
    try:
        int(field)
    except ValueError:
        return False
    return True


def _sampled(text: str, args: argparse.Namespace) -> list[SampledMeasure] | None:
    try:
        return parse_sampled(text, script=args.compat == "sample_eval")
    except ValueError as exc:
        raise UnknownMeasureError(str(exc)) from None


def _split(
    texts: list[str], args: argparse.Namespace
) -> tuple[list[SampledMeasure], list[Measure]]:
    inferred: list[SampledMeasure] = []
    plain: list[str] = []
    for text in expand_groups(texts):
        found = _sampled(text, args)
        if found is None:
            plain.append(text)
        else:
            inferred.extend(found)
    return list(dict.fromkeys(inferred)), parse_measures(plain) if plain else []


def run_sampled(
    args: argparse.Namespace,
    texts: list[str] | None,
    out: TextIO,
    runs: Any,
) -> int:
    """Evaluate ``runs`` ((tag, run) pairs) on the sampled qrels ``args.qrels``."""
    script = args.compat == "sample_eval"
    if script and (texts or args.format != "trec"):
        raise ValueError(
            "--compat sample_eval prints sample_eval.pl's fixed set in its format: "
            "leave out -m and --format"
        )
    if args.compat == "trec_eval":
        raise ValueError(
            "trec_eval reads sampled qrels only for infAP: use --compat sample_eval, or the "
            "honest mode, for the inferred measures"
        )
    if args.qrels_format == "prels":
        return _run_prels(args, texts, out, runs)
    qrels = read_sampled_qrels(args.qrels, source=args.qrels, max_problems=100)
    inferred, plain = _split(list(SAMPLE_EVAL_SET) if script else texts or DEFAULT_SAMPLED, args)
    warnings = sampled_warnings(qrels, plain)
    if warnings and args.strict:
        raise UnknownMeasureError(
            "--strict: " + "; ".join(warnings) + " (leave out --strict to evaluate them anyway)"
        )
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)
    results: Results = []
    ev = _plain_evaluator(args, qrels, plain) if plain else None
    for tag, run in runs:
        res = evaluate_sampled(
            qrels,
            run,
            inferred,
            gains=args.gains,
            ci=None if args.ci == "none" or args.format == "trec" else args.ci,
            ci_level=args.ci_level,
            seed=args.seed,
            statap_interval=True,
        )
        results.append((tag, res, ev.evaluate(run) if ev is not None else None))
    if script:
        for _tag, res, _ in results:
            _write_script(res, out, per_query=args.per_query)
        return 0
    _say_design(qrels)
    _write(args, results, out)
    return 0


Results = list[tuple[str, SampledResult, EvaluationResult | None]]


def _write(args: argparse.Namespace, results: Results, out: TextIO) -> None:
    """The results in ``--format``: json, csv, or our trec lines."""
    if args.format == "json":
        doc = [_json_of(tag, res, plain_res, args.per_query) for tag, res, plain_res in results]
        json.dump({"runs": doc}, out, indent=2)
        out.write("\n")
    elif args.format == "csv":
        _write_csv(results, out, per_query=args.per_query)
    else:
        for tag, res, plain_res in results:
            _write_trec(tag, res, plain_res, out, per_query=args.per_query, label=len(results) > 1)


def _run_prels(args: argparse.Namespace, texts: list[str] | None, out: TextIO, runs: Any) -> int:
    """``-R prels``: statAP per topic and statMAP with the interval of its sampling error."""
    if args.compat is not None:
        raise ValueError("-R prels has no --compat form: statAP is printed in our trec lines")
    wanted = [m.name for m in _split(texts or ["statAP"], args)[0]]
    others = [t for t in expand_groups(texts or []) if _sampled(t, args) is None]
    if others or wanted != ["statAP"]:
        raise UnknownMeasureError(
            "a prels file gives statAP (statMAP over its topics) only: leave out -m, or -m statAP"
        )
    prels = read_prels(args.qrels, source=args.qrels)
    results: Results = [(tag, evaluate_prels(prels, run), None) for tag, run in runs]
    for tag, res, _ in results:
        agg = res.aggregates["statAP"]
        print(
            f"# {tag}: statMAP {agg.value:.4f} over its {agg.n_queries} topics with a sampled "
            f"relevant document, interval [{agg.ci_low:.4f}, {agg.ci_high:.4f}]: {STATMAP_CAVEAT}",
            file=sys.stderr,
        )
    _write(args, results, out)
    return 0


def _plain_evaluator(
    args: argparse.Namespace, qrels: SampledQrels, plain: list[Measure]
) -> Evaluator:
    return Evaluator(
        qrels.to_qrels(),
        plain,
        relevance_level=args.level,
        average=args.average,
        ci=None if args.ci == "none" or args.format == "trec" else args.ci,
        ci_level=args.ci_level,
        seed=args.seed,
        depth=args.depth,
    )


def _say_design(qrels: SampledQrels) -> None:
    parts = [
        f"stratum {s}: {k} of {n} sampled ({k / n:.0%})" if n else f"stratum {s}: empty"
        for s, (n, k) in qrels.totals().items()
    ]
    print(f"# sampled qrels, {len(qrels.topics)} topics; " + "; ".join(parts), file=sys.stderr)


def _fmt(value: float, count: bool) -> str:
    if value != value:
        return "nan"
    return f"{value:.4f}"


def _write_trec(
    tag: str,
    res: SampledResult,
    plain: EvaluationResult | None,
    out: TextIO,
    *,
    per_query: bool,
    label: bool,
) -> None:
    rows: list[tuple[str, str, str]] = []
    if per_query:
        for qid in res.queries:
            for name in res.measures:
                if name in res.per_query:
                    rows.append((name, qid, _fmt(res.per_query[name][qid], False)))
    if label:
        rows.append(("runid", "all", tag))
    for name in res.measures:
        agg = res.aggregates[name]
        count = agg.average == "sum"
        rows.append(
            (
                name,
                "all",
                str(round(agg.value)) if count and name == "NumRet" else _fmt(agg.value, count),
            )
        )
    if plain is not None:
        for name in plain.measures:
            rows.append((name, "all", _fmt(plain.aggregates[name].value, False)))
    out.writelines(f"{a:<22}\t{b}\t{c}\n" for a, b, c in rows)


def _json_of(
    tag: str, res: SampledResult, plain: EvaluationResult | None, per_query: bool
) -> dict[str, Any]:
    doc = {**res.to_dict(per_query=per_query), "run": tag}
    if plain is not None:
        doc["not_inferred"] = plain.to_dict(per_query=per_query)
    return doc


def _write_csv(
    results: list[tuple[str, SampledResult, EvaluationResult | None]],
    out: TextIO,
    *,
    per_query: bool,
) -> None:
    fields = ["run", "mode", "measure", "query", "value", "ci_low", "ci_high", "ci_method"]
    w = csv.DictWriter(out, fieldnames=fields, lineterminator="\n")
    w.writeheader()
    for tag, res, plain in results:
        for name in res.measures:
            agg = res.aggregates[name].to_dict()
            w.writerow(
                {
                    "run": tag,
                    "mode": "sampled",
                    "measure": name,
                    "query": "all",
                    **{k: agg[k] for k in ("value", "ci_low", "ci_high", "ci_method")},
                }
            )
        if plain is not None:
            for name in plain.measures:
                agg = plain.aggregates[name].to_dict()
                w.writerow(
                    {
                        "run": tag,
                        "mode": "not inferred",
                        "measure": name,
                        "query": "all",
                        **{k: agg[k] for k in ("value", "ci_low", "ci_high", "ci_method")},
                    }
                )
        if per_query:
            for name, values in res.per_query.items():
                for qid, v in values.items():
                    w.writerow(
                        {"run": tag, "mode": "sampled", "measure": name, "query": qid, "value": v}
                    )


def _write_script(res: SampledResult, out: TextIO, *, per_query: bool) -> None:
    """``sample_eval.pl [-q]``'s lines: per topic (with ``-q``), then the means and sums."""
    pq, agg = res.per_query, res.aggregates
    ips = [m for m in res.measures if m.startswith("iP@")]
    lines: list[str] = []
    if per_query:
        for q in res.queries:
            lines.append(f"infAP\t\t{q}\t\t{pq['xinfAP'][q]:6.4f}\n")
            lines.append(f"infNDCG\t\t{q}\t\t{pq['infNDCG'][q]:6.4f}\n")
            lines += [f"iP{m[3:]}\t\t{q}\t\t{pq[m][q]:6.4f}\n" for m in ips]
            lines.append(f"inum_rel_ret\t{q}\t{pq['inum_rel_ret'][q]:14.4f}\n")
            lines.append(f"inum_rel\t{q}\t{pq['inum_rel'][q]:14.4f}\n")
            lines.append(f"num_ret\t\t{q}\t{round(pq['NumRet'][q]):9d}\n")
    lines.append(f"infAP\t\tall\t\t{agg['xinfAP'].value:6.4f}\n")
    lines.append(f"infNDCG\t\tall\t\t{agg['infNDCG'].value:6.4f}\n")
    for m in res.measures:
        if m.startswith("iprec@rec"):
            lines.append(f"{m}\tall\t\t{agg[m].value:6.4f}\n")
    lines += [f"iP{m[3:]}\t\tall\t\t{agg[m].value:6.4f}\n" for m in ips]
    lines.append(f"inum_rel_ret\tall\t{agg['inum_rel_ret'].value:14.4f}\n")
    lines.append(f"inum_rel\tall\t{agg['inum_rel'].value:14.4f}\n")
    lines.append(f"num_ret\t\tall\t{round(agg['NumRet'].value):9d}\n")
    out.writelines(lines)
