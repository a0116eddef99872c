"""The Label Studio labeling config Casebook generates, and the names both sides agree on.

One project per game holds two kinds of task, told apart by ``data.kind``:

* ``script`` — a character's role script (``$text``) to mark evidence spans on (labels below) and to
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

from exporters import conan

KINDS = ("spans", "relations", "questions")

# from_name / to_name of the controls, shared by push (predictions) and pull (annotations)
TEXT = "text"
SPAN_LABELS = "span"
STEM = "stem"
CORRECT = "correct"
REJECT = "reject"

# value -> (colour, hint)
SPAN_LABEL_INFO: dict[str, tuple[str, str]] = {
    "clue": ("#f6c244", "线索 — a fact that points towards or away from the truth"),
    "alibi": ("#7fc97f", "不在场证明 — where someone says they were"),
    "motive": ("#e7298a", "动机 — a reason to kill"),
    "method": ("#d95f02", "手法 — how it was done (weapon, poison, trick)"),
    "time": ("#7570b3", "时间 — a time or date"),
    "place": ("#1b9e77", "地点 — a place"),
    "person": ("#9e9e9e", "人物 — a mention of a character (ends of relations)"),
}
SPAN_LABELS_ALL = tuple(SPAN_LABEL_INFO)


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
    """The labeling config XML for the given kinds (see the module docstring)."""
    kinds = normalise_kinds(kinds)
    lines = ["<View>"]
    lines.append('  <Header value="$heading" size="4"/>')
    if "spans" in kinds:
        lines.append(f'  <Labels name="{SPAN_LABELS}" toName="{TEXT}" showInline="true">')
        for value, (colour, hint) in SPAN_LABEL_INFO.items():
            lines.append(f"    <Label value={_attr(value)} background={_attr(colour)} hint={_attr(hint)}/>")
        lines.append("  </Labels>")
        lines.append(f'  <Text name="{TEXT}" value="$text" granularity="symbol"/>')
    if "relations" in kinds:
        lines.append("  <Relations>")
        for label in conan.all_fine_labels():
            lines.append(f"    <Relation value={_attr(label)}/>")
        lines.append("  </Relations>")
    if "questions" in kinds:
        lines.append(f'  <Text name="{STEM}" value="$stem"/>')
        lines.append('  <Header value="$correct_header" size="6"/>')
        lines.append(f'  <Choices name="{CORRECT}" toName="{STEM}" value="$options" choice="multiple" showInline="false"/>')
        lines.append('  <Header value="$reject_header" size="6"/>')
        lines.append(f'  <Choices name="{REJECT}" toName="{STEM}" value="$distractors" choice="multiple" showInline="false"/>')
    lines.append("</View>")
    return "\n".join(lines) + "\n"


def empty_task_data(kinds: list[str]) -> dict[str, object]:
    """Every variable the config uses, empty; a task fills in its own."""
    kinds = normalise_kinds(kinds)
    data: dict[str, object] = {"kind": "", "heading": ""}
    if "spans" in kinds:
        data[TEXT] = ""
    if "questions" in kinds:
        data.update({STEM: "", "options": [], "distractors": [], "correct_header": "", "reject_header": ""})
    return data
