"""The full configuration of an evaluation run; saved as ``config.json`` in every report."""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from casebook.llm import DEFAULT_PRICES, Prices
from evaluation.baselines import BASELINES, is_baseline
from evaluation.prompts import DEFAULT_BUDGET, PERSPECTIVES

__all__ = ["ConfigError", "EvalConfig", "DEFAULT_JUDGE_PROMPT"]


DEFAULT_JUDGE_PROMPT = """你是剧本杀推理测评的评委。请对照标准答案，评价玩家对凶手作案动机和作案手法的推理。
You are the judge of a murder-mystery reasoning test. Compare the player's deduction of the
culprit's motive and method with the ground truth.

【标准答案 / Ground truth】
{truth}

【玩家推理 / Player's deduction】
{prediction}

评分标准：0 = 完全错误或没有回答；50 = 动机或手法之一基本正确；100 = 动机和手法都与标准答案一致。
Score 0-100: 0 = wrong or no answer, 50 = motive or method roughly right, 100 = both match.
只输出 JSON / reply with JSON only: {"score": <0-100 integer>, "reason": "<one sentence>"}"""


class ConfigError(ValueError):
    """A configuration problem the user can fix; the CLI prints it without a traceback."""


@dataclass
class EvalConfig:
    export_dir: Path
    format: str
    model: str
    out: Path
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    runs: int = 1
    concurrency: int = 8
    perspective: str = "own"
    language: str | None = None  # zh / en / None = every language in the export
    games: list[str] = field(default_factory=list)
    limit: int | None = None  # at most this many questions per game and category (smoke tests)
    judge_model: str | None = None
    judge_prompt: str = DEFAULT_JUDGE_PROMPT
    cache_dir: Path | None = None
    seed: int = 0
    temperature: float = 0.7
    max_tokens: int = 800
    timeout: float = 120.0
    max_retries: int = 5
    token_budget: int = DEFAULT_BUDGET
    image_max_side: int = 1024
    price_in: float | None = None
    price_out: float | None = None
    progress: bool = True
    charts: bool = True
    max_context: int | None = None  # the server's context window (--max-context, else /v1/models)
    context_source: str = ""  # where max_context came from
    text_only: bool = False  # WhodunitBench: never send images (image questions use stored text or are skipped)
    no_cache: bool = False  # neither read nor write the response cache
    refresh_failed: bool = False  # re-send cached entries holding an empty reply (older versions cached them)

    def __post_init__(self) -> None:
        self.export_dir = Path(self.export_dir)
        self.out = Path(self.out)
        if self.cache_dir is None:
            base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
            self.cache_dir = Path(os.environ.get("CASEBOOK_EVAL_CACHE") or Path(base) / "casebook" / "eval")
        self.cache_dir = Path(self.cache_dir)

    # -- checks ---------------------------------------------------------------------------
    def validate(self) -> None:
        if not self.export_dir.is_dir():
            raise ConfigError(f"export directory not found: {self.export_dir}")
        if self.perspective not in PERSPECTIVES:
            raise ConfigError(f"--perspective must be one of {', '.join(PERSPECTIVES)}")
        if self.language not in (None, "zh", "en"):
            raise ConfigError("--language must be zh or en")
        if self.runs < 1:
            raise ConfigError("--runs must be at least 1")
        if self.concurrency < 1:
            raise ConfigError("--concurrency must be at least 1")
        if self.max_context is not None and self.max_context < 256:
            raise ConfigError("--max-context must be at least 256 tokens")
        if self.limit is not None and self.limit < 1:
            raise ConfigError("--limit must be at least 1")
        if is_baseline(self.model) and self.model not in BASELINES:
            raise ConfigError(f"unknown baseline {self.model!r}; choose {' or '.join(BASELINES)}")
        if not is_baseline(self.model) and self.api_key is None and not self.base_url:
            raise ConfigError(
                f"model {self.model!r} needs an API key: set {self.api_key_env} (or name another variable "
                "with --api-key-env), or point --base-url at a local OpenAI-compatible server. "
                "For an offline run without any key use --model baseline:random or --model baseline:lexical."
            )
        if self.judge is not None and is_baseline(self.judge):
            raise ConfigError("--judge-model must be a real model (a baseline cannot judge free text)")

    # -- derived --------------------------------------------------------------------------
    @property
    def api_key(self) -> str | None:
        return os.environ.get(self.api_key_env) or None

    @property
    def is_baseline(self) -> bool:
        return is_baseline(self.model)

    @property
    def judge(self) -> str | None:
        """The CMD judge: --judge-model, else the evaluated model when it is a real model."""
        if self.judge_model:
            return self.judge_model
        return None if self.is_baseline else self.model

    @property
    def prices(self) -> Prices:
        default = DEFAULT_PRICES.get(self.model, Prices())
        return Prices(self.price_in if self.price_in is not None else default.input,
                      self.price_out if self.price_out is not None else default.output)

    def request_params(self, run: int) -> dict[str, Any]:
        """Sampling parameters; ``seed`` differs per run so runs are distinct requests (and cache keys)."""
        params: dict[str, Any] = {"temperature": self.temperature, "seed": self.seed + run}
        if self.max_tokens > 0:  # 0 = no limit sent (models that only accept max_completion_tokens)
            params["max_tokens"] = self.max_tokens
        return params

    def prompt_limit(self) -> int | None:
        """Prompt tokens allowed per request (None when the context size is unknown)."""
        from evaluation.context import prompt_limit

        return None if self.max_context is None else prompt_limit(self.max_context, self.max_tokens)

    def judge_prompt_for(self, truth: str, prediction: str) -> str:
        """Placeholders replaced literally, so a custom prompt may contain other braces (JSON examples)."""
        return self.judge_prompt.replace("{truth}", truth).replace("{prediction}", prediction)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("export_dir", "out", "cache_dir"):
            data[key] = str(data[key])
        data["judge_model"] = self.judge
        data["prices_per_million"] = {"input": self.prices.input, "output": self.prices.output}
        data["api_key_set"] = self.api_key is not None
        return data
