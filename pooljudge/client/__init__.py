"""A typed Python client for a Pooljudge service (``docs/guide/client.md``)::

    from pooljudge.client import Client

    client = Client.login("http://127.0.0.1:8000", "researcher", "researcher-demo")
    run = client.submit_run("Demo: newsroom", {"1": {"PJ2439": 9.5, "PJ0839": 8.1}}, tag="bm25")
    print(client.wait_for_evaluation(run).values["P@10"])

Built on ``requests``; it imports nothing of the service (``judging``, ``metrics``, Django), so
it installs and runs wherever a script does.
"""

from pooljudge.client.api import Client
from pooljudge.client.errors import (
    AuthenticationError,
    Conflict,
    EvaluationFailed,
    IntegrityError,
    InvalidInput,
    NotFound,
    PermissionDenied,
    PooljudgeError,
    PooljudgeTimeout,
    Problem,
    RateLimited,
)
from pooljudge.client.types import (
    Campaign,
    CheckResult,
    Chunking,
    Derivation,
    Evaluation,
    GoldenSet,
    ImportSummary,
    Leaderboard,
    LeaderboardRow,
    Lease,
    Me,
    MeasureCheck,
    Passage,
    PoolVersion,
    QrelsVersion,
    Run,
    RunWarning,
)

__all__ = [
    "AuthenticationError",
    "Campaign",
    "CheckResult",
    "Chunking",
    "Client",
    "Conflict",
    "Derivation",
    "Evaluation",
    "EvaluationFailed",
    "GoldenSet",
    "ImportSummary",
    "IntegrityError",
    "InvalidInput",
    "Leaderboard",
    "LeaderboardRow",
    "Lease",
    "Me",
    "MeasureCheck",
    "NotFound",
    "Passage",
    "PermissionDenied",
    "PoolVersion",
    "PooljudgeError",
    "PooljudgeTimeout",
    "Problem",
    "QrelsVersion",
    "RateLimited",
    "Run",
    "RunWarning",
]
