"""Recorded WhodunitBench agent runs (``Agent_*.json``, second run ``Agent_*1.json``) parsed leniently.

The files hold raw LLM text (whodunitbench.md §6): answer lists in half a dozen shapes, provider
notes (``Content is blocked``), code blocks with OCR attempts, refusals, unreliable speaker labels
and ``#x#`` letters, and role aliases (DI7MI_2 calls 萨拉 ``达文西``). This module turns one run
into plain data the evaluation runner scores (SPC / ITD / vote / LSU / TIU / MIU / MMR / CMD):
answers as letter lists aligned by position, question targets and votes as role names.

Everything is a small pure function of text, testable alone; :func:`read_agent_runs` only wires
files to them and never raises on bad files (problems are collected on the run).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from casebook.interchange import Problem, name_key

__all__ = [
    "AgentRun",
    "DiscussionTurn",
    "PerceptionAnswers",
    "ReasonText",
    "SECTION_LONG_TEXT",
    "SECTION_COMPLEX_IMAGE",
    "SECTION_SIMPLE_IMAGE",
    "clean_agent_text",
    "detect_aliases",
    "parse_answer_list",
    "parse_discussion_turn",
    "parse_perception",
    "parse_vote",
    "positional_score",
    "read_agent_runs",
    "split_motive_method",
]

SECTION_LONG_TEXT = "长文本答案"  # -> the role's own q/a (LSU)
SECTION_COMPLEX_IMAGE = "复杂图片答案"  # -> cxi_q (MIU, media-rich)
SECTION_SIMPLE_IMAGE = "简单图片答案"  # -> ei_q (TIU, text-rich)
_SECTIONS = (SECTION_LONG_TEXT, SECTION_COMPLEX_IMAGE, SECTION_SIMPLE_IMAGE)
_PHASES = ("intro", "q", "MQ", "dis", "clue", "vote", "reason")
_BUNDLE = "gpt4_naive_agent.json"
_BUNDLE_KEYS = {"intro": "intro", "dis": "dis", "vote": "vote", "reason": "reason", "q": "per_q", "MQ": "M_q"}


# --------------------------------------------------------------------------------------------
# Records


@dataclass
class PerceptionAnswers:
    """One detective's perception answers; letters by position (None = no readable answer)."""

    long_text: list[str | None] = field(default_factory=list)  # vs role.q / role.a (LSU)
    complex_image: list[str | None] = field(default_factory=list)  # vs cxi_q (MIU)
    simple_image: list[str | None] = field(default_factory=list)  # vs ei_q (TIU)
    text: str = ""  # the cleaned text


@dataclass
class DiscussionTurn:
    speaker: str  # resolved role name, else the label as written ("" when there is none)
    text: str  # the turn without its speaker label, noise removed
    speaker_label: str = ""  # the label as written (unreliable, §6)
    target: str | None = None  # role questioned: the name after #x#., resolved
    target_label: str = ""  # the name as written after #x#.
    question: str = ""  # 提问内容
    clue_sharing: str = ""  # the 线索分析分享 part of a question turn

    @property
    def is_question(self) -> bool:
        return bool(self.target_label)


@dataclass
class ReasonText:
    text: str
    motive: str = ""
    method: str = ""


@dataclass
class AgentRun:
    """One recorded run of the agents on one game; all keys are resolved role names."""

    run: int  # 1 = Agent_*.json, 2 = Agent_*1.json
    source: str  # "Agent_*.json", "Agent_*1.json" or the bundle file name
    intro: dict[str, str] = field(default_factory=dict)
    perception: dict[str, PerceptionAnswers] = field(default_factory=dict)
    mq: dict[str, list[str | None]] = field(default_factory=dict)
    discussion: list[DiscussionTurn] = field(default_factory=list)
    clues: dict[str, str] = field(default_factory=dict)
    votes: dict[str, str | None] = field(default_factory=dict)
    reasons: dict[str, ReasonText] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)  # alias as written -> role name
    problems: list[Problem] = field(default_factory=list)

    @property
    def detectives(self) -> list[str]:
        """Players with recorded answers (the murderer is scripted and has none)."""
        seen: dict[str, None] = {}
        for mapping in (self.perception, self.mq, self.votes, self.reasons, self.clues):
            seen.update(dict.fromkeys(mapping))
        return list(seen)

    @property
    def targets(self) -> list[str]:
        """Roles questioned in the discussion, in order (ITD)."""
        return [t.target for t in self.discussion if t.target]


# --------------------------------------------------------------------------------------------
# Text cleaning and answer lists

_BLOCKED = re.compile(r"Content is blocked")
_FENCE = re.compile(r"```.*?(?:```|$)", re.S)
_MD_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_RUN_NOTE = re.compile(r"^Result: run success.*$", re.M)


def clean_agent_text(text: str) -> str:
    """Drop provider notes, code blocks (OCR attempts), markdown images and tool-run notes."""
    text = _BLOCKED.sub("", text or "")
    text = _FENCE.sub("", text)
    text = _MD_IMAGE.sub("", text)
    text = _RUN_NOTE.sub("", text)
    return text.strip()


_ITEM_NUMBER = re.compile(r"(?:^|(?<=[\s*#(（]))(\d{1,3})\s*[.、．)）](?!\d)|(?:^|(?<=[\s*#]))(\d{1,3})\.(?=\d)", re.M)
_BOLD = re.compile(r"\*\*\s*(?:答案\s*[:：]?\s*)?([a-dA-D])\s*[.．、)）]")
_AFTER_ANSWER_WORD = re.compile(r"答案\s*[:：]?\s*\**\s*([a-dA-D])(?![A-Za-z])")
_AT_START = re.compile(r"^\s*\**\s*([a-dA-D])(?:\s*[.．、)）:：]|\s*$|[ \t]*\n)")
_AFTER_PUNCT = re.compile(r"[？?：:]\s*\**\s*([a-dA-D])\s*[.．、)）]")
_ANYWHERE = re.compile(r"(?<![A-Za-z])([a-d])\s*[.．]\s*(?=[^\x00-\x7f]|\d)")  # not English prose
_MAX_GAP = 2  # numbered items may skip this many numbers (kept as None)


def _letter(item: str) -> str | None:
    """The answer letter of one item, trying the most explicit shapes first."""
    for pattern in (_BOLD, _AFTER_ANSWER_WORD, _AT_START):
        match = pattern.search(item)
        if match:
            return match.group(1).lower()
    matches = list(_AFTER_PUNCT.finditer(item))
    if matches:
        return matches[-1].group(1).lower()
    match = _ANYWHERE.search(item)
    return match.group(1) if match else None


def _numbered_items(text: str) -> list[tuple[int, str]]:
    """Items of a list numbered 1, 2, 3 … (numbers out of sequence are treated as text)."""
    marks: list[tuple[int, int, int]] = []  # (number, start, content start)
    expected = 1
    for match in _ITEM_NUMBER.finditer(text):
        number = int(match.group(1) or match.group(2))
        if expected <= number <= expected + _MAX_GAP:
            # "1.5" is a decimal unless it is exactly the next item number (e.g. "4.601活动室…")
            if match.group(2) and number != expected:
                continue
            marks.append((number, match.start(), match.end()))
            expected = number + 1
    items = []
    for i, (number, _start, content) in enumerate(marks):
        end = marks[i + 1][1] if i + 1 < len(marks) else len(text)
        items.append((number, text[content:end]))
    return items


def parse_answer_list(text: str) -> list[str | None]:
    """Answer letters by position from an LLM answer list (lenient; never raises).

    Shapes handled: ``1. b``, ``1.b``, ``1.a 2.b …`` on one line, ``1. d. 18岁``, ``1.答案 d. …``,
    ``…？答案: **c. …**``, the question repeated before the answer, and unnumbered lines of
    ``question？d. answer``. Missing numbers become ``None`` so positions stay aligned.
    """
    text = clean_agent_text(text)
    items = _numbered_items(text)
    if items:
        out: list[str | None] = []
        for number, body in items:
            while len(out) < number - 1:
                out.append(None)
            out.append(_letter(body))
        return out
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return [letter for ln in lines if (letter := _letter(ln)) is not None]


_SECTION_HEAD = re.compile(r"(?:^|\n)[ \t]*(?:\d+\s*[.、]\s*)?[*#\s]*(" + "|".join(_SECTIONS) + r")[*\s]*[:：]?[*]*")


def parse_perception(text: str) -> PerceptionAnswers:
    """Split an ``Agent_q`` answer into its three sections and parse each answer list."""
    cleaned = clean_agent_text(text)
    heads = list(_SECTION_HEAD.finditer(cleaned))
    parts: dict[str, str] = {}
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(cleaned)
        parts.setdefault(head.group(1), cleaned[head.end():end])
    return PerceptionAnswers(
        long_text=parse_answer_list(parts.get(SECTION_LONG_TEXT, "")),
        complex_image=parse_answer_list(parts.get(SECTION_COMPLEX_IMAGE, "")),
        simple_image=parse_answer_list(parts.get(SECTION_SIMPLE_IMAGE, "")),
        text=cleaned,
    )


def positional_score(predicted: list[str | None], gold: list[str]) -> tuple[int, int]:
    """(correct, total): prediction i against gold i; missing predictions count as wrong."""
    correct = sum(1 for i, g in enumerate(gold) if i < len(predicted) and predicted[i] == g)
    return correct, len(gold)


# --------------------------------------------------------------------------------------------
# Names, discussion, votes, reasons


class _Names:
    """Resolves names as written to role names: name_key, then aliases, then longest prefix."""

    def __init__(self, roles: list[str], aliases: dict[str, str]):
        self.roles = list(roles)
        self.table = {name_key(r): r for r in roles}
        self.spellings = {r: r for r in roles}  # every written form -> role, for free-text search
        for alias, role in aliases.items():
            target = self.table.get(name_key(role))
            if target:
                self.table[name_key(alias)] = target
                self.spellings[alias] = target

    def resolve(self, label: str) -> str | None:
        return self.table.get(name_key(label)) if label else None

    def at_start(self, text: str) -> tuple[str | None, str]:
        """(role, the label as written) for the name that ``text`` starts with (longest match)."""
        stripped = text.strip().lstrip("*").strip()
        best: tuple[str | None, str] = (None, "")
        for key, role in self.table.items():
            # compare on the folded text, then map back to the written prefix
            for length in range(len(key), len(key) + 3):
                prefix = stripped[:length]
                if name_key(prefix) == key and len(prefix) > len(best[1]):
                    best = (role, prefix)
                    break
        return best


def detect_aliases(names: list[str], roles: list[str], intros: dict[str, str]) -> dict[str, str]:
    """Agent names that are not roles but whose intro says 我叫<role> / 我是<role> (达文西 -> 萨拉)."""
    role_keys = {name_key(r) for r in roles}
    found: dict[str, str] = {}
    for name in names:
        if name_key(name) in role_keys:
            continue
        intro = intros.get(name, "")
        for role in sorted(roles, key=len, reverse=True):
            if re.search(r"我(?:叫|是|的名字是)\s*" + re.escape(role), intro):
                found[name] = role
                break
    return found


_CLUE_TAIL = re.compile(r"(?:\d+\s*[.、]\s*)?[*\s]*提问玩家选项\s*[:：]?[*\s]*$")
_TURN_LABEL = re.compile(r"^\s*([^\n:：]{1,20})[:：]")
_TARGET = re.compile(r"#([A-Za-z])#\s*\.?\s*")
_QUESTION = re.compile(r"提问内容\s*\**\s*[:：]\s*\**\s*(.*)", re.S)
_SHARING = re.compile(r"线索分析分享\s*\**\s*[:：]?\s*\**(.*?)(?=提问玩家选项|$)", re.S)


def parse_discussion_turn(raw: str, names: _Names) -> DiscussionTurn:
    """One ``"<speaker>:<text>"`` turn; a question turn's target is the name after ``#x#.``."""
    text = clean_agent_text(raw)
    label = ""
    match = _TURN_LABEL.match(text)
    # a label is a role name, or short enough to be a name (not the first words of a sentence)
    if match and (names.resolve(match.group(1).strip()) or len(match.group(1).strip()) <= 8):
        label = match.group(1).strip()
        text = text[match.end():].strip()
    turn = DiscussionTurn(speaker=names.resolve(label) or label, text=text, speaker_label=label)
    target = _TARGET.search(text)
    if target:
        role, written = names.at_start(text[target.end():])
        if role is None:
            written = re.split(r"[\s*)）(（，,。:：]", text[target.end():].strip(), maxsplit=1)[0]
        turn.target, turn.target_label = role, written or "?"
    question = _QUESTION.search(text)
    if question:
        turn.question = question.group(1).strip().strip("()（）").strip()
    sharing = _SHARING.search(text)
    if sharing:
        turn.clue_sharing = re.sub(r"\n\s*\d+\s*\.\s*\**\s*$", "", sharing.group(1)).strip().strip("*").strip()
    return turn


def parse_vote(raw: str, names: _Names) -> tuple[str | None, str]:
    """(role voted for, name as written) from ``我认为凶手是：#x#.<name>``; never the letter."""
    text = clean_agent_text(raw)
    match = _TARGET.search(text)
    if match:
        role, written = names.at_start(text[match.end():])
        return role, written or text[match.end():].strip()[:20]
    after = text.split("凶手是", 1)[-1]
    hits = [(after.find(written), -len(written), written) for written in names.spellings if written in after]
    if hits:
        written = min(hits)[2]
        return names.spellings[written], written
    return None, ""


_HEADING = r"\s*\**\s*(?:[（(][^)）\n]{0,40}[)）])?\s*\**\s*[:：]"
_MOTIVE_HEAD = re.compile(r"(?:作案动机|(?<![A-Za-z])Motive)" + _HEADING, re.I)
_METHOD_HEAD = re.compile(r"(?:作案手法|(?<![A-Za-z])(?:Method|Modus Operandi))" + _HEADING, re.I)


def split_motive_method(text: str) -> ReasonText:
    """Split a deduction into motive and method at their headings (any order, 中文 or English)."""
    cleaned = clean_agent_text(text)
    motive_head, method_head = _MOTIVE_HEAD.search(cleaned), _METHOD_HEAD.search(cleaned)
    result = ReasonText(text=cleaned)

    def section(head: re.Match | None, other: re.Match | None) -> str:
        if head is None:
            return ""
        end = other.start() if other is not None and other.start() > head.start() else len(cleaned)
        return cleaned[head.end():end].strip().strip("*").strip()

    result.motive = section(motive_head, method_head)
    result.method = section(method_head, motive_head)
    return result


# --------------------------------------------------------------------------------------------
# Files -> runs


def _load(path: Path, problems: list[Problem], expected: type) -> object | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        problems.append(Problem(file=path.name, message=f"unreadable: {exc}", action="phase skipped", severity="error"))
        return None
    if not isinstance(data, expected):
        problems.append(Problem(file=path.name, message=f"expected a JSON {expected.__name__}, found {type(data).__name__}",
                                action="phase skipped", severity="error"))
        return None
    return data


def _by_role(data: dict, names: _Names, file: str, problems: list[Problem]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in data.items():
        role = names.resolve(key)
        if role is None:
            problems.append(Problem(file=file, location=key, message=f"{key!r} is not a role of this game",
                                    action="skipped", severity="warning"))
            continue
        if not isinstance(value, str):
            problems.append(Problem(file=file, location=key, message="value is not a string", action="skipped", severity="error"))
            continue
        out[role] = value
    return out


def _phase_files(game_dir: Path, suffix: str) -> dict[str, Path]:
    return {p: game_dir / f"Agent_{p}{suffix}.json" for p in _PHASES if (game_dir / f"Agent_{p}{suffix}.json").exists()}


def read_agent_runs(game_dir: Path, roles: list[str], aliases: dict[str, str] | None = None) -> list[AgentRun]:
    """Parse the recorded runs of one game folder: ``Agent_*.json`` (run 1), ``Agent_*1.json`` (run 2).

    ``roles`` are the role names of ``env_p_all.json``; ``aliases`` maps other spellings to them
    (aliases announced in an intro, "我叫<role>", are detected and added). When no ``Agent_*.json``
    exists but ``gpt4_naive_agent.json`` does, that bundle is read as run 1. Returns [] when the
    folder has no recordings.
    """
    game_dir = Path(game_dir)
    if not game_dir.is_dir():
        return []
    sources: list[tuple[int, str, dict[str, object]]] = []
    problems0: list[Problem] = []
    first = _phase_files(game_dir, "")
    if first:
        sources.append((1, "Agent_*.json", {p: path for p, path in first.items()}))
    elif (game_dir / _BUNDLE).exists():
        bundle = _load(game_dir / _BUNDLE, problems0, dict)
        if bundle:
            sources.append((1, _BUNDLE, {p: bundle.get(k) for p, k in _BUNDLE_KEYS.items() if k in bundle}))
    second = _phase_files(game_dir, "1")
    if second:
        sources.append((2, "Agent_*1.json", {p: path for p, path in second.items()}))

    base_aliases = dict(aliases or {})
    intro_for_aliases: dict[str, str] = {}
    runs: list[AgentRun] = []
    for number, label, phases in sources:
        run = AgentRun(run=number, source=label, problems=list(problems0) if number == 1 else [])
        raw = _load_phases(phases, run.problems)
        if "intro" in raw and isinstance(raw["intro"], dict):
            intro_for_aliases = {k: v for k, v in raw["intro"].items() if isinstance(v, str)}
        agent_names = {k for v in raw.values() if isinstance(v, dict) for k in v}
        detected = detect_aliases(sorted(agent_names), roles, intro_for_aliases)
        for alias, role in detected.items():
            if alias not in base_aliases:
                run.problems.append(Problem(file=label, location=alias, severity="info",
                                            message=f"agent name {alias!r} is not a role; its intro names {role!r}",
                                            action=f"{alias!r} read as {role!r}"))
        run.aliases = {**detected, **base_aliases}
        names = _Names(roles, run.aliases)
        _fill_run(run, raw, names)
        runs.append(run)
    return runs


def _load_phases(phases: dict[str, object], problems: list[Problem]) -> dict[str, object]:
    raw: dict[str, object] = {}
    for phase, value in phases.items():
        expected = list if phase == "dis" else dict
        if isinstance(value, Path):
            value = _load(value, problems, expected)
        elif not isinstance(value, expected):
            problems.append(Problem(file=_BUNDLE, location=phase, message="unexpected type", action="phase skipped",
                                    severity="error"))
            value = None
        if value is not None:
            raw[phase] = value
    return raw


def _fill_run(run: AgentRun, raw: dict[str, object], names: _Names) -> None:
    def per_role(phase: str) -> dict[str, str]:
        data = raw.get(phase)
        return _by_role(data, names, f"Agent_{phase}", run.problems) if isinstance(data, dict) else {}

    for role, text in per_role("intro").items():
        cleaned = clean_agent_text(text)
        label = _TURN_LABEL.match(cleaned)
        if label and names.resolve(label.group(1).strip()):
            cleaned = cleaned[label.end():].strip()
        run.intro[role] = cleaned
    for role, text in per_role("q").items():
        run.perception[role] = parse_perception(text)
    for role, text in per_role("MQ").items():
        run.mq[role] = parse_answer_list(text)
    for role, text in per_role("clue").items():
        run.clues[role] = _CLUE_TAIL.sub("", clean_agent_text(text)).strip()
    for role, text in per_role("vote").items():
        voted, written = parse_vote(text, names)
        run.votes[role] = voted
        if voted is None:
            run.problems.append(Problem(file="Agent_vote", location=role, message=f"no role named in vote {text[:40]!r}",
                                        action="vote recorded as None", severity="warning"))
    for role, text in per_role("reason").items():
        run.reasons[role] = split_motive_method(text)
    turns = raw.get("dis")
    if isinstance(turns, list):
        for i, turn in enumerate(turns):
            if not isinstance(turn, str):
                run.problems.append(Problem(file="Agent_dis", location=f"[{i}]", message="turn is not a string",
                                            action="skipped", severity="error"))
                continue
            parsed = parse_discussion_turn(turn, names)
            if parsed.target_label and parsed.target is None:
                run.problems.append(Problem(file="Agent_dis", location=f"[{i}]", severity="warning",
                                            message=f"question target {parsed.target_label!r} is not a role",
                                            action="target recorded as None"))
            run.discussion.append(parsed)
