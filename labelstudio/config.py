"""The Label Studio labeling config Casebook generates, and the names both sides agree on.

One project per game holds two kinds of task, told apart by ``data.kind``:

* ``script`` — a character's role script (``$text``) to mark evidence spans on (the game's span
  labels, in its language) and to
  draw relations between spans, labelled with the Conan taxonomy. A relation drawn from span A to
  span B with label "father of x" reads "A is father of B" (Casebook stores it as target = A,
  source = B: "target is <label> of source").
* ``question`` — an MCQ review: the stem (``$stem``), a choice of the correct option(s) among
  ``$options`` and, among the generated distractors (``$distractors``), the ones to reject;
  generated distractors left unticked are accepted when the annotation is submitted.

Every task carries every data key (empty for the other kind) because Label Studio checks each
task against all variables of the config.
"""
from __future__ import annotations

from xml.sax.saxutils import quoteattr

from casebook import conan
from casebook.interchange import DEFAULT_SPAN_LABELS

KINDS = ("spans", "relations", "questions")

# from_name / to_name of the controls, shared by push (predictions) and pull (annotations)
TEXT = "text"
SPAN_LABELS = "span"
STEM = "stem"
CORRECT = "correct"  # single-answer questions (radio buttons)
CORRECT_MULTI = "correct_multi"  # multiple-answer questions (checkboxes)
REJECT = "reject"

# Span labels are the game's set (casebook.interchange.DEFAULT_SPAN_LABELS); the colours are ours.
SPAN_COLOURS: dict[str, str] = {
    "clue": "#f6c244", "alibi": "#7fc97f", "motive": "#e7298a", "method": "#d95f02",
    "time": "#7570b3", "place": "#1b9e77", "person": "#9e9e9e",
}
SPAN_LABELS_ALL = tuple(DEFAULT_SPAN_LABELS)


def span_label_shown(key: str, language: str) -> str:
    """The label as the annotator sees it (and Label Studio stores it): in the game's language."""
    zh, en = DEFAULT_SPAN_LABELS.get(key, (key, key))
    return zh if language == "zh" else en


def span_label_key(shown: str) -> str | None:
    """clue / alibi / ... for a label as Label Studio stored it (either language), None if unknown."""
    shown = (shown or "").strip()
    for key, (zh, en) in DEFAULT_SPAN_LABELS.items():
        if shown in (key, zh, en):
            return key
    return None


def span_label_choices(language: str) -> list[dict[str, str]]:
    """The task data behind the dynamic ``<Labels value="$span_labels">`` of a script task."""
    return [{"value": span_label_shown(key, language), "background": SPAN_COLOURS.get(key, "#cccccc")}
            for key in DEFAULT_SPAN_LABELS]


def normalise_kinds(kinds: str | list[str] | tuple[str, ...] | None) -> list[str]:
    """Parse ``"spans,relations"``; relations need span regions, so they bring spans along."""
    if kinds is None or kinds == "":
        return list(KINDS)
    items = kinds.split(",") if isinstance(kinds, str) else list(kinds)
    out = []
    for item in items:
        item = item.strip().lower()
        if not item:
            continue
        if item not in KINDS:
            raise ValueError(f"unknown kind {item!r}: use any of {', '.join(KINDS)}")
        if item not in out:
            out.append(item)
    if not out:
        raise ValueError(f"no kinds given: use any of {', '.join(KINDS)}")
    if "relations" in out and "spans" not in out:
        out.insert(0, "spans")
    return [k for k in KINDS if k in out]


def _attr(value: str) -> str:
    return quoteattr(value)


def build_label_config(kinds: list[str], *, title: str = "") -> str:
    """The labeling config XML for the given kinds (see the module docstring).

    Span labels and choices are *dynamic* (their values come from the task data), so a script task
    shows the span buttons in the game's language and an MCQ task shows none; a single-answer
    question fills ``$options_single`` (radio buttons), a multiple-answer one ``$options_multi``.
    """
    kinds = normalise_kinds(kinds)
    lines = ["<View>"]
    lines.append('  <Header value="$heading" size="4"/>')
    if "spans" in kinds:
        lines.append(f'  <Labels name="{SPAN_LABELS}" toName="{TEXT}" value="$span_labels" showInline="true"/>')
        lines.append(f'  <Text name="{TEXT}" value="$text" granularity="symbol"/>')
    if "relations" in kinds:
        # choice="multiple": a relation may carry several Conan labels (as in Casebook). The labels
        # are listed grouped by Conan category; Label Studio 1.23's relation picker has no search
        # box (checked in its editor), so the list stays long.
        lines.append('  <Relations choice="multiple">')
        for label in sorted(conan.all_fine_labels(), key=lambda lb: (conan.category_of(lb) or "", lb)):
            lines.append(f"    <Relation value={_attr(label)}/>")
        lines.append("  </Relations>")
    if "questions" in kinds:
        lines.append(f'  <Text name="{STEM}" value="$stem"/>')
        lines.append('  <Header value="$correct_header" size="6"/>')
        lines.append(f'  <Choices name="{CORRECT}" toName="{STEM}" value="$options_single" choice="single-radio" showInline="false"/>')
        lines.append(f'  <Choices name="{CORRECT_MULTI}" toName="{STEM}" value="$options_multi" choice="multiple" showInline="false"/>')
        lines.append('  <Header value="$reject_header" size="6"/>')
        lines.append(f'  <Choices name="{REJECT}" toName="{STEM}" value="$distractors" choice="multiple" showInline="false"/>')
    lines.append("</View>")
    return "\n".join(lines) + "\n"


def empty_task_data(kinds: list[str]) -> dict[str, object]:
    """Every variable the config uses, empty; a task fills in its own."""
    kinds = normalise_kinds(kinds)
    data: dict[str, object] = {"kind": "", "heading": ""}
    if "spans" in kinds:
        data.update({TEXT: "", "span_labels": []})
    if "questions" in kinds:
        data.update({STEM: "", "options": [], "options_single": [], "options_multi": [], "distractors": [],
                     "correct_header": "", "reject_header": ""})
    return data
