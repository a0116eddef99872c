"""Write interchange Games as WhodunitBench folders: ``Dataset/<slug>/env_p_all.json`` + ``img/``.

The file is plain ``json.dumps(obj)`` with default arguments, like every published file, so an
unedited imported game is written back byte for byte: key orders, ``role-q``, the published name
spellings and numbered lists come from ``game.extra["whodunitbench"]`` (see ``reader.py``), and an
unedited question (``raw`` kept) is written as published. Edited or new items (``raw`` empty) are
rendered with :func:`render_inline_mcq`; mirrors (``r_q``, ``key_clue_q``) are always derived, so
they cannot drift from what they mirror.
"""
from __future__ import annotations

import json
import logging
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from casebook.images import UnsupportedImage, sniff_image
from casebook.interchange import ChainNode, Character, Game, Question, QuestionKind, name_key
from exporters.whodunitbench.layout import GAME_FILE, POOL_CHAIN_TITLE, TOP_LEVEL_KEYS, pool_key_level, split_reason
from exporters.whodunitbench.mcq import render_inline_mcq

__all__ = ["build_env_p_all", "write_whodunitbench", "DEFAULT_TASK_CIVILIAN", "DEFAULT_TASK_MURDERER"]

log = logging.getLogger(__name__)

# The published task prompts (10 of 16 folders use exactly these); used for games made in Casebook.
DEFAULT_TASK_CIVILIAN = (
    "请通过手头上的所有线索完成以下任务\n1.推理出杀害死者的凶手\n2.推理出作案手法，包括如何制造的密室和凶手如何能够有不在场证明等。\n"
    "3.推理出凶手的作案动机\n4.如果死者死的时候并没有任何嫌疑人进入只有他一个人，你就需要解开死者密室之谜，即凶手是如何杀害死者的。\n"
    "5.你要记住你只能通过手头上的线索来进行推理，不能假设一些事情，比如可能有密道，因为线索并没有说有密道。\n"
)
DEFAULT_TASK_MURDERER = "请通过手头上的所有线索完成以下任务\n1. 隐瞒好自己是凶手阵营\n2. 利用手头上的线索给自己辩护\n"

_ROLE_ORDER = ["name", "back", "r_q", "m", "q", "a"]
_MURDERER_ROLE_ORDER = ["name", "back", "r_q", "self", "answer", "m", "q", "a"]


# --------------------------------------------------------------------------------------------
# Public entry points


def write_whodunitbench(games: list[Game], out_dir: Path) -> list[Path]:
    """Write each game to ``out_dir/Dataset/<slug>/`` and return the files written.

    Raises ``ValueError`` (before writing anything) when a slug is unusable as a folder name or
    two games share a slug.
    """
    out_dir = Path(out_dir)
    seen: dict[str, str] = {}
    for game in games:
        _check_slug(game.slug)
        key = game.slug.casefold()
        if key in seen:
            raise ValueError(f"two games would be written to the same folder Dataset/{game.slug} "
                             f"({seen[key]!r} and {game.title!r}); give them distinct slugs")
        seen[key] = game.title
    written: list[Path] = []
    for game in games:
        folder = out_dir / "Dataset" / game.slug
        folder.mkdir(parents=True, exist_ok=True)
        env = build_env_p_all(game)
        target = folder / GAME_FILE
        _atomic_write(target, json.dumps(env).encode("ascii"))
        written.append(target)
        written.extend(_write_images(game, folder / "img"))
    return written


def build_env_p_all(game: Game) -> dict[str, Any]:
    """The ``env_p_all.json`` object of a game, keys in the stored (else the usual) order."""
    meta = game.extra.get("whodunitbench", {}) or {}
    numbered = set(meta.get("numbered_lists", []))
    by_kind = {kind: game.questions_of(kind) for kind in (
        QuestionKind.LONG_SCRIPT, QuestionKind.TEXT_IMAGE, QuestionKind.MEDIA_IMAGE, QuestionKind.MULTI_STEP)}
    mmr = by_kind[QuestionKind.MULTI_STEP]
    mmr_strings = _question_strings(mmr, numbered=False)
    values: dict[str, Any] = {
        "key_clues_pool": _pool(game, meta),
        "role-q": meta.get("role_q", {}),
        "public_clue": game.public_clue_text,
        "key_clues_questions": [_mmr_item(q, s) for q, s in zip(mmr, mmr_strings, strict=True)],
        "role": _roles(game, meta, numbered),
        "key_clue_q": _key_clue_q(mmr, mmr_strings, "key_clue_q" in numbered),
        "ei_q": _image_block(by_kind[QuestionKind.TEXT_IMAGE], "ei_q" in numbered),
        "cxi_q": _image_block(by_kind[QuestionKind.MEDIA_IMAGE], "cxi_q" in numbered),
        "ju_name": game.title,
        "task_nm": _task_civilian(game),
        "task_m": game.task_prompts.get("murderer") or DEFAULT_TASK_MURDERER,
        "key_role": _key_roles(game, meta),
        "murder": _murder(game, meta),
        "reason": _reason(game),
    }
    values.update(meta.get("unknown_keys", {}))
    order = [k for k in meta.get("top_key_order", []) if k in values]
    order += [k for k in TOP_LEVEL_KEYS if k not in order]
    return {k: values[k] for k in order}


# --------------------------------------------------------------------------------------------
# Questions


def _answer(q: Question) -> str:
    """The correct letters from the options, else the published answer (e.g. Monv's free text)."""
    return q.answer_letters or q.answer


def _question_strings(questions: list[Question], numbered: bool) -> list[str]:
    """Published strings for unedited questions, rendered ones for edited/new (``raw`` empty)."""
    out = []
    for i, q in enumerate(questions, start=1):
        prefix = q.extra.get("number_prefix", "")
        if q.raw:
            body = q.raw[len(prefix):] if prefix and q.raw.startswith(prefix) else q.raw
        else:
            body = render_inline_mcq(q.stem, [o.text for o in q.options])
        out.append(f"{i}.{body}" if numbered else body)
    return out


def _mmr_item(q: Question, text: str) -> dict[str, Any]:
    values = {"q": text, "ans": _answer(q), "source": q.source or _default_source(q)}
    order = q.extra.get("key_order") or ["q", "ans", "source"]
    return {k: values[k] for k in order if k in values} | {k: v for k, v in values.items() if k not in order}


def _default_source(q: Question) -> str:
    """A source code for a question made in Casebook: ``p`` / ``p-<level>`` (public chain)."""
    return "p" if not q.level else f"p-{q.level}"


def _key_clue_q(mmr: list[Question], strings: list[str], numbered: bool) -> dict[str, list[str]]:
    key_q = []
    for i, (q, text) in enumerate(zip(mmr, strings, strict=True), start=1):
        stored = q.extra.get("key_q")
        # a stored string that is only "<n>." + q is renumbered; anything else is kept verbatim
        if q.raw and isinstance(stored, str) and not re.fullmatch(r"\d+\." + re.escape(q.raw), stored):
            key_q.append(stored)
        else:
            key_q.append(f"{i}.{text}" if numbered else text)
    return {"key_q": key_q, "key_ans": [_answer(q) for q in mmr], "key_sc": [q.source or _default_source(q) for q in mmr]}


def _image_block(questions: list[Question], numbered: bool) -> dict[str, list[str]]:
    return {"key_q": _question_strings(questions, numbered), "key_ans": [_answer(q) for q in questions]}


# --------------------------------------------------------------------------------------------
# Roles and names


def _roles(game: Game, meta: dict, numbered: set[str]) -> list[dict[str, Any]]:
    players = [c for c in game.characters if c.playable]
    keys = {name_key(c.name) for c in players}
    orphans = [q for q in game.questions_of(QuestionKind.LONG_SCRIPT) if name_key(q.perspective) not in keys]
    if orphans:
        log.warning("%s: %d long-script question(s) belong to no playable role (%s); not written", game.slug,
                    len(orphans), ", ".join(sorted({q.perspective or "no perspective" for q in orphans})))
    return [_role(c, game, meta, numbered) for c in players]


def _role(ch: Character, game: Game, meta: dict, numbered: set[str]) -> dict[str, Any]:
    mine = [q for q in game.questions_of(QuestionKind.LONG_SCRIPT) if name_key(q.perspective) == name_key(ch.name)]
    strings = _question_strings(mine, f"role:{ch.name}" in numbered)
    answers = [_answer(q) for q in mine]
    values: dict[str, Any] = {
        "name": ch.name,
        "back": ch.script,
        "r_q": [{"q": s, "ans": a} for s, a in zip(strings, answers, strict=True)],
        "self": ch.self_intro,
        "answer": ch.fixed_answer,
        "m": 1 if ch.is_murderer else 0,
        "q": strings,
        "a": answers,
    }
    unknown = meta.get("role_unknown_keys", {}).get(ch.name, {})
    values.update(unknown)
    default = _MURDERER_ROLE_ORDER if ch.is_murderer else _ROLE_ORDER
    order = meta.get("role_key_orders", {}).get(ch.name)
    if not order or (ch.is_murderer and "self" not in order):
        order = default + [k for k in unknown if k not in default]
    else:
        order = order + [k for k in default if k not in order]
    return {k: values[k] for k in order if k in values}


def _key_roles(game: Game, meta: dict) -> list[str]:
    """The published ``key_role`` list when it still names the flagged roles, else the flags."""
    flagged = [c.name for c in game.characters if c.key_role]
    stored = meta.get("key_role")
    if isinstance(stored, list):
        resolved = {found.name for s in stored if (found := game.character(s)) is not None}
        if resolved == set(flagged):
            return stored
    return flagged


def _murder(game: Game, meta: dict) -> str:
    murderers = [c.name for c in game.characters if c.is_murderer] or [k.killer for k in game.kills]
    stored = meta.get("murder")
    if isinstance(stored, str) and stored:
        found = game.character(stored)
        if (found is not None and found.name in murderers) or (found is None and not murderers):
            return stored
    return murderers[0] if murderers else ""


def _task_civilian(game: Game) -> str:
    text = game.task_prompts.get("civilian")
    if text:
        return text
    victims = [v for v in game.victims if v]
    return (f"死者是{'、'.join(victims)}\n" if victims else "") + DEFAULT_TASK_CIVILIAN


def _reason(game: Game) -> str:
    """The published ``reason`` when motive/method still match it, else a labelled rewrite."""
    truth = game.truth
    motive, method, labelled = split_reason(truth.text)
    if truth.text and ((motive, method) == (truth.motive.strip(), truth.method.strip())
                       or (not labelled and not truth.motive and not truth.method)):
        return truth.text
    if not truth.motive and not truth.method:
        return truth.text
    return f"\n作案动机：\n{truth.motive.strip()}\n\n作案手法：\n{truth.method.strip()}"


# --------------------------------------------------------------------------------------------
# Key clue pool


def _node_levels(nodes: list[ChainNode]) -> dict[str, int]:
    """Declared level, else hop = longest path from a direct clue (parents first)."""
    by_key = {n.key: n for n in nodes}
    levels: dict[str, int] = {}

    def level(node: ChainNode, trail: frozenset[str]) -> int:
        if node.key in levels:
            return levels[node.key]
        if node.level is not None:
            value = node.level
        else:
            parents = [by_key[p] for p in node.parents if p in by_key and p not in trail]
            value = 1 + max((level(p, trail | {node.key}) for p in parents), default=-1)
        levels[node.key] = value
        return value

    for n in nodes:
        level(n, frozenset())
    return levels


def _pool(game: Game, meta: dict) -> dict[str, list[str]]:
    chains = [c for c in game.chains if c.title == POOL_CHAIN_TITLE] or game.chains
    groups: dict[str, list[str]] = {}
    for chain in chains:  # levels per chain: node keys may repeat across chains
        levels = _node_levels(chain.nodes)
        for n in chain.nodes:
            key = n.extra.get("pool_key") or ("p" if levels[n.key] == 0 else f"{levels[n.key]}-step")
            groups.setdefault(key, []).append(n.text)
    stored = [k for k in meta.get("pool_key_order", []) if isinstance(k, str)]
    owner_key = {name_key(k): k for k in stored if pool_key_level(k) is None}
    owners: dict[str, list[str]] = {}
    for ks in game.key_statements:
        key = owner_key.get(name_key(ks.owner), ks.owner)
        owners.setdefault(key, []).append(ks.text)
    values = {**{k: [] for k in stored}, **groups, **owners}
    new_levels = sorted((k for k in groups if k not in stored), key=lambda k: pool_key_level(k) or 0)
    new_owners = [k for k in owners if k not in stored]
    return {k: values[k] for k in stored + new_levels + new_owners}


# --------------------------------------------------------------------------------------------
# Files


def _check_slug(slug: str) -> None:
    if not slug or slug.strip() != slug or slug in {".", ".."} or any(c in slug for c in "/\\\0"):
        raise ValueError(f"game slug {slug!r} cannot be used as a folder name under Dataset/")


def _atomic_write(path: Path, data: bytes) -> None:
    """Write via a temporary file in the same folder, so a crash never leaves half a file."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _write_images(game: Game, img_dir: Path) -> list[Path]:
    written: list[Path] = []
    used: set[str] = set()
    for n, clue in enumerate((c for c in game.clues if c.kind == "image"), start=1):
        if not clue.data:
            log.warning("%s: image clue %s has no bytes; not written", game.slug, clue.key)
            continue
        name = Path((clue.filename or clue.key or "").replace("\\", "/")).name
        if not name or name in {".", ".."}:
            try:
                ext = sniff_image(clue.data)[1]
            except UnsupportedImage:
                ext = ".bin"
            name = f"image_{n}{ext}"
        base, dot, ext = name.rpartition(".")
        stem = base if dot else name
        suffix = f".{ext}" if dot else ""
        candidate, k = name, 1
        while candidate.casefold() in used:
            k += 1
            candidate = f"{stem}-{k}{suffix}"
        used.add(candidate.casefold())
        img_dir.mkdir(parents=True, exist_ok=True)
        target = img_dir / candidate
        _atomic_write(target, clue.data)
        written.append(target)
    return written
