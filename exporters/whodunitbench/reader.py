"""Read published WhodunitBench game folders (``env_p_all.json`` + ``img/``) into interchange Games.

The reader never raises on bad data: every irregularity becomes a :class:`Problem` (in the game's
``report`` and in ``ReadResult.problems``) saying what was done. Everything needed to write the
file back byte for byte (key orders, ``role-q``, the published name spellings, numbered lists) is
kept in ``game.extra["whodunitbench"]``; see ``writer.py``.

Stages, each a small function: find game folders -> load JSON -> note sibling files -> roles ->
victim/kill -> questions (LS, TRI, MRI, MMR) -> key clue pool -> truth/task/public text -> images.
"""
from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from casebook.images import ImageTooLarge, UnsupportedImage, numeric_sort_key, open_image_safely, sniff_image
from casebook.interchange import (
    ChainGoal,
    ChainNode,
    Character,
    Clue,
    ClueKind,
    Game,
    KeyStatement,
    Kill,
    NodeKind,
    Option,
    Origin,
    Problem,
    Question,
    QuestionKind,
    ReasoningChain,
    TruthManual,
    name_key,
)
from casebook.text import cjk_count
from exporters.common import GBK, ReadResult, decode_text, not_text
from exporters.problems import ProblemLog
from exporters.whodunitbench.layout import (
    GAME_FILE,
    KNOWN_ALIASES,
    POOL_CHAIN_TITLE,
    TOP_LEVEL_KEYS,
    parse_source_level,
    pool_key_level,
    split_reason,
)
from exporters.whodunitbench.mcq import OPTION_LETTERS, parse_inline_mcq, strip_list_numbering

__all__ = ["read_game_folder", "read_whodunitbench", "resolve_name"]

_VARIANT_FILE = re.compile(r"^env_p(_update\d*)?\.json$")
_AGENT_FILE = re.compile(r"^(Agent_\w+|gpt4_naive_agent)\.json$")
_VICTIM = re.compile(r"死者是([^\n]*)")
_LATIN = re.compile(r"[A-Za-z]")
_ROLE_KEYS = {"name", "back", "r_q", "m", "q", "a", "self", "answer"}
_EXT_ALIASES = {".jpeg": ".jpg", ".tif": ".tiff"}


class _Notes(ProblemLog):
    """The shared problem log, for one game folder: files are named ``<folder>/<file>`` (relative
    to the dataset), so reports read the same wherever the dataset lives."""

    def __init__(self, folder: Path) -> None:
        super().__init__(folder.parent)
        self.folder = folder


# --------------------------------------------------------------------------------------------
# Public entry points


def read_whodunitbench(path: Path, aliases: dict[str, dict[str, str]] | None = None) -> ReadResult:
    """Read a ``Dataset/`` folder (one Game per game folder) or a single game folder.

    ``aliases`` adds per-folder name aliases to :data:`KNOWN_ALIASES` (folder -> {alias: role}).
    """
    path = Path(path)
    result = ReadResult()
    if not path.exists():
        result.problems.append(Problem(file=str(path), message="path does not exist", action="nothing read", severity="error"))
        return result
    if not path.is_dir():
        result.problems.append(
            Problem(file=str(path), message="not a folder: expected a Dataset/ folder or one game folder",
                    action="nothing read", severity="error")
        )
        return result
    folders = _game_folders(path)
    if not folders:
        result.problems.append(
            Problem(file=path.name, message=f"no game folder found (no {GAME_FILE} or img/)", action="nothing read",
                    severity="error")
        )
    table = {**KNOWN_ALIASES, **(aliases or {})}
    for folder in folders:
        game, problems = read_game_folder(folder, table.get(folder.name, {}))
        result.problems.extend(problems)
        if game is not None:
            result.games.append(game)
    return result


def read_game_folder(folder: Path, aliases: dict[str, str] | None = None) -> tuple[Game | None, list[Problem]]:
    """Read one game folder; returns (game or None when env_p_all.json is unusable, problems)."""
    notes = _Notes(folder)
    _note_sibling_files(folder, notes)
    data = _load_game_json(folder, notes)
    if data is None:
        return None, notes.items
    game = Game(slug=folder.name, title="", language="zh", origin=Origin.WHODUNITBENCH)
    meta: dict[str, Any] = {"top_key_order": list(data.keys())}
    game.extra["whodunitbench"] = meta
    for key in TOP_LEVEL_KEYS:
        if key not in data:
            notes.add(notes.folder / GAME_FILE, f"missing key {key!r}", action="treated as empty; the export writes it", location=key)
    unknown = {k: v for k, v in data.items() if k not in TOP_LEVEL_KEYS}
    if unknown:
        meta["unknown_keys"] = unknown
        notes.add(notes.folder / GAME_FILE, "unknown top-level keys", action="kept verbatim for export", location=", ".join(unknown), severity="info")

    ju_name = _get(data, "ju_name", str, "", notes)
    game.title = ju_name or folder.name
    meta["ju_name"] = ju_name
    if ju_name and ju_name != folder.name:
        notes.add(notes.folder / GAME_FILE, f"ju_name {ju_name!r} differs from the folder name", action="the folder name is the game id", location="ju_name", severity="info")

    alias_table = _build_alias_table(aliases or {})
    _read_roles(data, game, meta, alias_table, notes)
    for alias, target in (aliases or {}).items():  # e.g. DI7MI_2's agent files call 萨拉 达文西
        ch = game.character(target)
        if ch is not None and game.character(alias) is None:
            ch.aliases.append(alias)
    game.language = _detect_language(game)
    _read_murder_and_victim(data, game, meta, alias_table, notes)
    _read_key_roles(data, game, meta, alias_table, notes)
    _read_role_questions(data, game, meta, notes)
    _read_image_questions(data, game, meta, notes)
    _read_multi_step(data, game, meta, notes)
    _read_pool(data, game, meta, alias_table, notes)
    _read_texts(data, game, meta, notes)
    _read_images(folder, game, notes)
    game.report = notes.items
    return game, notes.items


# --------------------------------------------------------------------------------------------
# Small helpers (public ones are used by the writer and the evaluation runner)


def _build_alias_table(aliases: dict[str, str]) -> dict[str, str]:
    return {name_key(k): v for k, v in aliases.items()}


def resolve_name(name: str, game: Game, alias_table: dict[str, str] | None = None) -> str | None:
    """The role name a published name refers to (NFKC, middle dots folded, aliases), or None."""
    if not isinstance(name, str) or not name.strip():
        return None
    found = game.character(name)
    if found is None and alias_table:
        target = alias_table.get(name_key(name))
        found = game.character(target) if target else None
    return found.name if found else None


def _get(data: dict, key: str, kind: type, default: Any, notes: _Notes, where: str = "") -> Any:
    """``data[key]`` if present and of the expected JSON type, else ``default`` with a problem."""
    if not isinstance(data, dict) or key not in data:
        return default
    value = data[key]
    if isinstance(value, kind) and not (kind is int and isinstance(value, bool)):
        return value
    notes.add(notes.folder / GAME_FILE, f"{key!r} should be a JSON {kind.__name__}, found {type(value).__name__}", action="ignored", location=where or key, severity="error")
    return default


def _game_folders(path: Path) -> list[Path]:
    if (path / GAME_FILE).exists() or (path / "img").is_dir() or any(path.glob("env_p*.json")):
        return [path]
    if (path / "Dataset").is_dir():
        path = path / "Dataset"
    subs = [p for p in path.iterdir() if p.is_dir() and not p.name.startswith(".")]
    games = [p for p in subs if (p / GAME_FILE).exists() or (p / "img").is_dir() or any(p.glob("env_p*.json"))]
    return sorted(games, key=lambda p: numeric_sort_key(p.name))


def _note_sibling_files(folder: Path, notes: _Notes) -> None:
    agent_files = []
    for p in sorted(folder.iterdir(), key=lambda p: p.name):
        if p.is_dir() or p.name == GAME_FILE:
            continue
        if _VARIANT_FILE.match(p.name):
            notes.add(notes.folder / p.name, "ignored: only env_p_all.json is authoritative", action="not imported", severity="info")
        elif _AGENT_FILE.match(p.name):
            agent_files.append(p.name)
        elif not p.name.startswith("."):
            notes.add(notes.folder / p.name, "unexpected file in the game folder", action="ignored", severity="info")
    if agent_files:
        notes.add(notes.folder / ", ".join(agent_files), "recorded agent outputs present", action="not imported; read them with exporters.whodunitbench.agent_logs", severity="info")


def _load_game_json(folder: Path, notes: _Notes) -> dict | None:
    path = folder / GAME_FILE
    if not path.exists():
        notes.add(notes.folder / GAME_FILE, f"{GAME_FILE} is missing", action="game skipped", severity="error")
        return None
    try:
        text, encoding = decode_text(path.read_bytes())
        data = json.loads(text)
    except UnicodeDecodeError as exc:
        notes.add(notes.folder / GAME_FILE, not_text(exc), action="game skipped", location=f"byte {exc.start}", severity="error")
        return None
    except json.JSONDecodeError as exc:
        notes.add(notes.folder / GAME_FILE, f"broken JSON: {exc.msg}", action="game skipped", location=f"line {exc.lineno} column {exc.colno}", severity="error")
        return None
    except OSError as exc:
        notes.add(notes.folder / GAME_FILE, f"cannot read: {(exc.strerror or 'input/output error').lower()}", action="game skipped", severity="error")
        return None
    if encoding == GBK:
        notes.add(notes.folder / GAME_FILE, f"encoded as {encoding}", action=f"read as {encoding}", severity="info")
    if not isinstance(data, dict):
        notes.add(notes.folder / GAME_FILE, f"top level is a JSON {type(data).__name__}, expected an object", action="game skipped", severity="error")
        return None
    return data


def _detect_language(game: Game) -> str:
    """"en" only when the role scripts are mostly non-CJK (a Chinese char ~ an English word)."""
    text = "".join(c.script for c in game.characters)
    cjk = cjk_count(text)
    latin_words = len(re.findall(r"[A-Za-z]+", text))
    return "en" if latin_words > cjk else "zh"


# --------------------------------------------------------------------------------------------
# Roles, murderer, victim, key roles


def _read_roles(data: dict, game: Game, meta: dict, alias_table: dict[str, str], notes: _Notes) -> None:
    roles = _get(data, "role", list, [], notes)
    orders: dict[str, list[str]] = {}
    seen: set[str] = set()
    for idx, role in enumerate(roles):
        where = f"role[{idx}]"
        if not isinstance(role, dict):
            notes.add(notes.folder / GAME_FILE, "role is not an object", action="skipped", location=where, severity="error")
            continue
        name = role.get("name")
        if not isinstance(name, str) or not name.strip():
            notes.add(notes.folder / GAME_FILE, "role has no name", action="skipped", location=where, severity="error")
            continue
        if name_key(name) in seen:
            notes.add(notes.folder / GAME_FILE, f"duplicate role name {name!r}", action="second copy skipped", location=where, severity="error")
            continue
        seen.add(name_key(name))
        orders[name] = list(role.keys())
        unknown = {k: v for k, v in role.items() if k not in _ROLE_KEYS}
        if unknown:
            meta.setdefault("role_unknown_keys", {})[name] = unknown
            notes.add(notes.folder / GAME_FILE, f"unknown role keys {', '.join(unknown)}", action="kept verbatim for export", location=where, severity="info")
        m = role.get("m", 0)
        if m not in (0, 1) or isinstance(m, bool):
            notes.add(notes.folder / GAME_FILE, f"murderer flag is {m!r}, expected 0 or 1", action="treated as 0", location=f"{where}.m")
            m = 0
        ch = Character(
            name=name,
            script=_get(role, "back", str, "", notes, f"{where}.back"),
            is_murderer=m == 1,
            self_intro=_get(role, "self", str, "", notes, f"{where}.self"),
            fixed_answer=_get(role, "answer", str, "", notes, f"{where}.answer"),
        )
        if "back" not in role:
            notes.add(notes.folder / GAME_FILE, f"role {name!r} has no 'back' (script)", action="script left empty", location=where)
        nfkc = unicodedata.normalize("NFKC", name)
        if nfkc != name:
            ch.aliases.append(nfkc)
        game.characters.append(ch)
    meta["role_key_orders"] = orders
    if not game.characters:
        notes.add(notes.folder / GAME_FILE, "no usable role", action="game imported without characters", location="role", severity="error")


def _read_murder_and_victim(data: dict, game: Game, meta: dict, alias_table: dict[str, str], notes: _Notes) -> None:
    flagged = [c.name for c in game.characters if c.is_murderer]
    murder = _get(data, "murder", str, "", notes)
    meta["murder"] = murder
    resolved = resolve_name(murder, game, alias_table) if murder else None
    if len(flagged) != 1:
        notes.add(notes.folder / GAME_FILE, f"{len(flagged)} roles have m == 1 ({', '.join(flagged) or 'none'}), expected exactly one", action="kept as published", location="role[].m", severity="error" if not flagged else "warning")
    if murder and resolved is None:
        notes.add(notes.folder / GAME_FILE, f"murder {murder!r} is not a role name", action="kept the published string", location="murder")
    elif resolved and flagged and resolved not in flagged:
        notes.add(notes.folder / GAME_FILE, f"murder {murder!r} differs from the m == 1 role {flagged[0]!r}", action="the m flag decides who is the murderer", location="murder", severity="error")
    if not flagged and resolved:
        game.character(resolved).is_murderer = True
        notes.add(notes.folder / GAME_FILE, f"no role flagged; {resolved!r} taken from 'murder'", action="m set to 1 on export", location="murder")
    killer = next((c.name for c in game.characters if c.is_murderer), "")

    task_nm = _get(data, "task_nm", str, "", notes)
    match = _VICTIM.search(task_nm)
    if not match:
        return
    victim = match.group(1).strip()
    if not victim:
        notes.add(notes.folder / GAME_FILE, "task_nm says 死者是 but names nobody", action="no victim recorded", location="task_nm")
        return
    existing = game.character(victim)
    if existing is not None:
        existing.is_victim = True
    else:
        game.characters.append(Character(name=victim, playable=False, is_victim=True))
    game.victims.append(existing.name if existing else victim)
    if killer:
        game.kills.append(Kill(killer=killer, victim=game.victims[-1]))


def _read_key_roles(data: dict, game: Game, meta: dict, alias_table: dict[str, str], notes: _Notes) -> None:
    key_roles = _get(data, "key_role", list, [], notes)
    meta["key_role"] = list(key_roles)
    for i, name in enumerate(key_roles):
        resolved = resolve_name(name, game, alias_table)
        if resolved is None:
            notes.add(notes.folder / GAME_FILE, f"key role {name!r} does not resolve to a role", action="kept the published string", location=f"key_role[{i}]")
            continue
        game.character(resolved).key_role = True
        if name != resolved:
            notes.add(notes.folder / GAME_FILE, f"key role {name!r} resolved to role {resolved!r}", action="published spelling kept for export", location=f"key_role[{i}]", severity="info")


# --------------------------------------------------------------------------------------------
# Questions


def _make_question(kind: str, raw: str, answer: Any, notes: _Notes, where: str, number: int | None = None,
                   **fields: Any) -> Question:
    parsed = parse_inline_mcq(raw, number)
    for problem in parsed.problems:
        notes.add(notes.folder / GAME_FILE, f"question {problem}: {raw[:40]!r}", action="raw string kept", location=where)
    if not isinstance(answer, str):
        notes.add(notes.folder / GAME_FILE, f"answer is {answer!r}, not a string", action="answer left empty", location=where, severity="error")
        answer = ""
    options = [Option(text=o) for o in parsed.options]
    letter = answer.strip()
    if len(letter) == 1 and letter in OPTION_LETTERS[: len(options)]:
        options[OPTION_LETTERS.index(letter)].correct = True
    elif answer:
        notes.add(notes.folder / GAME_FILE, f"answer {answer!r} is not one of the option letters", action="kept verbatim, no option marked correct", location=where)
    else:
        notes.add(notes.folder / GAME_FILE, "no answer", action="no option marked correct", location=where)
    question = Question(kind=kind, stem=parsed.stem, options=options, answer=answer, raw=raw, **fields)
    if parsed.number_prefix:
        question.extra["number_prefix"] = parsed.number_prefix
    return question


def _numbered(meta: dict, list_name: str, items: list[str]) -> bool:
    _, numbered = strip_list_numbering(items)
    if numbered:
        meta.setdefault("numbered_lists", []).append(list_name)
    return numbered


def _strings(items: Any, notes: _Notes, where: str) -> list[str]:
    if not isinstance(items, list):
        notes.add(notes.folder / GAME_FILE, f"expected a list, found {type(items).__name__}", action="ignored", location=where, severity="error")
        return []
    good = []
    for i, s in enumerate(items):
        if isinstance(s, str):
            good.append(s)
        else:
            notes.add(notes.folder / GAME_FILE, f"expected a string, found {type(s).__name__}", action="skipped", location=f"{where}[{i}]", severity="error")
    return good


def _read_role_questions(data: dict, game: Game, meta: dict, notes: _Notes) -> None:
    roles = data.get("role") if isinstance(data.get("role"), list) else []
    for idx, role in enumerate(roles):
        if not isinstance(role, dict) or not isinstance(role.get("name"), str) or game.character(role["name"]) is None:
            continue
        name = game.character(role["name"]).name
        where = f"role[{idx}]"
        if "q" in role and not isinstance(role["q"], list):
            notes.add(notes.folder / GAME_FILE, f"role {name!r} q is a {type(role['q']).__name__}, not a list (draft format)", action="its long-script questions were not imported", location=f"{where}.q", severity="error")
            continue
        qs = _strings(role.get("q", []), notes, f"{where}.q")
        answers = role.get("a", [])
        if not isinstance(answers, list):
            notes.add(notes.folder / GAME_FILE, "answers are not a list", action="ignored", location=f"{where}.a", severity="error")
            answers = []
        if len(answers) != len(qs):
            notes.add(notes.folder / GAME_FILE, f"{len(qs)} questions but {len(answers)} answers", action="missing answers left empty; extra answers dropped", location=f"{where}.a")
        numbered = _numbered(meta, f"role:{name}", qs)
        for i, raw in enumerate(qs):
            answer = answers[i] if i < len(answers) else ""
            game.questions.append(
                _make_question(QuestionKind.LONG_SCRIPT, raw, answer, notes, f"{where}.q[{i}]",
                               i + 1 if numbered else None, perspective=name)
            )
        r_q = role.get("r_q")
        mirror = [{"q": q, "ans": a} for q, a in zip(qs, answers, strict=False)]
        if r_q is None:
            notes.add(notes.folder / GAME_FILE, "r_q is missing", action="the export writes it from q/a", location=f"{where}.r_q")
        elif r_q != mirror:
            notes.add(notes.folder / GAME_FILE, f"r_q of {name!r} does not mirror q/a", action="the export writes r_q from q/a", location=f"{where}.r_q")


def _read_image_questions(data: dict, game: Game, meta: dict, notes: _Notes) -> None:
    for key, kind in (("ei_q", QuestionKind.TEXT_IMAGE), ("cxi_q", QuestionKind.MEDIA_IMAGE)):
        block = _get(data, key, dict, {}, notes)
        qs = _strings(block.get("key_q", []), notes, f"{key}.key_q")
        answers = block.get("key_ans", [])
        if not isinstance(answers, list):
            notes.add(notes.folder / GAME_FILE, "answers are not a list", action="ignored", location=f"{key}.key_ans", severity="error")
            answers = []
        if len(answers) != len(qs):
            notes.add(notes.folder / GAME_FILE, f"{len(qs)} questions but {len(answers)} answers", action="missing answers left empty", location=key)
        numbered = _numbered(meta, key, qs)
        for i, raw in enumerate(qs):
            game.questions.append(
                _make_question(kind, raw, answers[i] if i < len(answers) else "", notes, f"{key}.key_q[{i}]",
                               i + 1 if numbered else None)
            )


def _read_multi_step(data: dict, game: Game, meta: dict, notes: _Notes) -> None:
    items = _get(data, "key_clues_questions", list, [], notes)
    mirror = _get(data, "key_clue_q", dict, {}, notes)
    key_q = mirror.get("key_q", []) if isinstance(mirror.get("key_q", []), list) else []
    key_ans = mirror.get("key_ans", []) if isinstance(mirror.get("key_ans", []), list) else []
    key_sc = mirror.get("key_sc", []) if isinstance(mirror.get("key_sc", []), list) else []
    if not items and key_q:
        # only the parallel arrays survive: rebuild the items from them rather than lose the questions
        stripped, _ = strip_list_numbering([s if isinstance(s, str) else "" for s in key_q])
        items = [{"q": q, "ans": key_ans[i] if i < len(key_ans) else "", "source": key_sc[i] if i < len(key_sc) else ""}
                 for i, q in enumerate(stripped)]
        notes.add(notes.folder / GAME_FILE, f"empty or missing; {len(items)} questions taken from key_clue_q", action="the export writes both", location="key_clues_questions", severity="warning")
    questions: list[Question] = []
    for i, item in enumerate(items):
        where = f"key_clues_questions[{i}]"
        if not isinstance(item, dict) or not isinstance(item.get("q"), str):
            notes.add(notes.folder / GAME_FILE, "item is not an object with a string 'q'", action="skipped", location=where, severity="error")
            continue
        source = item.get("source", "")
        if not isinstance(source, str):
            notes.add(notes.folder / GAME_FILE, f"source is {source!r}", action="treated as empty", location=where, severity="error")
            source = ""
        owners, level = parse_source_level(source) if source else ("", 0)
        if not source:
            notes.add(notes.folder / GAME_FILE, "no source code", action="level 0 assumed", location=where)
        q = _make_question(QuestionKind.MULTI_STEP, item["q"], item.get("ans", ""), notes, where, source=source, level=level)
        q.extra["owners"] = owners
        if list(item.keys()) != ["q", "ans", "source"]:
            q.extra["key_order"] = list(item.keys())
        questions.append(q)
    numbered = _numbered(meta, "key_clue_q", [s for s in key_q if isinstance(s, str)]) if key_q else False
    if mirror and (len(key_q) != len(questions) or len(key_ans) != len(questions) or len(key_sc) != len(questions)):
        notes.add(notes.folder / GAME_FILE, f"key_clue_q has {len(key_q)}/{len(key_ans)}/{len(key_sc)} items, "
                  f"key_clues_questions {len(questions)}", action="the export rewrites key_clue_q from key_clues_questions", location="key_clue_q")
    for i, q in enumerate(questions):
        if i < len(key_q) and isinstance(key_q[i], str):
            if key_q[i] != q.raw:  # numbered (XIAOHUA, Pu) or really different
                q.extra["key_q"] = key_q[i]
            expected = f"{i + 1}.{q.raw}" if numbered else q.raw
            if key_q[i] != expected:
                notes.add(notes.folder / GAME_FILE, "differs from key_clues_questions q", action="kept verbatim for export", location=f"key_clue_q.key_q[{i}]", severity="info")
        if i < len(key_ans) and key_ans[i] != q.answer:
            notes.add(notes.folder / GAME_FILE, f"{key_ans[i]!r} differs from ans {q.answer!r}", action="the export writes ans", location=f"key_clue_q.key_ans[{i}]")
        if i < len(key_sc) and key_sc[i] != q.source:
            notes.add(notes.folder / GAME_FILE, f"{key_sc[i]!r} differs from source {q.source!r}", action="the export writes source", location=f"key_clue_q.key_sc[{i}]")
    game.questions.extend(questions)


# --------------------------------------------------------------------------------------------
# Key clue pool, texts


def _read_pool(data: dict, game: Game, meta: dict, alias_table: dict[str, str], notes: _Notes) -> None:
    pool = _get(data, "key_clues_pool", dict, {}, notes)
    meta["pool_key_order"] = list(pool.keys())
    chain = ReasoningChain(goal=ChainGoal.OTHER, title=POOL_CHAIN_TITLE)
    for key, statements in pool.items():
        texts = _strings(statements, notes, f"key_clues_pool[{key!r}]")
        dupes = [t for t, n in Counter(texts).items() if n > 1]
        if dupes:
            notes.add(notes.folder / GAME_FILE, f"{len(dupes)} duplicated statement(s), e.g. {dupes[0][:30]!r}", action="kept for export fidelity", location=f"key_clues_pool[{key!r}]", severity="info")
        level = pool_key_level(key)
        if level is not None:
            for j, text in enumerate(texts, start=1):
                chain.nodes.append(ChainNode(
                    key=f"{key}.{j}", kind=NodeKind.DIRECT if level == 0 else NodeKind.INFERRED, text=text,
                    level=level, extra={"pool_key": key},
                ))
            continue
        if resolve_name(key, game, alias_table) is None:
            notes.add(notes.folder / GAME_FILE, f"pool key {key!r} is neither a level nor a role name", action="kept as key statements of that published owner", location=f"key_clues_pool[{key!r}]")
        game.key_statements.extend(KeyStatement(owner=key, text=t) for t in texts)
    if chain.nodes:
        _link_pool_levels(chain)
        game.chains.append(chain)


def _link_pool_levels(chain: ReasoningChain) -> None:
    """Parent links from the pool's ``k-step`` structure: a k-step statement rests on the level below.

    The published pool only groups statements by level; linking each to every statement one level
    down (the nearest lower level present) makes the hop level computable in the chain editor.
    """
    by_level: dict[int, list[str]] = {}
    for node in chain.nodes:
        by_level.setdefault(node.level, []).append(node.key)
    for node in chain.nodes:
        lower = [lv for lv in by_level if lv < node.level]
        node.parents = list(by_level[max(lower)]) if node.level and lower else []


def _read_texts(data: dict, game: Game, meta: dict, notes: _Notes) -> None:
    game.public_clue_text = _get(data, "public_clue", str, "", notes)
    reason = _get(data, "reason", str, "", notes)
    motive, method, labelled = split_reason(reason)
    game.truth = TruthManual(text=reason, motive=motive, method=method)
    if reason and not labelled:
        notes.add(notes.folder / GAME_FILE, "reason has no 作案动机：/作案手法： labels", action="motive and method left empty", location="reason", severity="info")
    elif labelled and (not motive or not method):
        notes.add(notes.folder / GAME_FILE, "reason has only one of the motive/method labels", action="the other left empty", location="reason", severity="info")
    game.task_prompts["civilian"] = _get(data, "task_nm", str, "", notes)
    game.task_prompts["murderer"] = _get(data, "task_m", str, "", notes)
    role_q = _get(data, "role-q", dict, {}, notes)
    meta["role_q"] = role_q


# --------------------------------------------------------------------------------------------
# Images


def _read_images(folder: Path, game: Game, notes: _Notes) -> None:
    img_dir = folder / "img"
    if not img_dir.is_dir():
        notes.add(notes.folder / "img", "no img/ folder", action="game imported without images")
        return
    files = sorted((p for p in img_dir.iterdir() if p.is_file() and not p.name.startswith(".")),
                   key=lambda p: numeric_sort_key(p.name))
    by_hash: dict[str, str] = {}
    for path in files:
        rel = f"img/{path.name}"
        try:
            data = path.read_bytes()
        except OSError as exc:
            notes.add(notes.folder / rel, f"cannot read: {exc.strerror or exc}", action="skipped", severity="error")
            continue
        try:
            media_type, ext = sniff_image(data)
            open_image_safely(data, reduce=True)
        except (UnsupportedImage, ImageTooLarge) as exc:
            notes.add(notes.folder / rel, str(exc), action="skipped", severity="error")
            continue
        suffix = _EXT_ALIASES.get(path.suffix.lower(), path.suffix.lower())
        if suffix != ext:
            kind = media_type.split("/")[1].upper()
            notes.add(notes.folder / rel, f"{path.name} is really {kind}; kept the name, media type sniffed", action="", severity="info")
        digest = hashlib.sha256(data).hexdigest()
        if digest in by_hash:
            notes.add(notes.folder / rel, f"byte-identical to img/{by_hash[digest]}", action="kept both (export fidelity)", severity="info")
        else:
            by_hash[digest] = path.name
        game.clues.append(Clue(key=rel, kind=ClueKind.IMAGE, title=path.name, filename=path.name, data=data,
                               media_type=media_type))
    _note_numbering_gaps([p.name for p in files], notes)


def _note_numbering_gaps(names: list[str], notes: _Notes) -> None:
    """Report numbered image series with holes (DAMAIF's image_1.jpg is missing upstream)."""
    series: dict[str, set[int]] = defaultdict(set)
    exts: dict[str, str] = {}
    for name in names:
        match = re.fullmatch(r"(\D*?)(\d+)(\.\w+)", name)
        if match:
            series[match.group(1)].add(int(match.group(2)))
            exts.setdefault(match.group(1), match.group(3))
    for prefix, numbers in series.items():
        missing = sorted(set(range(1, max(numbers) + 1)) - numbers)
        if missing:
            shown = ", ".join(f"{prefix}{n}{exts[prefix]}" for n in missing[:5]) + (" …" if len(missing) > 5 else "")
            notes.add(notes.folder / "img", f"numbering has gaps: {shown} missing", action="imported the images that exist")
