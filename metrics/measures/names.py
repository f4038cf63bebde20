"""Measure names: ir_measures style (``nDCG@10``, ``P(rel=2)@10``) and trec_eval style
(``ndcg_cut_10``, ``ndcg.1=3,2=9``).

Every name parses to a :class:`Measure` (a family, an optional cutoff, and parameters) whose
canonical :attr:`Measure.name` is the ir_measures spelling: ``Family``, ``Family@k``, or
``Family(param=value, ...)@k`` with only the parameters that differ from their defaults, sorted.
Family names are matched case-insensitively. The names come from the registry
(:mod:`metrics.measures.registry`): a family added there is parsed here with no change.

trec_eval style, as its ``-m`` option reads it: ``ROOT`` or ``ROOT.PARAMS`` (and the printed form
``ROOT_PARAMS``), where PARAMS is read as the family declares:

- after its ``trec_cut`` root, cutoffs, comma separated: integers (``P.5,10`` is P@5 and P@10;
  ``P_10``), or reals for a ``cutoff_kind="float"`` family (``iprec_at_recall.0.1,0.25``,
  printed ``_%3.2f`` as trec_eval prints them);
- after its ``trec`` root, for a family with ``trec_raw``: the text is that one parameter
  (``ndcg.1=3,2=9`` gives the gain map, ``utility.2,-1,0,0`` the coefficients), printed verbatim
  after the root, as trec_eval does.

A bare ROOT of a cutoff family stands for trec_eval's default cutoffs (``P`` is P_5 ... P_1000).
Nicknames (:data:`TREC_GROUPS`: ``official``, ``all_trec``, ``set``) expand to their measures in
:func:`parse_measures`; ``runid`` (a label, not a measure) is dropped there. ``all_prefs`` and
``prefs`` expand to the preference measures (the registry's ``PREFS_MEASURES``), which
:mod:`metrics.prefs` evaluates from preference judgments: parsed here, they are an error saying
so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from metrics.measures.grammar import split_name, split_params
from metrics.measures.prefs_registry import PREFS_MEASURES
from metrics.measures.registry import FAMILIES, TREC_ORDER, Family

__all__ = [
    "TREC_GROUPS",
    "Measure",
    "UnknownMeasureError",
    "expand_groups",
    "parse_measure",
    "parse_measures",
    "trec_eval_selection",
    "trec_sort_key",
]

# trec_eval's nicknames (measures.c), in its order. ``runid`` is a line of the output, not a
# measure: :func:`parse_measures` drops it, the CLI prints it.
TREC_GROUPS: dict[str, tuple[str, ...]] = {
    "official": (
        "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
        "bpref", "recip_rank", "iprec_at_recall", "P",
    ),
    "all_trec": (
        "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
        "bpref", "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "unj", "rbp",
        "rbp_resid", "infAP", "gm_bpref", "utility", "11pt_avg", "ndcg", "relative_P",
        "Rprec_mult", "success", "map_cut", "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G",
        "set_P", "set_recall", "set_relative_P", "set_map", "set_F", "num_nonrel_judged_ret",
    ),
    "set": (
        "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P",
        "set_recall", "set_relative_P", "set_map", "set_F",
    ),
    # preference measures: evaluated from preference judgments (-R prefs, -R qrels_prefs)
    "all_prefs": ("runid", "num_q", *PREFS_MEASURES),
    "prefs": ("runid", "num_q", *list(PREFS_MEASURES)[:6]),
}  # fmt: skip
LABELS = ("runid",)

# Lower-cased ir_measures-style spellings (and each family's aliases) -> family.
_IR_ALIASES: dict[str, str] = {f.lower(): f for f in FAMILIES}
_IR_ALIASES.update({a: f.name for f in FAMILIES.values() for a in f.aliases})
# trec_eval roots (lower-cased) -> (family, how the text after the root is read)
_TREC: dict[str, tuple[str, str | None]] = {}
for _f in FAMILIES.values():
    if _f.trec:
        _TREC[_f.trec.lower()] = (_f.name, "raw" if _f.trec_raw else None)
    if _f.trec_cut:
        _TREC[_f.trec_cut.lower()] = (_f.name, "cutoffs")
_TREC_ROOTS = sorted(_TREC, key=len, reverse=True)  # longest first: ndcg_cut before ndcg
_TREC_RANK = {root.lower(): i for i, root in enumerate(TREC_ORDER)}
_SELECTABLE = sorted([*_TREC_ROOTS, "relstring"], key=len, reverse=True)

_IR_BASE = re.compile(
    r"[A-Za-z][A-Za-z0-9_-]*"
)  # a family name of the grammar (metrics.measures.grammar)


class UnknownMeasureError(ValueError):
    """A measure name that is not recognised; the message lists close matches."""


Params = tuple[tuple[str, Any], ...]


@dataclass(frozen=True, order=True)
class Measure:
    """A measure family with an optional cutoff ``k`` and parameters (non-default, sorted).

    ``label`` is trec_eval's printed name when the measure was asked for with trec_eval
    parameters (``ndcg_1=3,2=9``); it takes no part in equality.
    """

    family: str
    cutoff: int | float | None = None
    params: Params = ()
    label: str | None = field(default=None, compare=False)

    @property
    def name(self) -> str:
        """Canonical ir_measures-style name, e.g. ``nDCG@10``, ``P(rel=2)@10``."""
        out = self.family
        if self.params:
            out += "(" + ", ".join(f"{k}={_show(v)}" for k, v in self.params) + ")"
        if self.cutoff is not None:
            out += f"@{_show_cut(self.cutoff)}"
        return out

    @property
    def spec(self) -> Family:
        """The family's registry entry (:mod:`metrics.measures.registry`)."""
        return FAMILIES[self.family]

    @property
    def rel(self) -> int | None:
        """The measure's own relevance level (``P(rel=2)@10``), None for the evaluator's."""
        for k, v in self.params:
            if k == "rel":
                return int(v)
        return None

    @property
    def kwargs(self) -> dict[str, Any]:
        """The family's parameters (defaults filled in) passed to its function; ``rel`` is not
        one of them (the evaluator builds the ranking at that level), but a family graded
        unless ``rel=`` is given (RBP) gets ``binary``, whether it was."""
        given = dict(self.params)
        fam = FAMILIES[self.family]
        out = {p.name: given.get(p.name, p.default) for p in fam.params}
        if fam.graded_unless_rel:
            out["binary"] = self.rel is not None
        return out

    @property
    def relevance(self) -> str | None:
        """How a family graded unless ``rel=`` is given (RBP, as in ir_measures) reads the
        judgments: ``"graded (gain = grade)"`` or ``"binary (relevant: grade >= 1)"``; None for
        the other families."""
        if not FAMILIES[self.family].graded_unless_rel:
            return None
        if self.rel is None:
            return "graded (gain = grade)"
        return f"binary (relevant: grade >= {self.rel})"

    @property
    def trec_name(self) -> str | None:
        """trec_eval's name (``ndcg_cut_10``), or None when trec_eval has no such measure."""
        if self.label is not None:
            return self.label
        fam = FAMILIES[self.family]
        if self.rel is not None:
            return None
        if self.cutoff is None:
            if fam.trec is None:
                return None
            extra = [v for k, v in self.params if k == fam.trec_raw]
            if len(extra) != len(self.params):
                return None
            return f"{fam.trec}_{_show_raw(extra[0])}" if extra else fam.trec
        if not fam.trec_cut or self.params:
            return None
        if fam.cutoff_kind == "float":
            return f"{fam.trec_cut}_{self.cutoff:3.2f}"
        return f"{fam.trec_cut}_{self.cutoff}"

    @property
    def micro_defined(self) -> bool:
        """True when the measure is a ratio of per-query counts (micro-averaging is defined)."""
        return FAMILIES[self.family].micro

    @property
    def is_count(self) -> bool:
        """True for the counts (NumRel, NumRet, ...: aggregated by summing, like trec_eval)."""
        return FAMILIES[self.family].count

    @property
    def is_coverage(self) -> bool:
        """True for the figures that describe the judgments, not effectiveness (Judged@k,
        Unjudged, ceiling@k, ...: the registry's ``coverage`` families)."""
        return FAMILIES[self.family].coverage

    def __str__(self) -> str:
        return self.name


def _show(v: Any) -> str:
    return repr(v) if isinstance(v, str) else _show_cut(v)


def _show_cut(c: int | float) -> str:
    return str(c) if isinstance(c, int) else f"{c:g}"


def _show_raw(v: Any) -> str:
    return v if isinstance(v, str) else _show_cut(v)


def trec_sort_key(m: Measure) -> tuple[int, float, str]:
    """trec_eval's output order: its measure table's order, then cutoffs ascending."""
    fam = FAMILIES[m.family]
    root = (fam.trec if m.cutoff is None else fam.trec_cut) or fam.trec or fam.trec_cut or ""
    rank = _TREC_RANK.get(root.lower(), len(_TREC_RANK))
    return rank, -1.0 if m.cutoff is None else float(m.cutoff), m.name


def _known_spellings() -> list[str]:
    out: list[str] = []
    for f in FAMILIES.values():
        if f.cutoff == "required":
            out.append(f"{f.name}@{_example_cut(f)}")
        else:
            out.append(f.name)
            if f.cutoff == "optional":
                out.append(f"{f.name}@{_example_cut(f)}")
        if f.trec:
            out.append(f.trec)
        if f.trec_cut:
            out.append(f"{f.trec_cut}_{_example_cut(f)}")
    return list(dict.fromkeys(out + list(PREFS_MEASURES) + list(TREC_GROUPS)))


def _example_cut(f: Family) -> str:
    return "0.5" if f.cutoff_kind == "float" else "10"


def _unknown(text: str, why: str = "") -> UnknownMeasureError:
    import difflib  # only for messages: kept out of every reader's start-up

    from metrics.measures.diversity_names import diversity_hint  # alpha_nDCG@20 is computed there

    hint = diversity_hint(text)
    if hint is not None:
        return UnknownMeasureError(hint)
    known = _known_spellings()
    close = difflib.get_close_matches(text.strip(), known, n=4, cutoff=0.5)
    if not close:
        low = {k.lower(): k for k in known}
        close = [low[m] for m in difflib.get_close_matches(text.strip().lower(), list(low), n=4)]
    msg = f"invalid measure {text!r} ({why})" if why else f"unknown measure {text!r}"
    if close:
        msg += f"; close matches: {', '.join(close)}"
    families = ", ".join(
        f"{f.name}@k" if f.cutoff == "required" else f.name for f in FAMILIES.values()
    )
    prefs = ", ".join(PREFS_MEASURES)
    return UnknownMeasureError(
        f"{msg}. Known measures: {families}; from preference judgments (-R prefs): {prefs}"
    )


def _cutoff(text: str, fam: Family, raw: str, *, trec: bool = False) -> int | float:
    raw = raw.strip()
    if trec and fam.cutoff_kind == "int" and re.fullmatch(r"\+?[0-9]+\.[0-9]*", raw):
        raw = raw.lstrip("+").split(".")[0]  # trec_eval reads cutoffs with atol: 23.4 is 23
    if fam.cutoff_kind == "float":
        try:
            value = float(raw)
        except ValueError:
            value = -1.0
        if not (value >= 0.0 and value < float("inf")):
            raise _unknown(text, f"cutoff {raw!r} must be a non-negative number")
        return value
    if not raw.isdigit() or int(raw) < 1:
        raise _unknown(text, f"cutoff {raw!r} must be a positive integer")
    return int(raw)


def _param_value(text: str, raw: str) -> str:
    raw = raw.strip()
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
        return raw[1:-1]
    return raw


def _make(
    text: str,
    family: str,
    cutoff: int | float | None,
    given: dict[str, str] | None = None,
    label: str | None = None,
) -> Measure:
    fam = FAMILIES[family]
    if cutoff is None and fam.cutoff == "required":
        raise _unknown(text, f"{family} needs a cutoff, e.g. {family}@{_example_cut(fam)}")
    if cutoff is not None and fam.cutoff == "none":
        raise _unknown(text, f"{family} takes no cutoff")
    params: dict[str, Any] = {}
    declared = {p.name: p for p in fam.params}
    for key, raw in (given or {}).items():
        if key == "rel":
            if not fam.uses_level:
                raise _unknown(text, f"{family} does not depend on the relevance level")
            if not raw.lstrip("+").isdigit() or int(raw) < 1:
                raise _unknown(text, f"rel={raw!r} must be an integer >= 1")
            params["rel"] = int(raw)
            continue
        if key not in declared:
            names = [p.name for p in fam.params] + (["rel"] if fam.uses_level else [])
            has = f" (it has: {', '.join(names)})" if names else ""
            raise _unknown(text, f"{family} has no parameter {key!r}{has}")
        p = declared[key]
        try:
            value = p.parse(raw)
        except ValueError as exc:
            raise _unknown(text, f"{key}: {exc}") from None
        if value != p.default:
            params[key] = value
    return Measure(family, cutoff, tuple(sorted(params.items())), label)


def expand_groups(names: Iterable[str]) -> list[str]:
    """trec_eval nicknames (``official``, ``all_trec``, ``set``) replaced by their measures."""
    out: list[str] = []
    for text in names:
        out.extend(TREC_GROUPS.get(text.strip(), (text,)))
    return out


def trec_eval_selection(names: Iterable[str]) -> list[str]:
    """The measures trec_eval 10.0 prints for these ``-m`` arguments (nicknames expanded): each
    trec_eval root once, with the parameters of the first ``-m ROOT.PARAMS`` given for it
    (``-m P.5 -m P.10`` is P_5 alone, ``-m P -m P.20`` P_20 alone: meas_init.c takes the first
    match, a bare root only switches the measure on). Other names pass through unchanged."""
    order: list[str] = []
    first: dict[str, str | None] = {}
    for text in expand_groups(names):
        stripped = text.strip()
        low = stripped.lower()
        root = next(
            (r for r in _SELECTABLE if low == r or (low.startswith(r) and low[len(r)] in "._")),
            None,
        )
        if root is None or "@" in stripped or "(" in stripped:
            order.append(text)
            continue
        rest = stripped[len(root) + 1 :] if len(stripped) > len(root) else None
        key = "\0" + root
        if key not in first:
            order.append(key)
            first[key] = None
        if rest and first[key] is None:
            first[key] = stripped[: len(root)] + "." + rest
    return [
        (first[t] or _spelled(t[1:], names)) if t.startswith("\0") else t
        for t in dict.fromkeys(order)
    ]


def _spelled(root: str, names: Iterable[str]) -> str:
    """``root`` as the user or the nickname spelled it (trec_eval's case)."""
    for text in expand_groups(names):
        if text.strip().lower() == root:
            return text.strip()
    return root


def parse_measures(names: Iterable[str]) -> list[Measure]:
    """Parse measure names (either style; trec_eval comma lists, default cutoffs and nicknames
    expand), keeping first-seen order. ``runid`` is skipped (it labels output, see
    :data:`TREC_GROUPS`). Duplicates are dropped. Raises :class:`UnknownMeasureError` (a
    ``ValueError``) naming close matches for an unknown name.
    """
    out: dict[Measure, None] = {}
    for text in expand_groups(names):
        if text.strip() in LABELS:
            continue
        for m in _parse_many(text):
            out.setdefault(m, None)
    return list(out)


def parse_measure(text: str) -> Measure:
    """Parse one measure name, e.g. ``nDCG@10``, ``P(rel=2)@10``, ``ndcg_cut_10``, ``P.10``.

    ir_measures style: ``Family``, ``Family@k`` or ``Family(param=value, ...)@k`` (families and
    their parameters: :data:`metrics.measures.registry.FAMILIES`; case-insensitive; ``rel=`` sets
    the measure's own relevance level). trec_eval style: ``P_k``, ``recall_k``, ``recip_rank``,
    ``map``, ``map_cut_k``, ``Rprec``, ``ndcg``, ``ndcg_cut_k``, ``bpref``, ... (``.`` may
    replace the ``_`` before the parameters).
    """
    many = _parse_many(text)
    if len(many) != 1:
        raise _unknown(text, "names several measures; use parse_measures")
    return many[0]


def _parse_many(text: str) -> list[Measure]:
    m = split_name(text)
    if m is not None and not _IR_BASE.fullmatch(m.base):
        m = None  # not an ir_measures-style family name: perhaps trec_eval's spelling
    if m and (m.params is not None or m.cutoff is not None):
        fam = _IR_ALIASES.get(m.base.lower())
        if fam is not None:
            given: dict[str, str] = {}
            for part in split_params(m.params or ""):
                key, eq, raw = part.partition("=")
                if not eq or not key.strip().isidentifier():
                    raise _unknown(text, f"parameter {part!r} is not name=value")
                given[key.strip()] = _param_value(text, raw)
            spec = FAMILIES[fam]
            cut = None if m.cutoff is None else _cutoff(text, spec, m.cutoff)
            return [_make(text, fam, cut, given)]
        if m.params is not None:
            raise _unknown(text)
    stripped = text.strip()
    low = stripped.lower()
    if stripped in FAMILIES and _TREC.get(low, (stripped,))[0] != stripped:
        # a family's exact name wins over another family's trec_eval root spelled the same
        # but for case: ``RBP`` is ir_measures' RBP, ``rbp`` trec_eval's (RBPTrec)
        return [_make(text, stripped, None)]
    for root in _TREC_ROOTS:
        if low == root:
            fam, how = _TREC[root]
            spec = FAMILIES[fam]
            if how == "cutoffs":  # bare root: trec_eval's default cutoffs
                if not spec.trec_default_cutoffs:
                    raise _unknown(text, f"{spec.trec_cut} needs cutoffs, e.g. {root}.10")
                return [_make(text, fam, c) for c in spec.trec_default_cutoffs]
            return [_make(text, fam, None)]
        if low.startswith(root) and low[len(root)] in "._":
            fam, how = _TREC[root]
            spec = FAMILIES[fam]
            rest = stripped[len(root) + 1 :]
            if how == "raw" and not (rest.isdigit() and spec.cutoff != "none"):
                assert spec.trec_raw is not None
                label = f"{spec.trec}_{rest}"
                return [_make(text, fam, None, {spec.trec_raw: rest}, label)]
            if how == "cutoffs":
                cuts = [c for c in rest.split(",") if c.strip()]
                if cuts:
                    made = [_make(text, fam, _cutoff(text, spec, c, trec=True)) for c in cuts]
                    return sorted(dict.fromkeys(made), key=lambda x: float(x.cutoff or 0))
    if low in _IR_ALIASES:
        return [_make(text, _IR_ALIASES[low], None)]
    legacy = re.match(r"^([a-z][a-z_-]*?)[._]([0-9]+)$", low)  # ``ndcg_10``, ``judged.5``
    if legacy and legacy.group(1) in _IR_ALIASES:
        fam = _IR_ALIASES[legacy.group(1)]
        if FAMILIES[fam].cutoff != "none":
            return [_make(text, fam, _cutoff(text, FAMILIES[fam], legacy.group(2)))]
    if stripped.split(".", 1)[0] in PREFS_MEASURES:
        raise UnknownMeasureError(
            f"{stripped!r} is a preference measure: it is computed from preference judgments, "
            "with --compat trec_eval -R prefs or -R qrels_prefs"
        )
    raise _unknown(text)
