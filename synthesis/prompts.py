"""The prompt of every synthesis stage, in Chinese and English (one system prompt per "agent").

Each prompt states the JSON shape in words and by example, because servers without structured
output only have the prompt to go by. Inputs are the earlier stages' outputs, rendered as text.
"""
from __future__ import annotations

import json
from typing import Any

Messages = list[dict[str, str]]

_JSON_RULE = {
    "zh": "只输出一个 JSON 对象，不要任何解释或代码块标记。",
    "en": "Answer with one JSON object only: no explanation, no code fences.",
}

_SYSTEM = {
    "outline": {
        "zh": "你是剧本杀作者。根据设定写出一个谋杀案剧本的大纲：标题；受害者（不是玩家）；{players} 名玩家角色"
              "（每人一句简介和一个秘密，恰好一人是凶手，每人都要有合理的动机）；案发当天的时间线（每条写时间、角色、行动）；"
              "背景故事；凶手的动机和作案手法。",
        "en": "You write murder-mystery role-playing games. Write the outline of one game: a title; the victim "
              "(not a player); {players} player characters (one-line summary and a secret each; exactly one is "
              "the murderer; everyone has a plausible motive); a timeline of the day of the crime (time, character, "
              "action); the background story; the murderer's motive and method.",
    },
    "character": {
        "zh": "你是剧本杀作者。为大纲中的一个角色写第一人称的角色剧本（back）：背景、与他人的关系、案发当天按时间顺序的经历、"
              "想法和观察。凶手的剧本要明确写出作案手法；每个角色都要有合理的动机。值得画成图片的细节用方括号写在文中，"
              "例如 [监控截图：16:38，某人进入书房]。m 为 1 表示此角色是凶手，否则为 0。",
        "en": "You write murder-mystery role-playing games. Write the first-person role script (back) of one character "
              "of the outline: background, relations to the others, the day of the crime in time order, thoughts and "
              "perceptions. The murderer's script states the method plainly; every character has a plausible motive. "
              "Write picture-worthy details inline in square brackets, e.g. [a security camera still, 4:38 PM, showing "
              "X entering the study]. m is 1 for the murderer, else 0.",
    },
    "critic": {
        "zh": "你是剧本杀评审。从四个方面给大纲和角色剧本打分（1–10）：情节复杂度、人物塑造、难度、各角色行动在时间线上的逻辑一致性；"
              "再给出对大纲的修改建议和对各角色剧本的修改建议。",
        "en": "You review murder-mystery games. Score the outline and role scripts from 1 to 10 on four axes: plot "
              "complexity, character development, difficulty, and the logical consistency of each character's actions "
              "along the timeline; then suggest changes to the outline and to each character's script.",
    },
    "refine": {
        "zh": "你是剧本杀作者。按照评审意见修改大纲，保持角色名字不变、恰好一名凶手。",
        "en": "You write murder-mystery games. Revise the outline following the reviewer's suggestions; keep the "
              "character names and exactly one murderer.",
    },
    "clues": {
        "zh": "你是剧本杀作者。根据全部角色剧本写 3–5 条公开文字线索（每条一句，关于现场或背景，绝不能点名凶手）。"
              "另外，剧本中方括号里的画面描述将成为图片线索：为每一条标出类型（text_rich：以文字为主，如收据、信件、聊天截图；"
              "media_rich：地图、平面图、照片、示意图），text_rich 的写出图中可读的文字。",
        "en": "You write murder-mystery games. From all role scripts, write 3–5 public text clues (one sentence each, "
              "about the scene or the background, never naming the murderer). The bracketed picture descriptions in "
              "the scripts become image clues: type each one (text_rich: mostly text, such as a receipt, a letter, a "
              "chat screenshot; media_rich: a map, floor plan, photo or diagram) and, for text_rich, write the text "
              "readable in the picture.",
    },
    "pool": {
        "zh": "你是推理题作者。从角色剧本和线索中整理线索池：直接线索（direct，每条注明来源：角色名或 clue:线索编号，"
              "并逐字引用来源中的一句原文 quote）；推理线索（inferred，由列出的父线索和/或常识推出，注明跳数 hops=1…n）；"
              "结论（conclusions，goal 为 murderer / method / motive，列出父线索）。编号用 d1、d2…、i1、i2…、c1…。",
        "en": "You write reasoning questions. Build the clue pool from the role scripts and clues: direct clues (each "
              "with its source — a character's name or clue:KEY — and a sentence quoted word for word from that "
              "source); inferred clues (each from the listed parent clues and/or common-sense knowledge, with its hop "
              "count hops=1…n); conclusions (goal murderer / method / motive, with their parents). Ids: d1, d2…, i1, "
              "i2…, c1….",
    },
    "long_script": {
        "zh": "你是阅读理解题作者。根据这一份角色剧本出 {count} 道四选一选择题，考查重要或细微的细节、动机和情节。"
              "answer 为正确选项的字母（a–d），quote 为剧本中支持答案的一句原文。",
        "en": "You write reading-comprehension questions. From this one role script, write {count} multiple-choice "
              "questions with four options each on significant or subtle details, motivations and plot. answer is the "
              "letter (a–d) of the correct option; quote is the sentence of the script that supports it.",
    },
    "image": {
        "zh": "你是图片理解题作者。根据剧本和这条图片线索的描述出 {count} 道四选一选择题，答题必须依赖这张图片；题干不要出现"
              "“图片”二字。answer 为正确选项的字母（a–d）。",
        "en": "You write picture questions. From the scripts and this image clue's description, write {count} "
              "multiple-choice questions with four options that can only be answered with the picture; never mention "
              "\"the image\" in the question. answer is the letter (a–d) of the correct option.",
    },
    "multi_hop": {
        "zh": "你是多步推理题作者。根据线索池，为每条推理线索和结论出一道四选一选择题，node 为该题对应的线索编号。"
              "answer 为正确选项的字母（a–d）。",
        "en": "You write multi-step reasoning questions. From the clue pool, write one multiple-choice question with "
              "four options for each inferred clue and conclusion; node is the id of the clue the question is about. "
              "answer is the letter (a–d) of the correct option.",
    },
    "cmd": {
        "zh": "你是剧本杀主持人。根据大纲和剧本，写出凶手作案动机（motive）和作案手法（method）的标准答案，各一段。",
        "en": "You host murder-mystery games. From the outline and scripts, write the reference answers for the "
              "murderer's motive and for the method, one paragraph each.",
    },
}

_EXAMPLES: dict[str, dict[str, Any]] = {
    "outline": {"title": "…", "victim": {"name": "…", "summary": "…"},
                "characters": [{"name": "…", "summary": "…", "secret": "…"}], "murderer": "…",
                "timeline": [{"time": "…", "character": "…", "action": "…"}], "background": "…",
                "motive": "…", "method": "…"},
    "character": {"name": "…", "back": "…", "m": 0},
    "refine": {},  # filled below: the same shape as the outline
    "critic": {"scores": {"plot_complexity": 7, "character_development": 6, "difficulty": 5,
                          "logical_consistency": 8},
               "outline_suggestions": "…", "character_suggestions": [{"name": "…", "suggestion": "…"}]},
    "clues": {"public_clues": ["…"], "images": [{"index": 1, "kind": "text_rich", "visible_text": "…"}]},
    "pool": {"direct": [{"id": "d1", "text": "…", "source": "…", "quote": "…"}],
             "inferred": [{"id": "i1", "text": "…", "parents": ["d1", "d2"], "knowledge": "…", "hops": 1}],
             "conclusions": [{"id": "c1", "goal": "murderer", "text": "…", "parents": ["i1"]}]},
    "long_script": {"questions": [{"question": "…", "options": ["…", "…", "…", "…"], "answer": "b", "quote": "…"}]},
    "image": {"questions": [{"question": "…", "options": ["…", "…", "…", "…"], "answer": "a"}]},
    "multi_hop": {"questions": [{"question": "…", "options": ["…", "…", "…", "…"], "answer": "c", "node": "i1"}]},
    "cmd": {"motive": "…", "method": "…"},
}

_EXAMPLES["refine"] = _EXAMPLES["outline"]

_LABELS = {
    "zh": {"settings": "设定", "outline": "大纲", "scripts": "角色剧本", "script": "角色剧本", "clues": "线索",
           "pool": "线索池", "review": "评审意见", "image": "图片线索", "shape": "JSON 格式示例",
           "character": "要写的角色", "feedback": "评审对此角色的建议"},
    "en": {"settings": "Settings", "outline": "Outline", "scripts": "Role scripts", "script": "Role script",
           "clues": "Clues", "pool": "Clue pool", "review": "Reviewer's suggestions", "image": "Image clue",
           "shape": "JSON shape", "character": "Character to write", "feedback": "Reviewer's suggestion for them"},
}


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1)


def build(stage: str, language: str, sections: list[tuple[str, Any]], **fmt: Any) -> Messages:
    """The messages for ``stage``: system prompt, then labelled input sections and the JSON shape."""
    lang = "zh" if language == "zh" else "en"
    labels = _LABELS[lang]
    system = _SYSTEM[stage][lang].format(**fmt) + " " + _JSON_RULE[lang]
    parts = []
    for label, value in sections:
        text = value if isinstance(value, str) else _dump(value)
        parts.append(f"## {labels.get(label, label)}\n{text}")
    parts.append(f"## {labels['shape']}\n{_dump(_EXAMPLES[stage])}")
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join(parts)}]


def render_scripts(characters: list[dict[str, Any]]) -> str:
    return "\n\n".join(f"### {c['name']}\n{c['back']}" for c in characters)
