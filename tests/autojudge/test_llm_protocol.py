"""The chat-completions judge against a local server that speaks the protocol.

No model runs here: tests/autojudge/protocol_server.py answers as a vLLM, llama.cpp or hosted
endpoint would, scripted per request. Backoff sleeps are injected (recorded, not slept), so
only the timeout tests wait for real, and for a 0.2 s client timeout at most.
"""

from __future__ import annotations

import logging
import random
import socket
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import pytest

from judging.autojudge.llm import ChatJudge, EndpointConfig, TokenBucket, Verdict
from judging.autojudge.prompts import UMBRELA, UMBRELA_SYSTEM, render
from tests.autojudge import protocol_server as ps

KEY = "sk-test-abcdefghijklmnop0123456789"


@pytest.fixture
def server() -> Iterator[ps.ProtocolServer]:
    with ps.ProtocolServer(KEY) as s:
        yield s


class Sleeps(list[float]):
    """An injected sleep: records the delays instead of waiting."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def make(
    server: ps.ProtocolServer, *, scale: tuple[int, ...] = (0, 1, 2), **config: Any
) -> tuple[ChatJudge, Sleeps]:
    sleeps = Sleeps()
    options: dict[str, Any] = {"model": "qwen2.5-7b-instruct", "backoff_seconds": 0.5}
    options.update(config)
    options.setdefault("api_key", KEY)
    cfg = EndpointConfig(server.base_url, **options)
    return ChatJudge(cfg, scale=scale, sleep=sleeps, rng=random.Random(7)), sleeps


# --------------------------------------------------------------------------------------------
# What is sent, and an ok answer


def test_request_carries_model_temperature_zero_and_the_umbrela_prompt(server):
    judge, _ = make(server)
    judge.judge("flea life cycle", "A flea lives 20 days to a year.")
    (req,) = server.requests
    assert req.path == "/v1/chat/completions"
    assert req.headers["Authorization"] == f"Bearer {KEY}"
    assert req.body["model"] == "qwen2.5-7b-instruct"
    assert req.body["temperature"] == 0
    assert req.body["max_tokens"] == 100
    assert "seed" not in req.body
    assert req.body["messages"][0] == {"role": "system", "content": UMBRELA_SYSTEM}
    expected = render(UMBRELA, query="flea life cycle", passage="A flea lives 20 days to a year.")
    assert req.prompt == expected
    assert "Query: flea life cycle\nPassage: A flea lives 20 days to a year.\n" in req.prompt


def test_seed_is_sent_when_configured(server):
    judge, _ = make(server, seed=42)
    judge.judge("q", "p")
    assert server.requests[0].body["seed"] == 42


def test_no_key_sends_no_authorization_header(server):
    judge, _ = make(server, api_key="")
    verdict = judge.judge("q", "p")
    assert "Authorization" not in server.requests[0].headers
    assert verdict.status == "error" and verdict.http_status == 401  # this server wants one


def test_ok_answer_is_mapped_to_the_campaign_scale_and_costed(server):
    server.script(ps.ok(3))
    judge, _ = make(server, price_prompt_per_1k=0.5, price_completion_per_1k=1.5)
    verdict = judge.judge("q", "p")
    assert verdict.status == "ok"
    assert verdict.raw_grade == 3
    assert verdict.grade == 2  # scale [0, 1, 2]: UMBRELA 3 -> the top grade
    assert verdict.answer == "##final score: 3"
    assert (verdict.prompt_tokens, verdict.completion_tokens) == (120, 8)
    assert verdict.cost == pytest.approx(120 / 1000 * 0.5 + 8 / 1000 * 1.5)  # 0.072
    assert verdict.attempts == 1 and verdict.error == "" and verdict.usage_reported


def test_umbrela_one_is_not_relevant_on_a_three_grade_scale(server):
    server.script(ps.ok(1), ps.ok(2))
    judge, _ = make(server)
    assert judge.judge("q", "p").grade == 0
    assert judge.judge("q", "p").grade == 1


def test_a_custom_mapping_is_used(server):
    server.script(ps.ok(1))
    sleeps = Sleeps()
    cfg = EndpointConfig(server.base_url, api_key=KEY, model="m")
    judge = ChatJudge(cfg, scale=[0, 1], mapping={0: 0, 1: 1, 2: 1, 3: 1}, sleep=sleeps)
    assert judge.judge("q", "p").grade == 1


def test_content_given_as_parts_is_read(server):
    server.script(ps.Reply(payload=ps.completion([{"type": "text", "text": "##final score: 2"}])))
    judge, _ = make(server)
    assert judge.judge("q", "p").raw_grade == 2


def test_score_left_in_reasoning_content_is_read(server):
    server.script(
        ps.Reply(payload=ps.completion("", reasoning_content="M=2 T=2 ... ##final score: 3"))
    )
    judge, _ = make(server)
    verdict = judge.judge("q", "p")
    assert (verdict.status, verdict.raw_grade) == ("ok", 3)


# --------------------------------------------------------------------------------------------
# Retries and backoff


def test_429_with_retry_after_waits_that_long_then_succeeds(server):
    server.script(ps.status(429, retry_after="3"), ps.ok(2))
    judge, sleeps = make(server)
    verdict = judge.judge("q", "p")
    assert verdict.status == "ok" and verdict.attempts == 2
    assert sleeps == [3.0]  # Retry-After beats the 0.25..0.5 s backoff
    assert server.attempts == 2


def test_retry_after_as_an_http_date(server):
    fixed = datetime(2026, 12, 2, 12, 0, 0, tzinfo=UTC)
    when = format_datetime(fixed + timedelta(seconds=7), usegmt=True)
    server.script(ps.status(429, retry_after=when), ps.ok(2))
    sleeps = Sleeps()
    cfg = EndpointConfig(server.base_url, api_key=KEY, model="m", backoff_seconds=0.1)
    judge = ChatJudge(cfg, scale=[0, 1, 2], sleep=sleeps, now=lambda: fixed)
    assert judge.judge("q", "p").status == "ok"
    assert sleeps == [7.0]


def test_retry_after_is_capped(server):
    server.script(ps.status(429, retry_after="3600"), ps.ok(2))
    judge, sleeps = make(server, max_backoff_seconds=20)
    assert judge.judge("q", "p").status == "ok"
    assert sleeps == [20.0]


@pytest.mark.parametrize("code", [500, 502, 503, 504, 408])
def test_server_errors_are_retried(server, code):
    server.script(ps.status(code), ps.ok(2))
    judge, sleeps = make(server)
    verdict = judge.judge("q", "p")
    assert verdict.status == "ok" and verdict.attempts == 2 and len(sleeps) == 1


def test_backoff_doubles_with_jitter_and_is_capped(server):
    server.script(*[ps.status(503)] * 4, ps.ok(2))
    judge, sleeps = make(server, backoff_seconds=1.0, max_backoff_seconds=3.0)
    verdict = judge.judge("q", "p")
    assert verdict.status == "ok" and verdict.attempts == 5
    # the same draws as the judge's rng: retry k waits min(3, 2**(k-1)) * (0.5 + 0.5 u)
    rng = random.Random(7)
    expected = [min(3.0, 2.0 ** (k - 1)) * (0.5 + 0.5 * rng.random()) for k in range(1, 5)]
    assert sleeps == pytest.approx(expected)
    assert 0.5 <= sleeps[0] < 1.0 and 1.0 <= sleeps[1] < 2.0 and 1.5 <= sleeps[2] < 3.0


def test_gives_up_after_max_retries(server):
    server.responder = lambda _b: ps.status(503, message="overloaded")
    judge, sleeps = make(server, max_retries=2)
    verdict = judge.judge("q", "p")
    assert verdict.status == "error"
    assert verdict.attempts == 3 and server.attempts == 3 and len(sleeps) == 2
    assert verdict.error == "the endpoint failed (503): overloaded; gave up after 3 attempts"
    assert verdict.http_status == 503 and verdict.grade is None


@pytest.mark.parametrize(
    ("code", "message"),
    [
        (400, "the endpoint rejected the request (400): scripted 400"),
        (403, "the endpoint forbids this key or model (403)"),
        (404, "not found (404): check base_url (up to /v1) and the model name: scripted 404"),
        (422, "the endpoint rejected the request (422): scripted 422"),
    ],
)
def test_client_errors_are_not_retried(server, code, message):
    server.script(ps.status(code))
    judge, sleeps = make(server)
    verdict = judge.judge("q", "p")
    assert (verdict.status, verdict.attempts, verdict.error) == ("error", 1, message)
    assert sleeps == [] and server.attempts == 1


def test_a_bad_key_is_401_at_once_with_a_clear_message(server):
    judge, sleeps = make(server, api_key="sk-wrong-key-0000000000")
    verdict = judge.judge("q", "p")
    assert verdict.status == "error" and verdict.attempts == 1 and sleeps == []
    assert verdict.error == "the endpoint refused the key (401)"
    assert server.requests[0].code == 401


def test_a_redirect_is_not_followed(server):
    server.script(ps.redirect("http://elsewhere.example/v1/chat/completions"))
    judge, _ = make(server)
    verdict = judge.judge("q", "p")
    assert verdict.status == "error" and verdict.attempts == 1 and server.attempts == 1
    assert "redirected (307) to http://elsewhere.example" in verdict.error


def test_a_hang_times_out_and_the_retry_succeeds(server):
    server.script(ps.hang(3.0), ps.ok(1))
    judge, sleeps = make(server, timeout_seconds=0.2)
    started = time.monotonic()
    verdict = judge.judge("q", "p")
    assert time.monotonic() - started < 2.0
    assert verdict.status == "ok" and verdict.attempts == 2 and len(sleeps) == 1


def test_hanging_every_time_is_an_error(server):
    server.responder = lambda _b: ps.hang(3.0)
    judge, _ = make(server, timeout_seconds=0.2, max_retries=1)
    verdict = judge.judge("q", "p")
    assert verdict.status == "error" and verdict.attempts == 2
    assert verdict.error == "no answer within 0.2 s; gave up after 2 attempts"


def test_an_unreachable_endpoint_is_retried_then_an_error():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    sleeps = Sleeps()
    cfg = EndpointConfig(f"http://127.0.0.1:{port}/v1", api_key=KEY, model="m", max_retries=2)
    verdict = ChatJudge(cfg, scale=[0, 1], sleep=sleeps).judge("q", "p")
    assert verdict.status == "error" and verdict.attempts == 3 and len(sleeps) == 2
    assert verdict.error.startswith("cannot reach the endpoint (")
    assert verdict.http_status is None


# --------------------------------------------------------------------------------------------
# Malformed answers and refusals


def test_malformed_json_is_retried_once(server):
    server.script(ps.raw(b'{"choices": [ oops'), ps.ok(2))
    judge, _ = make(server)
    verdict = judge.judge("q", "p")
    assert verdict.status == "ok" and verdict.attempts == 2


def test_malformed_twice_is_malformed_not_retried_further(server):
    server.responder = lambda _b: ps.raw(b"<html>Bad gateway</html>")
    judge, _ = make(server, max_retries=4)
    verdict = judge.judge("q", "p")
    assert verdict.status == "malformed" and verdict.attempts == 2 and server.attempts == 2
    assert verdict.error == "the endpoint's answer is not JSON (JSONDecodeError)"


def test_json_without_choices_is_malformed(server):
    server.responder = lambda _b: ps.body({"object": "chat.completion", "usage": {}})
    judge, _ = make(server)
    verdict = judge.judge("q", "p")
    assert verdict.status == "malformed" and verdict.attempts == 2
    assert verdict.error == "the answer has no choices"


def test_an_answer_without_a_score_is_malformed_and_kept(server):
    server.script(ps.no_score("The passage talks about fleas."))
    judge, sleeps = make(server)
    verdict = judge.judge("q", "p")
    assert verdict.status == "malformed" and verdict.attempts == 1 and sleeps == []
    assert verdict.answer == "The passage talks about fleas."
    assert verdict.error == "no '##final score: N' in the answer"
    assert verdict.grade is None and verdict.raw_grade is None


def test_a_score_out_of_range_is_malformed_not_clamped(server):
    server.script(ps.ok("##final score: 7"))
    judge, _ = make(server)
    verdict = judge.judge("q", "p")
    assert verdict.status == "malformed" and verdict.error == "the final score 7 is outside 0..3"


def test_an_answer_cut_at_max_tokens_says_so(server):
    server.script(ps.Reply(payload=ps.completion("Step 1: the intent is", finish_reason="length")))
    judge, _ = make(server, max_tokens=5)
    verdict = judge.judge("q", "p")
    assert verdict.status == "malformed"
    assert verdict.error.endswith("(the answer was cut at max_tokens=5)")


def test_a_refusal_is_refused_not_an_error_and_not_retried(server):
    server.script(ps.refusal("I can't help with that."))
    judge, sleeps = make(server)
    verdict = judge.judge("q", "p")
    assert verdict.status == "refused" and verdict.attempts == 1 and sleeps == []
    assert verdict.answer == "I can't help with that." and verdict.grade is None


def test_content_filter_is_refused(server):
    server.script(ps.content_filter())
    judge, _ = make(server)
    verdict = judge.judge("q", "p")
    assert verdict.status == "refused" and verdict.attempts == 1
    assert verdict.error == "the endpoint's content filter stopped the answer"


def test_a_structured_refusal_field_is_refused(server):
    server.script(ps.Reply(payload=ps.completion(None, refusal="I cannot assess this content.")))
    judge, _ = make(server)
    verdict = judge.judge("q", "p")
    assert verdict.status == "refused" and verdict.answer == "I cannot assess this content."


def test_a_long_answer_is_truncated(server):
    server.script(ps.ok("x" * 5000 + "\n##final score: 1"))
    judge, _ = make(server)
    verdict = judge.judge("q", "p")
    assert verdict.raw_grade == 1 and len(verdict.answer) == 2000 and verdict.answer[-1] == "…"


# --------------------------------------------------------------------------------------------
# Accounting


def test_missing_usage_counts_zero_and_says_so(server, caplog):
    server.script(ps.ok(2, usage=None), ps.ok(2, usage=None))
    judge, _ = make(server, price_prompt_per_1k=1.0)
    with caplog.at_level(logging.WARNING, logger="judging.autojudge.llm"):
        first = judge.judge("q", "p")
        judge.judge("q", "p")
    assert first.status == "ok" and first.prompt_tokens == 0 and first.cost == 0
    assert first.usage_reported is False
    assert judge.totals.without_usage == 2
    warnings = [r.getMessage() for r in caplog.records if "reports no token usage" in r.message]
    assert len(warnings) == 1  # said once, not per pair


def test_tokens_of_every_attempt_are_counted(server):
    # a malformed-but-JSON answer (no choices) still reports usage, then the retry succeeds
    server.script(
        ps.body({"usage": {"prompt_tokens": 100, "completion_tokens": 0}}),
        ps.ok(2, usage={"prompt_tokens": 100, "completion_tokens": 6}),
    )
    judge, _ = make(server, price_completion_per_1k=2.0)
    verdict = judge.judge("q", "p")
    assert (verdict.prompt_tokens, verdict.completion_tokens, verdict.attempts) == (200, 6, 2)
    assert verdict.cost == pytest.approx(6 / 1000 * 2.0)


def test_totals_sum_pairs_requests_tokens_and_statuses(server):
    server.script(
        ps.ok(2),
        ps.status(500),
        ps.ok(0),
        ps.refusal(),
        ps.status(400),
    )
    judge, _ = make(server, price_prompt_per_1k=1.0)
    statuses = [judge.judge("q", "p").status for _ in range(4)]
    assert statuses == ["ok", "ok", "refused", "error"]
    totals = judge.totals
    assert totals.requests == 5  # the 500 was retried
    assert totals.prompt_tokens == 3 * 120 and totals.completion_tokens == 3 * 8
    assert totals.cost == pytest.approx(3 * 0.12)
    assert dict(totals.by_status) == {"ok": 2, "refused": 1, "error": 1}
    assert totals.pairs == 4


# --------------------------------------------------------------------------------------------
# Rate limit


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_token_bucket_spaces_requests_at_the_rate():
    clock, sleeps = FakeClock(), Sleeps()
    bucket = TokenBucket(60, clock=clock, sleep=sleeps)  # one a second, burst 1
    assert [bucket.acquire() for _ in range(3)] == [0.0, 1.0, 2.0]
    assert sleeps == [1.0, 2.0]
    clock.now += 10  # idle: the bucket refills, but only up to its burst
    assert bucket.acquire() == 0.0
    assert bucket.acquire() == 1.0


def test_token_bucket_with_a_burst():
    clock, sleeps = FakeClock(), Sleeps()
    bucket = TokenBucket(30, burst=3, clock=clock, sleep=sleeps)  # one per 2 s
    assert [bucket.acquire() for _ in range(5)] == [0.0, 0.0, 0.0, 2.0, 4.0]


def test_token_bucket_is_thread_safe():
    clock = FakeClock()
    lock = threading.Lock()
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        with lock:
            waits.append(seconds)

    bucket = TokenBucket(120, clock=clock, sleep=sleep)  # one per 0.5 s
    start = threading.Barrier(16)
    got: list[float] = []

    def take() -> None:
        start.wait()
        value = bucket.acquire()
        with lock:
            got.append(value)

    threads = [threading.Thread(target=take) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # every caller got its own slot: no two share one, none is lost
    assert sorted(got) == [0.5 * i for i in range(16)]


def test_judge_takes_a_token_for_every_request_retries_included(server):
    server.script(ps.status(503), ps.ok(2), ps.ok(2))
    sleeps, clock = Sleeps(), FakeClock()
    cfg = EndpointConfig(
        server.base_url, api_key=KEY, model="m", requests_per_minute=6, backoff_seconds=0
    )
    judge = ChatJudge(cfg, scale=[0, 1], sleep=sleeps, clock=clock)
    judge.judge("q", "p")
    judge.judge("q", "p")
    # 3 requests at a frozen clock, 10 s apart; the backoff of 0 s is a sleep too
    assert [s for s in sleeps if s > 0] == [10.0, 20.0]
    assert server.attempts == 3


# --------------------------------------------------------------------------------------------
# Many pairs


def by_passage(body: Any) -> ps.Reply:
    """Answer by the passage in the prompt: 'bad' -> 400, 'refuse' -> refusal, 'gN' -> N."""
    prompt = next(m["content"] for m in body["messages"] if m["role"] == "user")
    passage = prompt.split("Passage: ", 1)[1].split("\n", 1)[0]
    if passage == "bad":
        return ps.status(400)
    if passage == "refuse":
        return ps.refusal()
    return ps.ok(int(passage.removeprefix("g")))


def test_judge_many_skips_cached_keys_and_caches_all_but_errors(server):
    server.responder = by_passage
    judge, _ = make(server, scale=(0, 1, 2, 3))
    cache: dict[Any, Verdict] = {("601", "d0"): Verdict("ok", grade=3, raw_grade=3)}
    seen: list[Any] = []
    pairs = [
        (("601", "d0"), "q", "g3"),
        (("601", "d1"), "q", "g1"),
        (("601", "d2"), "q", "bad"),
        (("601", "d3"), "q", "refuse"),
        (("601", "d1"), "q", "g1"),  # a repeat in the input: judged once
    ]
    out = dict(judge.judge_many(pairs, cache=cache, on_result=lambda k, v: seen.append(k)))
    assert set(out) == {("601", "d1"), ("601", "d2"), ("601", "d3")}
    assert out[("601", "d1")].grade == 1
    assert out[("601", "d2")].status == "error"  # one failing pair stops nothing else
    assert out[("601", "d3")].status == "refused"
    assert seen == [("601", "d1"), ("601", "d2"), ("601", "d3")]
    assert set(cache) == {("601", "d0"), ("601", "d1"), ("601", "d3")}  # the error is not kept
    assert server.attempts == 3 and judge.totals.cached == 2


def test_judge_many_with_workers_judges_every_pair_once(server):
    server.responder = by_passage
    judge, _ = make(server, scale=(0, 1, 2, 3))
    pairs = [(i, "q", f"g{i % 4}") for i in range(40)]
    pairs.insert(7, (99, "q", "bad"))
    out = dict(judge.judge_many(iter(pairs), workers=4))
    assert len(out) == 41 and server.attempts == 41
    assert all(out[i].grade == i % 4 for i in range(40))
    assert out[99].status == "error"
    assert judge.totals.by_status == {"ok": 40, "error": 1}
    assert sorted(r.prompt.split("Passage: ")[1].split("\n")[0] for r in server.requests) == (
        sorted([f"g{i % 4}" for i in range(40)] + ["bad"])
    )


def test_judge_many_reads_pairs_lazily(server):
    server.responder = by_passage
    judge, _ = make(server)
    taken = 0

    def pairs() -> Iterator[tuple[int, str, str]]:
        nonlocal taken
        for i in range(1000):
            taken += 1
            yield i, "q", "g1"

    results = judge.judge_many(pairs(), workers=2)
    next(results)
    assert taken <= 5  # 2 * workers read ahead, not the whole pool
    results.close()


# --------------------------------------------------------------------------------------------
# The key never shows


def test_the_key_never_appears_in_reprs_logs_or_verdicts(server, caplog):
    secret_header = "org-secret-value-123456"
    server.script(
        ps.ok(2),
        ps.status(429, retry_after="0"),
        ps.status(400, message=f"bad request from key {KEY}"),  # a server that echoes the key
        ps.raw(f"not json {KEY}".encode()),
        ps.raw(b"still not json"),
        ps.ok(f"I echo {KEY} ##final score: 1"),
        ps.refusal(f"I can't help with that, {KEY}"),
        ps.hang(2.0),
        ps.ok(2),
    )
    cfg = EndpointConfig(
        server.base_url,
        api_key=KEY,
        model="m",
        timeout_seconds=0.2,
        extra_headers={"X-Api-Token": secret_header, "OpenAI-Organization": "org-1"},
    )
    judge = ChatJudge(cfg, scale=[0, 1, 2], sleep=Sleeps())
    with caplog.at_level(logging.DEBUG):
        verdicts = [judge.judge("q", "p") for _ in range(6)]
        bad = ChatJudge(
            EndpointConfig(server.base_url, api_key="sk-bad-" + KEY, model="m"), scale=[0, 1]
        ).judge("q", "p")
    assert [v.status for v in verdicts] == ["ok", "error", "malformed", "ok", "refused", "ok"]
    assert bad.status == "error"
    # the server saw the key (it is sent), and echoed it back into bodies
    assert server.requests[0].headers["Authorization"] == f"Bearer {KEY}"
    texts = [repr(cfg), str(cfg), repr(judge), repr(judge.totals), caplog.text]
    texts += [repr(v) for v in [*verdicts, bad]]
    for text in texts:
        assert KEY not in text
        assert secret_header not in text
    assert "api_key=***" in repr(cfg)
    assert verdicts[1].error == "the endpoint rejected the request (400): bad request from key ***"
    assert verdicts[3].answer == "I echo *** ##final score: 1"


def test_config_errors_do_not_show_credentials():
    with pytest.raises(ValueError) as info:
        EndpointConfig("https://user:hunter2-secret@api.example/v1", api_key=KEY, model="m")
    assert "hunter2" not in str(info.value) and KEY not in str(info.value)
    with pytest.raises(ValueError, match="http:// or https://"):
        EndpointConfig("ftp://api.example/v1", model="m")
    with pytest.raises(ValueError, match="model"):
        EndpointConfig("http://api.example/v1")


def test_a_template_without_placeholders_is_refused():
    cfg = EndpointConfig("http://127.0.0.1:9/v1", model="m")
    with pytest.raises(ValueError, match=r"\{passage\}"):
        ChatJudge(cfg, scale=[0, 1], template="Query: {query}")


def test_an_unexpected_failure_is_an_error_verdict_with_the_key_scrubbed(
    server, caplog, monkeypatch
):
    judge, _ = make(server)

    def broken(body: bytes) -> Any:
        raise RuntimeError(f"transport bug while sending {KEY}")

    monkeypatch.setattr(judge, "_post", broken)
    with caplog.at_level(logging.DEBUG):
        verdict = judge.judge("q", "p")
    assert verdict.status == "error"
    assert verdict.error == "unexpected RuntimeError: transport bug while sending ***"
    assert KEY not in caplog.text and "transport bug while sending ***" in caplog.text
    assert judge.totals.by_status == {"error": 1}
