"""Cross-app sequences: what happens, app by app, when something arrives.

The apps below form layers (core < campaigns < pools < assessments < evaluation); none of them
reaches up into a higher one to "notify" it. When an event touches several apps, the sequence is
one function here, the way Zulip keeps ``zerver/actions/`` above its models:

- ``run_submitted``: store the run (campaigns), then evaluate it against the latest qrels
  version (evaluation, a task after commit).
- ``documents_imported``: store the documents (campaigns), mark pooled documents whose text
  arrived (pools), open their judging slots (assessments).
- ``pool_requested`` / ``pool_built``: record a pool build (pools) and send it to a worker after
  commit; the worker builds the version and queues its never-judged documents for judging
  (assessments) in the build's final transaction.
- ``judgment_recorded``: record an annotator's grade with the item's automatic suggestion
  (assessments, autojudge) and, for the page, lease the next item.
- ``qrels_imported`` / ``qrels_published``: store a qrels version (assessments), then evaluate
  every run against it and compute the default pool-bias report (evaluation, tasks after
  commit).

Each function runs its steps in one transaction, so a failure stores nothing, and records the
tasks that must follow as outbox rows in that transaction (``core.outbox``): they are sent after
commit, so a task never sees uncommitted rows, and ``sweep.py`` sends again any the broker never
got or whose worker died. API views, pages,
management commands and the demo call these, not the single-app services, for these events.
Import them from their modules (``judging.workflows.runs`` ...): this package is an installed
app (for Celery's task discovery), so its ``__init__`` may not import models.
"""
