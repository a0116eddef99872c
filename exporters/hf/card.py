"""The dataset card (``README.md``) of a Hugging Face export: the YAML header the Hub reads, then prose.

The header names one config per table with its Parquet file (``configs``), the features and row
counts of each (``dataset_info``), a licence placeholder the publisher must replace, the languages
and a citation block; the body says what each table holds and how rows refer to each other.
"""
from __future__ import annotations

from typing import Any

from .tables import STRS

FEATURE = {"string": {"dtype": "string"}, "int64": {"dtype": "int64"}, "bool": {"dtype": "bool"},
           "float64": {"dtype": "float64"}, STRS: {"sequence": "string"}}

ABOUT = {
    "games": "one row per game: title, language, origin, victims, murderers, the truth manual",
    "characters": "the cast; `script_id` names the character's role script in `scripts`",
    "scripts": "role scripts, by `script_id` (`<game>/script/<character>`)",
    "clues": "text and image clues, by `clue_id` (`<game>/clue/<key>`); `image` is a path relative to this folder",
    "questions": "every question with its options, answer letters, kind, and the ids of the scripts and clues "
                 "it is asked over (`context_*`) and cites as evidence (`evidence_*`)",
    "options": "one row per option of a question, with its letter, correctness, origin and review",
    "chains": "reasoning chains (murderer, method, motive …)",
    "nodes": "steps of the chains: direct clues, inferences and conclusions, with parents and hop levels",
    "spans": "evidence spans: code-point offsets `[start, end)` into a script, clue or manual, with the quote and label",
    "relationships": "directed relationship edges between characters with Conan labels",
    "sessions": "recorded plays of a game: players, their characters and true roles",
    "turns": "ordered turns of the sessions with their ground-truth annotation (triplets, emotions, suspicions; JSON)",
}


def _yaml(value: Any, indent: int = 0) -> list[str]:
    """A small YAML emitter for the card header (mappings, lists, strings, numbers); stable output."""
    pad = " " * indent
    lines: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, (dict, list)) and item:
                lines.append(f"{pad}{key}:")
                lines += _yaml(item, indent + 2)
            else:
                lines.append(f"{pad}{key}: {_scalar(item)}")
    elif isinstance(value, list):
        for item in value:
            sub = _yaml(item, indent + 2)
            if isinstance(item, (dict, list)) and sub:
                lines.append(f"{pad}- {sub[0].lstrip()}")
                lines += sub[1:]
            else:
                lines.append(f"{pad}- {_scalar(item)}")
    return lines


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if value == [] or value == {}:
        return "[]" if value == [] else "{}"
    text = str(value)
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def dataset_card(columns: dict[str, dict[str, str]], counts: dict[str, int], files: dict[str, str],
                 languages: list[str], games: list[str]) -> str:
    header = {
        "license": "other",
        "license_name": "to-be-chosen",
        "license_details": "Placeholder: the publisher must state the licence of the games before publishing.",
        "language": languages,
        "pretty_name": "Casebook murder-mystery games",
        "task_categories": ["question-answering", "multiple-choice"],
        "tags": ["murder-mystery", "jubensha", "reasoning", "casebook"],
        "configs": [
            {"config_name": name, "data_files": [{"split": "train", "path": files[name]}],
             **({"default": True} if name == "questions" else {})}
            for name in columns
        ],
        "dataset_info": [
            {"config_name": name,
             "features": [{"name": col, **FEATURE[kind]} for col, kind in columns[name].items()],
             "splits": [{"name": "train", "num_examples": counts[name]}]}
            for name in columns
        ],
    }
    body = [
        "# Casebook murder-mystery games", "",
        f"Exported by Casebook (`manage.py export --format hf`): {len(games)} game(s) — {', '.join(games)}.",
        "Load one table with `datasets.load_dataset(\"parquet\", data_files=\"data/questions.parquet\")`, "
        "a config by name from the Hub (`load_dataset(REPO, \"clues\")`), or read a file with `pandas.read_parquet`.",
        "", "## Tables", "",
        "| config | rows | what |", "|---|---|---|",
        *(f"| `{name}` | {counts[name]} | {ABOUT[name]} |" for name in columns),
        "", "Rows refer to each other by id: a question's `context_script_ids` and `context_clue_ids` are "
        "`script_id`s of `scripts` and `clue_id`s of `clues`, so a question can be answered from these files alone.",
        "", "## Licence", "", "Not yet chosen (placeholder `other`): state the licence of the games before publishing.",
        "", "## Citation", "", "```bibtex", "@misc{casebook_export,", "  title  = {Casebook murder-mystery games},",
        "  note   = {Exported with Casebook; cite the original datasets (WellPlay, WhodunitBench) for games taken from them},",
        "}", "```", "",
    ]
    return "---\n" + "\n".join(_yaml(header)) + "\n---\n\n" + "\n".join(body)
