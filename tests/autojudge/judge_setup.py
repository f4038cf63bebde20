"""What the judges' page and API tests share: a pooled campaign, an endpoint configured with a
fake key (which no answer may ever carry), a labeller scripted by document id, label files."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from judging.autojudge import services
from judging.autojudge.models import Judge, JudgeKind

# An endpoint as settings hold it: its address, host and key must never reach an answer.
FAKE_URL = "http://10.9.8.7:8123/v1"
FAKE_HOST = "10.9.8.7:8123"
FAKE_KEY = "sk-fake-key-pages-0042"
ENDPOINTS = {"local-vllm": {"base_url": FAKE_URL, "api_key": FAKE_KEY}}
SECRETS = (FAKE_URL, FAKE_HOST, FAKE_KEY, "10.9.8.7")

# An imported judge's TREC label file over the pool of THREE_TOPICS (d403-4 left out):
# grade 0: d401-3 d401-4 d402-3 d403-1 d403-2 d403-3 (6); grade 1: d401-2 d402-1 d402-2 (3);
# grade 2: d401-1 d402-4 (2): 11 labels.
LABELS = b"""401 0 d401-1 2
401 0 d401-2 1
401 0 d401-3 0
401 0 d401-4 0
402 0 d402-1 1
402 0 d402-2 1
402 0 d402-3 0
402 0 d402-4 2
403 0 d403-1 0
403 0 d403-2 0
403 0 d403-3 0
"""
# People's grades of three pool documents (a human qrels version).
HUMAN = b"401 0 d401-1 2\n401 0 d401-2 0\n402 0 d402-1 1\n"


def assert_no_secret(body: bytes, where: str) -> None:
    leaked = [s for s in SECRETS if s.encode() in body]
    assert not leaked, f"{where} carries {leaked}"


class Scripted:
    """Grades a pair by its document's last digit (mod 3), 100 + 5 tokens and 0.01 each; the
    documents it is told to fail get an endpoint error."""

    def __init__(self, judge: Judge, failing: Sequence[str] = ()) -> None:
        self.failing = set(failing)

    def label(self, pairs: Sequence[tuple[str, str]]) -> Iterable[services.Label]:
        def generate() -> Iterator[services.Label]:
            for q, d in pairs:
                if d in self.failing:
                    yield services.Label(q, d, None, status="error", answer=f"503 at {FAKE_URL}")
                else:
                    yield services.Label(
                        q, d, int(d[-1]) % 3, prompt_tokens=100, completion_tokens=5, cost=0.01
                    )

        return generate()


def chat_judge(campaign: Any, name: str = "umbrela-local") -> Judge:
    return services.judge_create(
        campaign=campaign,
        name=name,
        kind=JudgeKind.OPENAI,
        model="llama-3-8b",
        params={"endpoint": "local-vllm"},
    )


def imported_judge(campaign: Any, name: str = "umbrela-file") -> Judge:
    return services.judge_create(
        campaign=campaign, name=name, kind=JudgeKind.IMPORTED, model="gpt-4o"
    )
