"""The stages ("agents") of a synthesis run: Outline → Character → Critic → Clue → QA.

Each stage function takes the :class:`Asker` (one recorded request at a time) and the earlier
stages' outputs, and returns its own output as plain JSON-able data. Problems that do not stop a
stage (a renamed character, a second murderer flag) are recorded with the request that caused them.
"""
from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from casebook.interchange import name_key

from . import prompts, shapes
from .replies import parse_reply


class StageFailed(Exception):
    """A stage could not get a usable reply; ``reply`` is the last raw text (shown to the user)."""

    def __init__(self, stage: str, message: str, reply: str = "") -> None:
        super().__init__(f"{stage}: {message}")
        self.stage, self.message, self.reply = stage, message, reply


@dataclass
class Asker:
    """Sends one stage request through the LLM client and records it (prompt, reply, usage, cost)."""

    client: Any  # casebook.llm.LLMClient
    language: str
    record: Callable[..., Any]  # writes and returns one StageRecord
    max_tokens: int = 3000
    round: int = 0
    progress: Callable[[str], None] = lambda label: None
    last: Any = None  # the StageRecord of the last answered request

    def __call__(self, stage: str, schema: dict[str, Any], sections: list[tuple[str, Any]], *, key: str = "",
                 **fmt: Any) -> dict[str, Any]:
        from casebook.llm import LLMError

        self.progress(f"{stage}{': ' + key if key else ''}")
        messages = prompts.build(stage, self.language, sections, **fmt)
        repairs: list[str] = []

        def parse(text: str) -> Any:
            parsed = parse_reply(text)
            value = shapes.conform(parsed.value, schema)
            repairs[:] = parsed.repairs
            return value

        started = time.monotonic()
        try:
            reply = self.client.chat_reply(messages, schema, name=stage, parse=parse, max_tokens=self.max_tokens)
        except LLMError as exc:
            self.record(stage=stage, key=key, round=self.round, messages=messages, reply=exc.reply, parsed=None,
                        problems=[], usage=exc.usage, ok=False, error=str(exc), seconds=time.monotonic() - started)
            raise StageFailed(stage, str(exc), exc.reply) from exc
        problems = repairs + [f"attempt failed: {e}" for e in reply.errors]
        self.last = self.record(stage=stage, key=key, round=self.round, messages=messages, reply=reply.text, parsed=reply.value,
                    problems=problems, usage=reply.usage, ok=True, error="", seconds=time.monotonic() - started)
        return reply.value

    def note(self, problem: str) -> None:
        """A problem the stage found in the reply it just recorded (kept with that request)."""
        if self.last is not None:
            self.last.problems = [*self.last.problems, problem]
            self.last.save(update_fields=["problems"])


# --------------------------------------------------------------------------------------------


def outline(ask: Asker, settings: dict[str, Any]) -> dict[str, Any]:
    wanted = {k: settings.get(k) for k in ("players", "language", "theme", "setting", "tone") if settings.get(k)}
    result = ask("outline", shapes.OUTLINE, [("settings", wanted)], players=settings["players"])
    return _dedupe_characters(result)


def _dedupe_characters(result: dict[str, Any]) -> dict[str, Any]:
    seen: set[str] = set()
    kept = []
    for character in result["characters"]:
        key = name_key(character["name"])
        if key and key not in seen and key != name_key(result["victim"]["name"]):
            seen.add(key)
            kept.append(character)
    return {**result, "characters": kept}


def characters(ask: Asker, outline_: dict[str, Any], feedback: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """One request per character; the outline's name wins over a name the model changed."""
    written = []
    for person in outline_["characters"]:
        sections: list[tuple[str, Any]] = [("outline", outline_), ("character", person["name"])]
        if feedback and feedback.get(name_key(person["name"])):
            sections.append(("feedback", feedback[name_key(person["name"])]))
        reply = ask("character", shapes.CHARACTER, sections, key=person["name"])
        if name_key(reply["name"]) != name_key(person["name"]):
            ask.note(f"character stage renamed {person['name']!r} to {reply['name']!r}; kept the outline's name")
        written.append({"name": person["name"], "back": reply["back"], "m": 1 if reply["m"] else 0})
    return written


def critic(ask: Asker, outline_: dict[str, Any], scripts: list[dict[str, Any]]) -> dict[str, Any]:
    return ask("critic", shapes.CRITIC, [("outline", outline_), ("scripts", prompts.render_scripts(scripts))])


def refine(ask: Asker, outline_: dict[str, Any], review: dict[str, Any]) -> dict[str, Any]:
    """The outline revised with the critic's suggestions; character names are kept as they were."""
    revised = ask("refine", shapes.OUTLINE, [("outline", outline_), ("review", review["outline_suggestions"])])
    revised = _dedupe_characters(revised)
    old = outline_["characters"]
    if [name_key(c["name"]) for c in revised["characters"]] != [name_key(c["name"]) for c in old]:
        ask.note("the refined outline changed the cast; kept the original names")
        by_index = revised["characters"] + old[len(revised["characters"]):]
        revised["characters"] = [{**by_index[i], "name": c["name"]} for i, c in enumerate(old)]
    return revised


_BRACKETS = re.compile(r"[\[［【]([^\[\]［］【】\n]{4,400})[\]］】]")


def bracketed_pictures(scripts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Picture descriptions written inline in square brackets, numbered from 1, with their owner."""
    found = []
    for script in scripts:
        for match in _BRACKETS.finditer(script["back"]):
            found.append({"index": len(found) + 1, "owner": script["name"], "description": match.group(1).strip()})
    return found


def clues(ask: Asker, scripts: list[dict[str, Any]]) -> dict[str, Any]:
    pictures = bracketed_pictures(scripts)
    listing = "\n".join(f"{p['index']}. ({p['owner']}) {p['description']}" for p in pictures) or "-"
    reply = ask("clues", shapes.CLUES, [("scripts", prompts.render_scripts(scripts)), ("image", listing)])
    kinds = {item["index"]: item for item in reply["images"]}
    images = []
    for picture in pictures:
        typed = kinds.get(picture["index"], {})
        images.append({**picture, "kind": typed.get("kind") or "media_rich", "visible_text": typed.get("visible_text", "")})
    public = [text for text in (c.strip() for c in reply["public_clues"]) if text]
    return {"public": public, "images": images}


def qa(ask: Asker, outline_: dict[str, Any], scripts: list[dict[str, Any]], clues_: dict[str, Any],
       per_script: int = 4, per_image: int = 3) -> dict[str, Any]:
    """Clue pool, then long-script, image and multi-hop MCQs, then the motive/method ground truth."""
    listed_clues = [f"clue:public-{i}: {text}" for i, text in enumerate(clues_["public"], 1)]
    listed_clues += [f"clue:img-{p['index']}: {p['description']}" for p in clues_["images"]]
    all_scripts = prompts.render_scripts(scripts)
    pool = ask("pool", shapes.POOL, [("scripts", all_scripts), ("clues", "\n".join(listed_clues) or "-")])
    long_script = {}
    for script in scripts:
        long_script[script["name"]] = ask("long_script", shapes.LONG_SCRIPT, [("script", script["back"])],
                                          key=script["name"], count=per_script)["questions"]
    image = {}
    for picture in clues_["images"]:
        image[str(picture["index"])] = ask(
            "image", shapes.IMAGE, [("scripts", all_scripts), ("image", f"{picture['kind']}: {picture['description']}\n"
                                                                         f"{picture['visible_text']}")],
            key=f"img-{picture['index']}", count=per_image)["questions"]
    multi_hop = ask("multi_hop", shapes.MULTI_HOP, [("pool", pool)])["questions"]
    cmd = ask("cmd", shapes.CMD, [("outline", outline_), ("scripts", all_scripts)])
    return {"pool": pool, "long_script": long_script, "image": image, "multi_hop": multi_hop, "cmd": cmd}
