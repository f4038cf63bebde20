"""Reading and writing TREC run and qrels files, and the tables they are read into.

The public interface:

- tables (:mod:`metrics.io.tables`): :class:`Run` and :class:`Qrels`, grouped per query, and
  :class:`RunTable`, a run's columns in file order;
- readers and writers (:mod:`metrics.io.trec`): :func:`read_run`, :func:`read_qrels`,
  :func:`parse_run` (file order, ranks kept), :func:`write_run`, :func:`write_qrels`; a
  :data:`Source` is a path, a binary file object or bytes, gzip or not;
- other layouts (their own modules): JSON runs ``{qid: {docid: score}}``
  (:mod:`metrics.io.jsonrun`), BEIR's qrels TSV (:mod:`metrics.io.beir`), sampled qrels and
  prels (:mod:`metrics.io.sampled`, :mod:`metrics.io.prels`);
- every reader validates the whole file and raises :class:`InvalidInput` listing each
  :class:`Problem` with its line (:mod:`metrics.problems`); :class:`Limits` bounds a line's
  and an id's length (:mod:`metrics.io.limits`: a line is at most :data:`DEFAULT_LINE_BYTES`
  unless the caller says otherwise, :data:`NO_LIMITS` for none); what a reader accepts
  although unusual is a :class:`ReadWarning` whose message is one of :data:`NAN_SCORE`,
  :data:`INF_SCORE`, :data:`EXTRA_FIELDS`.

The fast tokenizer behind the readers is private (:mod:`metrics.io._pieces`,
:mod:`metrics.io._tokenizer`, :mod:`metrics.io._numbers`), as is the plain reference reader the
tests compare it with (:mod:`metrics.io._reference`).
"""

from metrics.io._tokenizer import EXTRA_FIELDS, INF_SCORE, NAN_SCORE
from metrics.io.limits import DEFAULT_LIMITS, DEFAULT_LINE_BYTES, NO_LIMITS, Limits
from metrics.io.tables import Qrels, Run, RunTable
from metrics.io.trec import Source, parse_run, read_qrels, read_run, write_qrels, write_run
from metrics.problems import InvalidInput, Problem, ReadWarning

__all__ = [
    "DEFAULT_LIMITS",
    "DEFAULT_LINE_BYTES",
    "EXTRA_FIELDS",
    "INF_SCORE",
    "NAN_SCORE",
    "NO_LIMITS",
    "InvalidInput",
    "Limits",
    "Problem",
    "Qrels",
    "ReadWarning",
    "Run",
    "RunTable",
    "Source",
    "parse_run",
    "read_qrels",
    "read_run",
    "write_qrels",
    "write_run",
]
