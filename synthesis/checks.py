"""Grounding and consistency checks of a synthetic draft: what a reviewer must look at first.

Synthetic content is checked, not trusted. Each finding says which rule, where, and why; an
``error`` means the draft is wrong as it stands (e.g. two murderers), a ``warning`` that a person
should confirm it (e.g. a quote not found word for word in its script).
"""
from __future__ import annotations

from typing import Any

from casebook import interchange as ix
from casebook.interchange import name_key

from .assemble import pool_nodes


def _finding(check: str, severity: str, message: str, where: str = "") -> dict[str, str]:
    return {"check": check, "severity": severity, "message": message, "where": where}


def _mentions(text: str, name: str) -> bool:
    if not name:
        return False
    folded = "".join(text.split()).casefold()
    return name_key(name) in folded or name.casefold() in text.casefold()


def run_checks(game: ix.Game, outputs: dict[str, Any]) -> list[dict[str, str]]:
    found: list[dict[str, str]] = []
    murderers = [c.name for c in game.characters if c.is_murderer]
    if len(murderers) != 1:
        found.append(_finding("one_murderer", "error",
                              f"expected exactly one murderer, found {len(murderers)}"
                              + (f": {', '.join(murderers)}" if murderers else "")))
    outline = outputs.get("outline", {})
    named = {name_key(c.name) for c in game.characters}
    for i, step in enumerate(outline.get("timeline", []), 1):
        if step["character"] and name_key(step["character"]) not in named:
            found.append(_finding("timeline_character", "error",
                                  f"the timeline names {step['character']!r}, who is not a character", f"timeline #{i}"))
    for clue in game.clues:
        for name in murderers:
            murderer = game.character(name)
            aliases = [name, *(murderer.aliases if murderer else [])]
            if any(_mentions(clue.text, a) or _mentions(clue.ocr_text, a) for a in aliases):
                found.append(_finding("clue_names_murderer", "error", f"clue {clue.key} names the murderer {name}", clue.key))
    for character in game.characters:
        if character.playable and not character.script.strip():
            found.append(_finding("script", "error", f"{character.name} has no role script", character.name))

    chain = game.chains[0] if game.chains else None
    nodes = {n.key: n for n in chain.nodes} if chain else {}
    qa = outputs.get("qa") or {}
    if qa:
        raw_nodes = pool_nodes(qa["pool"])
        for key, node in raw_nodes.items():
            missing = [p for p in node.get("parents", []) if p not in raw_nodes]
            if missing:
                found.append(_finding("chain_parent", "error", f"{key} cites unknown clue(s) {', '.join(missing)}", key))
            if node["kind"] == ix.NodeKind.DIRECT and not nodes[key].evidence and not nodes[key].image_clue:
                found.append(_finding("direct_source", "warning",
                                      f"the quote of {key} was not found in its source {node.get('source', '')!r}: "
                                      f"{node.get('quote', '')[:80]!r}", key))
            declared, computed = node.get("hops"), nodes[key].level
            if node["kind"] == ix.NodeKind.INFERRED and declared and computed is not None and declared != computed:
                found.append(_finding("hop_count", "warning",
                                      f"{key} says {declared} hop(s) but its parents make it {computed}", key))
            if computed is None and node["kind"] != ix.NodeKind.DIRECT:
                found.append(_finding("chain_parent", "error", f"{key} has no level: a cycle or a missing parent", key))
    for i, question in enumerate(game.questions, 1):
        where = f"question {i} ({question.kind})"
        if question.kind == ix.QuestionKind.OPEN_ENDED:
            if not question.answer:
                found.append(_finding("cmd", "error", f"the {question.sub_type} ground truth is empty", where))
            continue
        keys = sum(1 for o in question.options if o.correct)
        if keys != 1:
            found.append(_finding("one_key", "error",
                                  f"{keys} correct options (answer given: {question.extra.get('synthetic_answer')!r})", where))
        texts = [name_key(o.text) for o in question.options]
        if len(set(texts)) != len(texts) or any(not t for t in texts):
            found.append(_finding("distinct_options", "error", "options repeat or are empty", where))
        if question.kind == ix.QuestionKind.MULTI_STEP:
            node = nodes.get(question.chain_node)
            if node is None:
                found.append(_finding("multi_hop_level", "error", f"names clue {question.chain_node!r}, not in the pool", where))
            elif question.level != node.level:
                found.append(_finding("multi_hop_level", "error",
                                      f"level {question.level} differs from its chain node's {node.level}", where))
    return found
