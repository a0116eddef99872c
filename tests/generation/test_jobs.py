"""Batch distractor jobs on the immediate task backend against the local server."""
from __future__ import annotations

import json

from casebook.models import Job
from generation.jobs import run_distractor_job, start_distractor_job

from .conftest import bare_copy


def _bare_questions(game, count: int):
    sources = list(game.questions.filter(kind__in=["objective", "reasoning"]).order_by("position")[:count])
    return [bare_copy(q) for q in sources]


def _distinct_reply(request, n):
    return json.dumps({"distractors": [f"候选{n}甲", f"候选{n}乙", f"候选{n}丙"]}, ensure_ascii=False)


def test_endpoint_dying_half_way_keeps_what_was_written(sin_zh, llm_server, immediate_tasks, settings):
    settings.CASEBOOK_LLM_CONCURRENCY = 1  # deterministic order: questions 1–3 answered, then the endpoint dies
    llm_server.responder = _distinct_reply
    llm_server.fail_after = 3
    questions = _bare_questions(sin_zh, 6)
    job = start_distractor_job(sin_zh, [q.pk for q in questions], n=3, mode="llm")

    assert job.state == Job.State.DONE and job.done == job.total == 6
    assert job.message == "3 question(s) got distractors, 0 needed none, 3 failed"
    written = {int(k) for k in job.result["written"]}
    assert written == {q.pk for q in questions[:3]}
    for q in questions[:3]:
        assert q.options.filter(origin="llm", model_name="test-model", review="pending").count() == 3
    failures = job.result["failures"]
    assert [f["question"] for f in failures] == [q.pk for q in questions[3:]]
    assert all("HTTP 500" in f["error"] and "gave up after 3 attempts" in f["error"] for f in failures)
    for q in questions[3:]:
        assert q.options.count() == 1
    assert job.result["origin"] == "llm" and job.result["model"] == "test-model"


def test_concurrency_is_bounded_and_all_succeed(sin_zh, llm_server, immediate_tasks, settings):
    settings.CASEBOOK_LLM_CONCURRENCY = 2
    llm_server.responder = _distinct_reply
    llm_server.latency = 0.1
    questions = _bare_questions(sin_zh, 6)
    job = start_distractor_job(sin_zh, [q.pk for q in questions], n=2, mode="llm")
    assert job.state == Job.State.DONE and len(job.result["written"]) == 6 and not job.result["failures"]
    assert llm_server.max_in_flight == 2
    assert all(q.options.count() == 3 for q in questions)


def test_offline_job_and_per_question_failures(sin_zh, no_llm, immediate_tasks):
    good = _bare_questions(sin_zh, 2)
    free_text = bare_copy(sin_zh.questions.first())
    free_text.kind = "open_ended"
    free_text.save()
    job = start_distractor_job(sin_zh, [q.pk for q in good] + [free_text.pk, 999999], n=3, mode="auto")
    assert job.params["mode"] == "offline" and job.state == Job.State.DONE
    assert job.result["origin"] == "heuristic" and len(job.result["written"]) == 2
    errors = {f["question"]: f["error"] for f in job.result["failures"]}
    assert "free text" in errors[free_text.pk] and errors[999999] == "no such question in this game"


def test_llm_job_without_a_key_fails_clearly(sin_zh, no_llm):
    from generation.jobs import create_distractor_job

    questions = _bare_questions(sin_zh, 2)
    job = create_distractor_job(sin_zh, [q.pk for q in questions], mode="llm")
    run_distractor_job(job.pk)
    job.refresh_from_db()
    assert job.state == Job.State.FAILED
    assert all("OPENAI_API_KEY" in f["error"] for f in job.result["failures"])
