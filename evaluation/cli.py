"""Command line: ``python -m evaluation EXPORT_DIR ...`` and ``python -m evaluation compare DIR ...``.

The same argument definitions and entry points back ``manage.py evaluate`` / ``manage.py compare``.
Nothing here needs Django or a database: the runners read the export directory through the
format readers.
"""
from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path
from typing import Any

from casebook.llm import EndpointAuthError
from evaluation.config import ConfigError, EvalConfig
from evaluation.engine import make_client
from evaluation.report import compare_reports, format_short_table, write_report

__all__ = [
    "add_compare_arguments", "add_evaluate_arguments", "config_from_args", "evaluate", "main", "run_compare",
    "run_evaluate",
]


#: --format → (module, function(config, client) -> (summary core, rows, extra Markdown)); a new format
#: registers itself here (imported lazily, so a runner's dependencies load only when it runs)
RUNNERS: dict[str, tuple[str, str]] = {
    "wellplay": ("evaluation.wellplay", "run_wellplay"),
    "whodunitbench": ("evaluation.whodunitbench", "run_whodunitbench"),
    "jsonl": ("evaluation.jsonl", "run_jsonl"),
    "sessions": ("evaluation.sessions", "run_sessions"),
}


def add_evaluate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("export_dir", type=Path, help="an export directory (WellPlay or WhodunitBench layout)")
    parser.add_argument("--format", required=True, choices=sorted(RUNNERS),
                        help="wellplay / whodunitbench: multiple choice; jsonl: factual and inferential items of "
                             "a generic export (questions.jsonl); sessions: played-game logs")
    parser.add_argument("--model", required=True,
                        help="model name at the endpoint, or baseline:random / baseline:lexical (offline)")
    parser.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1")
    parser.add_argument("--api-key-env", default="OPENAI_API_KEY", help="environment variable holding the key")
    parser.add_argument("--runs", type=int, default=1, help="samples per question (mean ± std reported)")
    parser.add_argument("--concurrency", type=int, default=8, help="requests in flight at most")
    parser.add_argument("--perspective", default="own", choices=["own", "all", "none"])
    parser.add_argument("--language", default=None, choices=["zh", "en"], help="only games in this language")
    parser.add_argument("--game", dest="games", nargs="+", default=[], metavar="SLUG", help="only these games")
    parser.add_argument("--limit", type=int, default=None, help="at most N questions per game and category (smoke test)")
    parser.add_argument("--judge-model", default=None, help="CMD judge (default: the evaluated model)")
    parser.add_argument("--judge-prompt", type=Path, default=None,
                        help="file with the judge prompt; placeholders {truth} and {prediction}")
    parser.add_argument("--cache-dir", type=Path, default=None,
                        help="response cache (default $CASEBOOK_EVAL_CACHE or ~/.cache/casebook/eval)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--temperature", type=float, default=0.7)
    parser.add_argument("--max-tokens", type=int, default=800, help="reply limit; 0 = send none")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per request")
    parser.add_argument("--max-retries", type=int, default=5)
    parser.add_argument("--token-budget", type=int, default=None, help="context tokens per request")
    parser.add_argument("--max-context", type=int, default=None,
                        help="the server's context window in tokens (default: what /v1/models reports, if anything); "
                             "prompts are trimmed to fit it with the reply")
    parser.add_argument("--text-only", action="store_true",
                        help="WhodunitBench: send no images (image questions get the clues' stored text or are skipped)")
    parser.add_argument("--price-in", type=float, default=None, help="USD per 1M prompt tokens")
    parser.add_argument("--price-out", type=float, default=None, help="USD per 1M completion tokens")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the response cache")
    parser.add_argument("--refresh-failed", action="store_true",
                        help="re-send requests whose cached reply is empty (caches written by older versions)")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.add_argument("--no-charts", action="store_true", help="skip the PNG charts (tables and JSON only)")
    parser.add_argument("--out", type=Path, required=True, help="report directory to write")


def add_compare_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("reports", type=Path, nargs="+", help="report directories (each with summary.json)")
    parser.add_argument("--out", type=Path, default=None, help="also write compare.md/.csv/.png here")


def config_from_args(args: argparse.Namespace) -> EvalConfig:
    kwargs: dict[str, Any] = {
        "export_dir": args.export_dir, "format": args.format, "model": args.model, "out": args.out,
        "base_url": args.base_url, "api_key_env": args.api_key_env, "runs": args.runs,
        "concurrency": args.concurrency, "perspective": args.perspective, "language": args.language,
        "games": list(args.games or []), "limit": args.limit, "judge_model": args.judge_model,
        "cache_dir": args.cache_dir, "seed": args.seed, "temperature": args.temperature,
        "max_tokens": args.max_tokens, "timeout": args.timeout, "max_retries": args.max_retries,
        "price_in": args.price_in, "price_out": args.price_out, "progress": not args.no_progress,
        "charts": not getattr(args, "no_charts", False), "no_cache": getattr(args, "no_cache", False),
        "refresh_failed": getattr(args, "refresh_failed", False),
        "max_context": getattr(args, "max_context", None), "text_only": getattr(args, "text_only", False),
    }
    if args.token_budget is not None:
        kwargs["token_budget"] = args.token_budget
    if args.judge_prompt is not None:
        try:
            kwargs["judge_prompt"] = Path(args.judge_prompt).read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read --judge-prompt: {exc}") from exc
        if "{prediction}" not in kwargs["judge_prompt"] or "{truth}" not in kwargs["judge_prompt"]:
            raise ConfigError("--judge-prompt must contain the placeholders {truth} and {prediction}")
    return EvalConfig(**kwargs)


def evaluate(config: EvalConfig) -> dict[str, Any]:
    """Run one evaluation end to end and write the report; returns summary.json's content."""
    if config.format not in RUNNERS:
        raise ConfigError(f"--format must be one of {', '.join(sorted(RUNNERS))} (got {config.format!r})")
    config.validate()
    started = time.monotonic()
    client = None if config.is_baseline else make_client(config)
    if client is not None:
        detect_context(config)
    module_name, function_name = RUNNERS[config.format]
    runner = getattr(importlib.import_module(module_name), function_name)
    core, rows, extra_md = runner(config, client)
    stats = client.stats() if client else {"sent": 0, "cached": 0, "failed": 0}
    summary: dict[str, Any] = {
        "benchmark": config.format, "model": config.model, "perspective": config.perspective,
        "language": config.language, **core,
        "requests": {"sent": stats["sent"], "cached": stats["cached"], "failed": stats["failed"],
                     "failed_by_reason": stats.get("failed_by_reason", {}),
                     "endpoint": client.endpoint if client else None},
        "usage": {k: v for k, v in stats.items() if k not in ("sent", "cached", "failed", "failed_by_reason")},
        "unparseable": sum(1 for r in rows if r.status == "unparseable"),
        "context": context_summary(config, rows),
        "elapsed_s": round(time.monotonic() - started, 3),
    }
    write_report(config.out, summary, rows, config.as_dict(), extra_md, charts=config.charts)
    return summary


def context_summary(config: EvalConfig, rows: list) -> dict[str, Any]:
    from evaluation.context import token_counter

    return {"max_context": config.max_context, "source": config.context_source or None,
            "prompt_limit": config.prompt_limit(), "tokenizer": token_counter(config.model)[1],
            "trimmed_rows": sum(1 for r in rows if r.extra.get("context_note"))}


def detect_context(config: EvalConfig) -> None:
    """--max-context, else the size the server reports in /v1/models (else unknown)."""
    from casebook.llm import server_context_size

    if config.max_context is not None:
        config.context_source = "--max-context"
        return
    size = server_context_size(config.base_url, config.api_key, config.model)
    if size:
        config.max_context, config.context_source = size, "/v1/models"


def run_evaluate(args: argparse.Namespace, stdout=None, stderr=None) -> int:
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    try:
        config = config_from_args(args)
        summary = evaluate(config)
    except (ConfigError, OSError) as exc:  # bad options, unreadable export, unwritable report dir
        print(f"error: {exc}", file=stderr)
        return 2
    except EndpointAuthError as exc:
        print(f"error: {exc}", file=stderr)
        return 3
    except KeyboardInterrupt:
        print("interrupted: every answer received so far is in the cache; rerun the same command to resume "
              "(only the missing requests are sent)", file=stderr)
        return 130
    requests = summary["requests"]
    print(format_short_table(summary), file=stdout)
    cost = summary["usage"].get("cost_usd")
    print(f"\nrequests: {requests['sent']} sent, {requests['cached']} cached, {requests['failed']} failed"
          + (f"; estimated cost ${cost:.4f}" if cost else ""), file=stdout)
    outcomes = summary.get("outcomes", {})
    if outcomes.get("failed"):
        print(failure_message(outcomes["failed_by_reason"]), file=stderr)
    print(f"report written to {config.out.resolve()}", file=stdout)
    return 1 if requests["failed"] or outcomes.get("failed") else 0


FAILURE_ADVICE = {
    "context": "the prompt is longer than the server's context; rerunning fails the same way — lower "
               "--token-budget or give --max-context",
    "auth": "the endpoint refused the key",
    "server": "the server returned an error or a broken reply; rerun the same command to retry only those",
    "timeout": "no reply within --timeout; raise --timeout or lower --concurrency, then rerun",
    "judge": "the judge failed or its verdict could not be read; rerun to retry the judge",
    "images": "the server refused images twice, so no further image was sent; rerun with --text-only",
}


def failure_message(by_reason: dict[str, int]) -> str:
    """One line per failure reason: how many, and what to do about it."""
    lines = [f"warning: {sum(by_reason.values())} rows failed and are NOT scored (left out of every accuracy):"]
    lines += [f"  {count} × {reason}: {FAILURE_ADVICE.get(reason, '')}" for reason, count in by_reason.items()]
    return "\n".join(lines)


def run_compare(args: argparse.Namespace, stdout=None, stderr=None) -> int:
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    try:
        text = compare_reports(args.reports, args.out)
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=stderr)
        return 2
    print(text, file=stdout)
    if args.out:
        print(f"\ncomparison written to {Path(args.out).resolve()}", file=stdout)
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "compare":
        parser = argparse.ArgumentParser(prog="python -m evaluation compare",
                                         description="Put evaluation reports side by side.")
        add_compare_arguments(parser)
        return run_compare(parser.parse_args(argv[1:]))
    parser = argparse.ArgumentParser(
        prog="python -m evaluation",
        description="Evaluate a model (or an offline baseline) on an export directory.",
        epilog="Compare reports with: python -m evaluation compare REPORT_DIR ...",
    )
    add_evaluate_arguments(parser)
    return run_evaluate(parser.parse_args(argv))
