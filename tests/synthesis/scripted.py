"""Scripted stage replies for the synthesis tests: a small, consistent English game.

``responder`` answers each request by its stage (the structured-output schema name, or the system
prompt for servers without it), so the real pipeline runs over HTTP against the test server.
``overrides`` replace one stage's reply to plant defects or broken JSON.
"""
from __future__ import annotations

import json
from typing import Any

SCRIPTS = {
    "Ada Crane": ("I am Ada Crane, the gardener. At 9 PM I watered the roses by the greenhouse. "
                  "I saw Basil Hume carry a brass key towards the study. [a torn train ticket dated 12 May, 8:15 PM] "
                  "I went to bed at ten."),
    "Basil Hume": ("I am Basil Hume, the butler. I poured the master's brandy at 8:50 PM from the decanter in the study. "
                   "I put foxglove from the greenhouse into the brandy, because he meant to dismiss me without a pension. "
                   "[a floor plan of the ground floor with the study marked] I locked the study with the brass key."),
    "Cora Wynn": ("I am Cora Wynn, the niece. I argued with my uncle at 8 PM about his will. "
                  "Later I heard glass break in the study at 9:10 PM. I found the greenhouse door open."),
}
OUTLINE = {
    "title": "Foxglove Manor", "victim": {"name": "Lord Wynn", "summary": "the master of the manor"},
    "characters": [{"name": n, "summary": "", "secret": ""} for n in SCRIPTS], "murderer": "Basil Hume",
    "timeline": [{"time": "8 PM", "character": "Cora Wynn", "action": "argues about the will"},
                 {"time": "8:50 PM", "character": "Basil Hume", "action": "pours the brandy"},
                 {"time": "9 PM", "character": "Ada Crane", "action": "waters the roses"}],
    "background": "Lord Wynn planned to change his will and dismiss his butler.",
    "motive": "Basil was to be dismissed without a pension.", "method": "Foxglove in the brandy.",
}
CRITIC = {"scores": {"plot_complexity": 6, "character_development": 5, "difficulty": 4, "logical_consistency": 8},
          "outline_suggestions": "Give Cora a stronger alibi.",
          "character_suggestions": [{"name": "Cora Wynn", "suggestion": "Say where she was at 9 PM."}]}
CLUES = {"public_clues": ["The brandy decanter in the study was half empty.",
                          "Foxglove grows only in the manor's greenhouse."],
         "images": [{"index": 1, "kind": "text_rich", "visible_text": "12 MAY 20:15"},
                    {"index": 2, "kind": "media_rich", "visible_text": ""}]}
POOL = {
    "direct": [
        {"id": "d1", "text": "Basil poured the brandy at 8:50.", "source": "Basil Hume",
         "quote": "I poured the master's brandy at 8:50 PM"},
        {"id": "d2", "text": "Foxglove grows only in the greenhouse.", "source": "clue:public-2",
         "quote": "Foxglove grows only in the manor's greenhouse."},
        {"id": "d3", "text": "Ada saw Basil carry the key to the study.", "source": "Ada Crane",
         "quote": "I saw Basil Hume carry a brass key towards the study"},
    ],
    "inferred": [
        {"id": "i1", "text": "The poison was put in the brandy Basil poured.", "parents": ["d1", "d2"],
         "knowledge": "Foxglove contains digitalis.", "hops": 1},
        {"id": "i2", "text": "Only Basil could lock the study afterwards.", "parents": ["i1", "d3"], "knowledge": "", "hops": 2},
    ],
    "conclusions": [{"id": "c1", "goal": "murderer", "text": "Basil Hume killed Lord Wynn.", "parents": ["i2"]}],
}


def mcq(question: str, options: list[str], answer: str, **more: Any) -> dict[str, Any]:
    return {"question": question, "options": options, "answer": answer, **more}


LONG_SCRIPT = {"questions": [mcq("When did the butler pour the brandy?", ["a. 8 PM", "b. 8:50 PM", "c. 9 PM", "d. 10 PM"], "b",
                                 quote="I poured the master's brandy at 8:50 PM")]}
IMAGE = {"questions": [mcq("What date is on the ticket?", ["12 May", "13 May", "12 June", "1 May"], "a")]}
MULTI_HOP = {"questions": [mcq("Where was the poison?", ["In the tea", "In the brandy", "In the soup", "In the wine"], "b",
                               node="i1"),
                           mcq("Who could lock the study?", ["Ada", "Cora", "Basil", "Nobody"], "c", node="i2"),
                           mcq("Who killed Lord Wynn?", ["Ada Crane", "Basil Hume", "Cora Wynn", "A stranger"], "b",
                               node="c1")]}
CMD = {"motive": "He was to be dismissed without a pension.",
       "method": "He put foxglove from the greenhouse into the brandy at 8:50 PM."}

STAGES = ("outline", "character", "critic", "refine", "clues", "pool", "long_script", "image", "multi_hop", "cmd")


def stage_of(request: dict[str, Any]) -> str:
    schema = (request.get("response_format") or {}).get("json_schema") or {}
    if schema.get("name") in STAGES:
        return schema["name"]
    system = request["messages"][0]["content"]
    markers = [("reading-comprehension", "long_script"), ("picture questions", "image"), ("multi-step", "multi_hop"),
               ("You review", "critic"), ("Revise the outline", "refine"), ("role script (back)", "character"),
               ("Build the clue pool", "pool"), ("public text clues", "clues"), ("reference answers", "cmd"),
               ("Write the outline", "outline")]
    return next(stage for marker, stage in markers if marker in system)


def default_reply(stage: str, request: dict[str, Any]) -> dict[str, Any]:
    if stage == "character":
        user = request["messages"][1]["content"]
        name = next(n for n in SCRIPTS if f"## Character to write\n{n}" in user)
        return {"name": name, "back": SCRIPTS[name], "m": 1 if name == "Basil Hume" else 0}
    return {"outline": OUTLINE, "refine": OUTLINE, "critic": CRITIC, "clues": CLUES, "pool": POOL,
            "long_script": LONG_SCRIPT, "image": IMAGE, "multi_hop": MULTI_HOP, "cmd": CMD}[stage]


def responder(overrides: dict[str, Any] | None = None):
    """A test-server responder; an override is a dict (sent as JSON), a str (sent as is) or a list of either."""
    overrides = dict(overrides or {})

    def answer(request: dict[str, Any], n: int) -> str:
        stage = stage_of(request)
        if stage in overrides:
            value = overrides[stage]
            if isinstance(value, list):
                value = value.pop(0) if len(value) > 1 else value[0]
            return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        return json.dumps(default_reply(stage, request), ensure_ascii=False)

    return answer
