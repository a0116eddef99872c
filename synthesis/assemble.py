"""Stage outputs → an interchange Game (plain, no Django): the draft that lands for review.

Everything synthetic arrives as a draft: questions and the reasoning chain have status draft,
options carry ``origin = llm`` and the model's name, and every question's provenance names the run
and stage that wrote it. Direct clues become evidence spans where their quote is found in the
named source; the checks (:mod:`synthesis.checks`) list the ones that are not.
"""
from __future__ import annotations

import re
import unicodedata
from typing import Any

from casebook import interchange as ix
from casebook.interchange import name_key

_OPTION_PREFIX = re.compile(r"^\s*[(（]?([a-jA-J])[).．、:：)）]\s*")
_QUOTE_MARKS = "\"'“”‘’「」『』《》 \t\n"


def _fold(ch: str) -> str:
    return unicodedata.normalize("NFKC", ch).casefold()


def locate(text: str, quote: str) -> tuple[int, int] | None:
    """Code-point offsets of ``quote`` in ``text``: exact, else ignoring case, width and white space."""
    quote = (quote or "").strip(_QUOTE_MARKS)
    if len(quote) < 2:
        return None
    at = text.find(quote)
    if at >= 0:
        return at, at + len(quote)
    folded, index = [], []
    for i, ch in enumerate(text):
        for part in _fold(ch):
            if not part.isspace():
                folded.append(part)
                index.append(i)
    wanted = "".join(p for ch in quote for p in _fold(ch) if not p.isspace())
    at = "".join(folded).find(wanted)
    if at < 0 or not wanted:
        return None
    return index[at], index[at + len(wanted) - 1] + 1


def clean_options(options: list[str]) -> list[str]:
    return [_OPTION_PREFIX.sub("", o, count=1).strip() for o in options]


def answer_index(answer: str, options: list[str]) -> int | None:
    """Which option the reply's ``answer`` names: a letter ("b", "B.", "(b)") or the option's text."""
    text = (answer or "").strip()
    match = _OPTION_PREFIX.match(text + " ") or re.fullmatch(r"\s*([a-jA-J])\s*", text)
    if match and (len(text) <= 3 or _OPTION_PREFIX.match(text)):
        letter = match.group(1).lower()
        index = ix.LETTERS.index(letter)
        if index < len(options):
            return index
    for i, option in enumerate(clean_options(options)):
        if option and name_key(option) == name_key(_OPTION_PREFIX.sub("", text, count=1)):
            return i
    return None


def node_levels(nodes: dict[str, dict[str, Any]]) -> dict[str, int | None]:
    """Longest path from a direct clue, per node id; None on a cycle or a missing parent."""
    levels: dict[str, int | None] = {}
    visiting: set[str] = set()

    def level(key: str) -> int | None:
        if key in levels:
            return levels[key]
        node = nodes.get(key)
        if node is None or key in visiting:
            return None
        visiting.add(key)
        parents = [level(p) for p in node.get("parents", [])]
        visiting.discard(key)
        if node["kind"] == ix.NodeKind.DIRECT:
            value: int | None = 0
        elif not parents or any(p is None for p in parents):
            value = None
        else:
            value = max(p for p in parents if p is not None) + 1
        levels[key] = value
        return value

    for key in nodes:
        level(key)
    return levels


def pool_nodes(pool: dict[str, Any]) -> dict[str, dict[str, Any]]:
    nodes: dict[str, dict[str, Any]] = {}
    for item in pool["direct"]:
        nodes[item["id"]] = {**item, "kind": ix.NodeKind.DIRECT, "parents": []}
    for item in pool["inferred"]:
        nodes[item["id"]] = {**item, "kind": ix.NodeKind.INFERRED}
    for item in pool["conclusions"]:
        nodes[item["id"]] = {**item, "kind": ix.NodeKind.CONCLUSION}
    return nodes


def _source_span(game: ix.Game, source: str, quote: str) -> ix.Span | None:
    source = (source or "").strip()
    if source.lower().startswith("clue:"):
        clue = game.clue(source.split(":", 1)[1].strip())
        if clue is None:
            return None
        text, document, owner = clue.text or clue.ocr_text, ix.SpanDocument.CLUE, clue.key
    else:
        character = game.character(source)
        if character is None:
            return None
        text, document, owner = character.script, ix.SpanDocument.SCRIPT, character.name
    found = locate(text, quote)
    if found is None:
        return None
    return ix.Span(document=document, owner=owner, start=found[0], end=found[1], quote=text[found[0]:found[1]],
                   label="clue")


def _mcq(kind: str, item: dict[str, Any], provenance: dict[str, Any], model: str, **fields: Any) -> ix.Question:
    options = clean_options(item["options"])
    correct = answer_index(item["answer"], item["options"])
    return ix.Question(
        kind=kind, stem=item["question"].strip(),
        options=[ix.Option(text=o, correct=i == correct, origin=ix.OptionOrigin.LLM, model=model) for i, o in enumerate(options)],
        answer=ix.LETTERS[correct] if correct is not None else "",
        status=ix.Status.DRAFT, provenance=dict(provenance), extra={"synthetic_answer": item["answer"]}, **fields,
    )


def assemble(outputs: dict[str, Any], settings: dict[str, Any], run_id: int, model: str) -> ix.Game:
    outline, scripts = outputs["outline"], outputs["characters"]
    language = settings.get("language", "en")
    murderers = [s["name"] for s in scripts if s["m"]] or [outline.get("murderer", "")]
    murderer_keys = {name_key(n) for n in murderers if n}
    victim = outline["victim"]["name"].strip()
    game = ix.Game(slug=f"synthetic-{run_id}", title=outline["title"].strip() or f"Synthetic game {run_id}",
                   language=language, origin=ix.Origin.SYNTHETIC)
    for script in scripts:
        game.characters.append(ix.Character(name=script["name"], script=script["back"],
                                            is_murderer=name_key(script["name"]) in murderer_keys))
    if victim:
        game.characters.append(ix.Character(name=victim, playable=False, is_victim=True))
        game.victims = [victim]
        game.kills = [ix.Kill(killer=c.name, victim=victim) for c in game.characters if c.is_murderer]
    timeline = "\n".join(f"{t['time']} {t['character']}: {t['action']}" for t in outline["timeline"])
    game.truth = ix.TruthManual(text=f"{outline['background']}\n\n{timeline}".strip())
    game.extra = {"synthesis": {"run": run_id, "settings": {k: v for k, v in settings.items() if k != "api_key"}}}

    clue_output = outputs.get("clues") or {"public": [], "images": []}
    for i, text in enumerate(clue_output["public"], 1):
        game.clues.append(ix.Clue(key=f"public-{i}", title=f"#{i}", text=text))
    game.public_clue_text = "\n".join(clue_output["public"])
    for picture in clue_output["images"]:
        game.clues.append(ix.Clue(
            key=f"img-{picture['index']}", kind=ix.ClueKind.IMAGE, title=picture["description"][:80],
            text=picture["description"], ocr_text=picture.get("visible_text", ""),
            image_kind=picture["kind"], extra={"placeholder": True, "described_in": picture["owner"]},
        ))

    qa = outputs.get("qa")
    if not qa:
        return game
    base = {"origin": "synthetic", "run": run_id, "model": model}
    nodes = pool_nodes(qa["pool"])
    levels = node_levels(nodes)
    chain_nodes = []
    for key, node in nodes.items():
        evidence = []
        image_clue = ""
        if node["kind"] == ix.NodeKind.DIRECT:
            span = _source_span(game, node.get("source", ""), node.get("quote", ""))
            if span is not None:
                evidence.append(span)
            source = node.get("source", "").strip()
            if source.lower().startswith("clue:") and (clue := game.clue(source.split(":", 1)[1].strip())) \
                    and clue.kind == ix.ClueKind.IMAGE:
                image_clue = clue.key
        extra = {k: node[k] for k in ("source", "quote", "hops", "goal") if node.get(k) not in (None, "")}
        chain_nodes.append(ix.ChainNode(key=key, kind=node["kind"], text=node["text"], parents=list(node.get("parents", [])),
                                        level=levels.get(key), evidence=evidence, image_clue=image_clue,
                                        knowledge=node.get("knowledge", ""), extra=extra))
    goals = [n["goal"] for n in qa["pool"]["conclusions"]]
    goal = ix.ChainGoal.MURDERER if "murderer" in goals else (goals[0] if goals else ix.ChainGoal.OTHER)
    game.chains.append(ix.ReasoningChain(goal=goal, title="Clue pool" if language != "zh" else "线索池",
                                         nodes=chain_nodes, status=ix.Status.DRAFT))

    for name, items in qa["long_script"].items():
        for item in items:
            question = _mcq(ix.QuestionKind.LONG_SCRIPT, item, {**base, "stage": "long_script"}, model, perspective=name)
            character = game.character(name)
            found = locate(character.script, item.get("quote", "")) if character else None
            if found:
                question.evidence.append(ix.Span(document=ix.SpanDocument.SCRIPT, owner=character.name, start=found[0],
                                                 end=found[1], quote=character.script[found[0]:found[1]]))
            game.questions.append(question)
    images = {str(p["index"]): p for p in clue_output["images"]}
    for index, items in qa["image"].items():
        picture = images.get(index)
        if picture is None:
            continue
        kind = ix.QuestionKind.TEXT_IMAGE if picture["kind"] == "text_rich" else ix.QuestionKind.MEDIA_IMAGE
        for item in items:
            game.questions.append(_mcq(kind, item, {**base, "stage": "image"}, model, image_clue=f"img-{index}"))
    for item in qa["multi_hop"]:
        node = item.get("node", "").strip()
        game.questions.append(_mcq(ix.QuestionKind.MULTI_STEP, item, {**base, "stage": "multi_hop"}, model,
                                   chain_node=node, level=levels.get(node)))
    for sub_type in ("motive", "method"):
        answer = qa["cmd"][sub_type].strip()
        stem = {("zh", "motive"): f"凶手杀害{victim}的动机是什么？", ("zh", "method"): f"凶手是如何杀害{victim}的？",
                ("en", "motive"): f"What was the murderer's motive for killing {victim}?",
                ("en", "method"): f"How did the murderer kill {victim}?"}[("zh" if language == "zh" else "en", sub_type)]
        game.questions.append(ix.Question(kind=ix.QuestionKind.OPEN_ENDED, sub_type=sub_type, stem=stem, answer=answer,
                                          status=ix.Status.DRAFT, provenance={**base, "stage": "cmd"}))
    game.truth.motive, game.truth.method = qa["cmd"]["motive"].strip(), qa["cmd"]["method"].strip()
    return game
