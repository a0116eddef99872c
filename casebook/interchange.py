"""The interchange model: plain dataclasses shared by every format, the DB builder and loader,
ingest and the evaluation runners.

Readers turn files into these objects, one builder writes them to the database, one loader reads
the database back into them, writers turn them into files. Nothing here imports Django, so the
evaluation runners work on an export directory without a database.

Conventions
- Names join everything: a character, victim, relationship end or perspective is referred to by
  the character's ``name`` (see :func:`name_key` for how names are compared).
- ``raw`` fields keep a published string verbatim (WhodunitBench question strings, WellPlay
  truths such as ``"bb"``) so that an unedited item exports byte-for-byte; editors clear ``raw``
  when they change an item, and writers then render from the structured fields.
- ``extra`` dicts carry format details that have no domain meaning (engine settings, key orders)
  so that exports reproduce the published files.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from enum import StrEnum
from typing import Any

from casebook.text import name_key  # noqa: F401  (re-exported: readers and builders say ix.name_key)

# --------------------------------------------------------------------------------------------
# Vocabularies


class Language(StrEnum):
    ZH = "zh"
    EN = "en"


class Origin(StrEnum):
    INGESTED = "ingested"
    WELLPLAY = "imported-wellplay"
    WHODUNITBENCH = "imported-whodunitbench"
    SYNTHETIC = "synthetic"
    MANUAL = "manual"


class Benchmark(StrEnum):
    WELLPLAY = "wellplay"
    WHODUNITBENCH = "whodunitbench"
    GENERIC = "generic"


class QuestionKind(StrEnum):
    """Every question kind the exporters know; ``benchmark_of`` says which format writes it."""

    # WellPlay (value column a / b / c)
    OBJECTIVE = "objective"
    REASONING = "reasoning"
    RELATIONS = "relations"
    # WhodunitBench
    LONG_SCRIPT = "long_script"  # role.q / role.a (LSU)
    TEXT_IMAGE = "text_image"  # ei_q (TIU)
    MEDIA_IMAGE = "media_image"  # cxi_q (MIU)
    MULTI_STEP = "multi_step"  # key_clues_questions (MMR)
    OPEN_ENDED = "open_ended"  # motive / method ground truth (CMD)
    # Jubensha-style generic items
    FACTUAL = "factual"
    INFERENTIAL = "inferential"


WELLPLAY_KINDS = (QuestionKind.OBJECTIVE, QuestionKind.REASONING, QuestionKind.RELATIONS)
WHODUNITBENCH_KINDS = (
    QuestionKind.LONG_SCRIPT,
    QuestionKind.TEXT_IMAGE,
    QuestionKind.MEDIA_IMAGE,
    QuestionKind.MULTI_STEP,
    QuestionKind.OPEN_ENDED,
)
GENERIC_KINDS = (QuestionKind.FACTUAL, QuestionKind.INFERENTIAL)

# WellPlay scores a correct Objective / Reasoning / Relations answer 10 / 5 / 2 points.
DEFAULT_WEIGHTS: dict[str, int] = {
    QuestionKind.OBJECTIVE: 10,
    QuestionKind.REASONING: 5,
    QuestionKind.RELATIONS: 2,
}
WELLPLAY_VALUE_LETTER = {QuestionKind.OBJECTIVE: "a", QuestionKind.REASONING: "b", QuestionKind.RELATIONS: "c"}
WELLPLAY_KIND_OF_LETTER = {v: k for k, v in WELLPLAY_VALUE_LETTER.items()}

# Sub-types per kind (free strings are allowed for game-specific items; these are the known ones).
SUB_TYPES: dict[str, tuple[str, ...]] = {
    QuestionKind.OBJECTIVE: ("who_killed", "identity"),
    QuestionKind.REASONING: ("how", "why", "relationship", "where", "when", "suspect", "other"),
    QuestionKind.RELATIONS: ("one", "two", "non_existent"),
    QuestionKind.OPEN_ENDED: ("motive", "method"),
    QuestionKind.MULTI_STEP: (),
    QuestionKind.LONG_SCRIPT: (),
    QuestionKind.TEXT_IMAGE: (),
    QuestionKind.MEDIA_IMAGE: (),
    QuestionKind.FACTUAL: (),
    QuestionKind.INFERENTIAL: (),
}


def benchmark_of(kind: str) -> Benchmark:
    if kind in WELLPLAY_KINDS:
        return Benchmark.WELLPLAY
    if kind in WHODUNITBENCH_KINDS:
        return Benchmark.WHODUNITBENCH
    return Benchmark.GENERIC


class ChainGoal(StrEnum):
    MURDERER = "murderer"
    METHOD = "method"
    MOTIVE = "motive"
    OTHER = "other"


class NodeKind(StrEnum):
    DIRECT = "direct"
    INFERRED = "inferred"
    CONCLUSION = "conclusion"


class ClueKind(StrEnum):
    TEXT = "text"
    IMAGE = "image"


class ImageKind(StrEnum):
    TEXT_RICH = "text_rich"
    MEDIA_RICH = "media_rich"
    UNKNOWN = ""


class SpanDocument(StrEnum):
    """Which stored text an evidence span points into."""

    SCRIPT = "script"  # a character's role script (owner = character name)
    GOALS = "goals"  # a character's goals text (owner = character name)
    MANUAL = "manual"  # the truth / host manual
    CLUE = "clue"  # a clue's text or OCR text (owner = clue key)
    PUBLIC = "public"  # the game's public clue text


# Evidence span labels: the default per-game set (a game may configure its own), shared by the
# span editor, every export that carries evidence and the Label Studio bridge. value -> (zh, en).
DEFAULT_SPAN_LABELS: dict[str, tuple[str, str]] = {
    "clue": ("线索", "clue"),
    "alibi": ("不在场证明", "alibi"),
    "motive": ("动机", "motive"),
    "method": ("手法", "method"),
    "time": ("时间", "time"),
    "place": ("地点", "place"),
    "person": ("人物", "person"),
}


class Status(StrEnum):
    DRAFT = "draft"
    SUBMITTED = "submitted"
    APPROVED = "approved"
    REJECTED = "rejected"


class OptionOrigin(StrEnum):
    HUMAN = "human"
    IMPORTED = "imported"
    LLM = "llm"
    HEURISTIC = "heuristic"


class OptionReview(StrEnum):
    PENDING = "pending"
    ACCEPTED = "accepted"
    EDITED = "edited"
    REJECTED = "rejected"


LETTERS = "abcdefghij"

# --------------------------------------------------------------------------------------------
# Names

# One definition, in casebook.text; re-exported because every reader and builder says ``ix.name_key``.


# --------------------------------------------------------------------------------------------
# Records


@dataclass
class Problem:
    """One thing a reader, validator or builder noticed, and what it did about it."""

    file: str
    message: str
    action: str = ""
    location: str = ""
    severity: str = "warning"  # "info" | "warning" | "error"

    def __str__(self) -> str:
        where = f"{self.file}:{self.location}" if self.location else self.file
        tail = f" -> {self.action}" if self.action else ""
        return f"[{self.severity}] {where}: {self.message}{tail}"


@dataclass
class Span:
    """Evidence: code-point offsets [start, end) into a stored, normalised text, quote kept."""

    document: str  # SpanDocument
    owner: str = ""  # character name (script/goals) or clue key (clue); empty for manual/public
    start: int = 0
    end: int = 0
    quote: str = ""
    label: str = ""  # one of the game's span labels (DEFAULT_SPAN_LABELS unless configured); may be empty


@dataclass
class Character:
    name: str
    aliases: list[str] = field(default_factory=list)
    playable: bool = True
    script: str = ""  # the role script as stored (raw published text)
    goals: list[str] = field(default_factory=list)  # objectives / acts_goal
    self_intro: str = ""  # WhodunitBench murderer's scripted introduction (`self`)
    fixed_answer: str = ""  # WhodunitBench murderer's fixed reply (`answer`)
    is_murderer: bool = False
    is_victim: bool = False
    key_role: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Kill:
    killer: str
    victim: str


@dataclass
class Clue:
    """A public or private clue: text, or an image with its OCR text."""

    key: str  # stable within the game (e.g. "img/3.png", "public-1")
    kind: str = ClueKind.TEXT
    title: str = ""
    text: str = ""
    owner: str = ""  # character name for a private clue; empty = public
    filename: str = ""  # image file name as published / uploaded
    data: bytes | None = field(default=None, repr=False)  # image bytes
    media_type: str = ""  # sniffed from the bytes, e.g. "image/jpeg"
    image_kind: str = ImageKind.UNKNOWN
    ocr_text: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data or b"").hexdigest()


@dataclass
class Relationship:
    """Directed edge: ``target`` is <labels> of ``source`` (WellPlay's "B is L of A")."""

    source: str
    target: str
    labels: list[str] = field(default_factory=list)  # fine-grained Conan labels, lowercase
    evidence: list[Span] = field(default_factory=list)
    note: str = ""
    status: str = Status.APPROVED


@dataclass
class ChainNode:
    key: str
    kind: str = NodeKind.DIRECT
    text: str = ""
    parents: list[str] = field(default_factory=list)  # keys of parent nodes (inferred/conclusion)
    level: int | None = None  # declared hop level (WhodunitBench pool); computed when None
    evidence: list[Span] = field(default_factory=list)
    image_clue: str = ""  # clue key
    knowledge: str = ""  # expert-knowledge note for an inferred step
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class ReasoningChain:
    goal: str = ChainGoal.OTHER
    title: str = ""
    nodes: list[ChainNode] = field(default_factory=list)
    status: str = Status.APPROVED


@dataclass
class KeyStatement:
    """A key clue statement a key role should reveal (WhodunitBench SPC ground truth)."""

    owner: str  # role name as published (may not resolve, e.g. DAMAIF 小麦)
    text: str
    node: str = ""  # chain node key, when linked


@dataclass
class Option:
    text: str
    correct: bool = False
    origin: str = OptionOrigin.IMPORTED
    model: str = ""  # LLM that wrote it (origin llm)
    review: str = OptionReview.ACCEPTED


@dataclass
class Question:
    kind: str  # QuestionKind
    stem: str
    options: list[Option] = field(default_factory=list)
    answer: str = ""  # answer as published: lowercase letters ("b", "ac"), or free text
    sub_type: str = ""
    multi: bool = False  # WellPlay type "b" / several answers allowed
    weight: int | None = None  # None = default for the kind
    perspective: str = ""  # character asked (WellPlay file, WhodunitBench LS owner)
    image_clue: str = ""  # clue key (text-/media-rich image questions)
    chain_node: str = ""  # chain node key (multi-step)
    level: int | None = None  # hop level (multi-step)
    source: str = ""  # WhodunitBench `source` code, verbatim
    evidence: list[Span] = field(default_factory=list)
    raw: str = ""  # the published question string (stem + inline options), when unedited
    status: str = Status.APPROVED
    provenance: dict[str, Any] = field(default_factory=dict)  # author, reviewer, origin file …
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def effective_weight(self) -> int:
        return self.weight if self.weight is not None else DEFAULT_WEIGHTS.get(self.kind, 1)

    @property
    def answer_letters(self) -> str:
        """Letters of the correct options ("" when none is marked)."""
        return "".join(LETTERS[i] for i, o in enumerate(self.options) if o.correct)


@dataclass
class TruthManual:
    text: str = ""  # the whole manual / WhodunitBench `reason`, verbatim
    motive: str = ""
    method: str = ""


@dataclass
class Game:
    slug: str  # stable id: WellPlay directory name, WhodunitBench folder name, or chosen
    title: str
    language: str  # Language
    origin: str = Origin.MANUAL
    title_note: str = ""  # WellPlay player note, e.g. "（4人封闭）" / " (4 people closed)"
    characters: list[Character] = field(default_factory=list)
    victims: list[str] = field(default_factory=list)  # in the published order
    kills: list[Kill] = field(default_factory=list)
    clues: list[Clue] = field(default_factory=list)
    public_clue_text: str = ""
    relationships: list[Relationship] = field(default_factory=list)
    chains: list[ReasoningChain] = field(default_factory=list)
    key_statements: list[KeyStatement] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)
    truth: TruthManual = field(default_factory=TruthManual)
    task_prompts: dict[str, str] = field(default_factory=dict)  # "civilian", "murderer"
    counterpart: str = ""  # slug of the same game in the other language
    extra: dict[str, Any] = field(default_factory=dict)
    report: list[Problem] = field(default_factory=list)

    # -- lookups -------------------------------------------------------------------------
    def character(self, name: str) -> Character | None:
        """Find a character by name or alias, comparing with :func:`name_key`."""
        wanted = name_key(name)
        for ch in self.characters:
            if name_key(ch.name) == wanted or any(name_key(a) == wanted for a in ch.aliases):
                return ch
        return None

    def questions_of(self, *kinds: str) -> list[Question]:
        return [q for q in self.questions if q.kind in kinds]

    def clue(self, key: str) -> Clue | None:
        return next((c for c in self.clues if c.key == key), None)

    @property
    def playable(self) -> list[Character]:
        return [c for c in self.characters if c.playable]

    @property
    def murderers(self) -> list[str]:
        killers = {k.killer for k in self.kills}
        return [c.name for c in self.characters if c.is_murderer or c.name in killers]

    def content_hash(self) -> str:
        """A digest of everything but the report: equal games hash equal (idempotent re-import)."""
        return hashlib.sha256(to_json(self, include_report=False).encode()).hexdigest()


# --------------------------------------------------------------------------------------------
# Key order through the database

ORDER_KEY = "__key_orders__"


def pack_key_order(value: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``value`` plus one entry recording the key order of every dict inside it.

    PostgreSQL's jsonb hands objects back with their keys sorted, but published files are
    re-written byte for byte from ``extra`` dicts whose key order matters (WhodunitBench
    ``role-q``, WellPlay ``script_info``). The orders are kept under one top-level key, as
    ``{path: [keys]}``, so nested dicts stay exactly as they were for code that reads them.
    """
    orders: dict[str, list[str]] = {}

    def walk(node: Any, path: str) -> None:
        if isinstance(node, dict):
            if len(node) > 1:
                orders[path] = list(node)
            for key, child in node.items():
                walk(child, f"{path}/{key}")
        elif isinstance(node, list):
            for index, child in enumerate(node):
                walk(child, f"{path}/{index}")

    packed = {k: v for k, v in value.items() if k != ORDER_KEY}
    walk(packed, "")
    if orders:
        packed[ORDER_KEY] = orders
    return packed


def unpack_key_order(value: dict[str, Any]) -> dict[str, Any]:
    """Inverse of :func:`pack_key_order`; dicts with no recorded order keep theirs."""
    orders = value.get(ORDER_KEY) if isinstance(value, dict) else None
    if not isinstance(orders, dict):
        return {k: v for k, v in value.items() if k != ORDER_KEY} if isinstance(value, dict) else value

    def walk(node: Any, path: str) -> Any:
        if isinstance(node, dict):
            wanted = [k for k in orders.get(path, []) if k in node]
            keys = wanted + [k for k in node if k not in wanted]
            return {k: walk(node[k], f"{path}/{k}") for k in keys}
        if isinstance(node, list):
            return [walk(child, f"{path}/{i}") for i, child in enumerate(node)]
        return node

    return walk({k: v for k, v in value.items() if k != ORDER_KEY}, "")


# --------------------------------------------------------------------------------------------
# Serialisation to plain JSON (the "casebook" format; also the demo fixtures)


def _plain(value: Any) -> Any:
    if is_dataclass(value):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, bytes):
        return {"__bytes_sha256__": hashlib.sha256(value).hexdigest(), "size": len(value)}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def to_json(game: Game, include_report: bool = True) -> str:
    data = _plain(game)
    if not include_report:
        data.pop("report", None)
    return json.dumps(data, ensure_ascii=False, sort_keys=True)


def game_from_dict(data: dict[str, Any]) -> Game:
    """Inverse of ``asdict`` for a Game (image bytes are not part of the dict)."""

    def spans(items: list[dict]) -> list[Span]:
        return [Span(**s) for s in items or []]

    data = dict(data)
    game = Game(
        **{
            k: v
            for k, v in data.items()
            if k
            not in {
                "characters", "kills", "clues", "relationships", "chains", "key_statements",
                "questions", "truth", "report",
            }
        }
    )
    game.characters = [Character(**c) for c in data.get("characters", [])]
    game.kills = [Kill(**k) for k in data.get("kills", [])]
    game.clues = [Clue(**{k: v for k, v in c.items() if k != "data"}) for c in data.get("clues", [])]
    game.relationships = [
        Relationship(**{**r, "evidence": spans(r.get("evidence", []))}) for r in data.get("relationships", [])
    ]
    game.chains = [
        ReasoningChain(
            **{
                **ch,
                "nodes": [ChainNode(**{**n, "evidence": spans(n.get("evidence", []))}) for n in ch.get("nodes", [])],
            }
        )
        for ch in data.get("chains", [])
    ]
    game.key_statements = [KeyStatement(**k) for k in data.get("key_statements", [])]
    game.questions = [
        Question(
            **{
                **q,
                "options": [Option(**o) for o in q.get("options", [])],
                "evidence": spans(q.get("evidence", [])),
            }
        )
        for q in data.get("questions", [])
    ]
    game.truth = TruthManual(**data.get("truth", {}))
    game.report = [Problem(**p) for p in data.get("report", [])]
    return game


__all__ = [name for name in dir() if not name.startswith("_")] + ["asdict"]
