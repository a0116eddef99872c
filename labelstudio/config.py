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
RELATION_TAXONOMY = "relation"  # per-region Taxonomy: the searchable relation label picker

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


def _taxonomy_name(label: str, language: str) -> str:
    """What the picker shows (and searches) for a Conan label: both languages, the game's first.
    " / " separates a Taxonomy's path, so the Chinese alternatives are joined with "、"."""
    zh = conan.zh_name(label).replace("/", "、") if label in conan.all_fine_labels() else \
        conan.CATEGORY_ZH.get(label, "")
    if not zh:
        return label
    return f"{zh} · {label}" if language == "zh" else f"{label} · {zh}"


def relation_taxonomy(language: str) -> list[str]:
    """The ``<Choice>`` lines of the relation Taxonomy: Conan classes, each holding its labels.

    ``value`` is what the annotator sees and searches (English and Chinese); ``alias`` is what Label
    Studio stores in the result path, so a result reads ``[["Family relationships", "father of x"]]``
    whatever the game's language. A label listed in two classes appears under its first one."""
    groups: dict[str, list[str]] = {}
    for label in conan.all_fine_labels():
        groups.setdefault(conan.category_of(label) or "Unrelated", []).append(label)
    lines = []
    for category in sorted(groups, key=lambda c: list(conan.CATEGORY_ZH).index(c) if c in conan.CATEGORY_ZH else 99):
        lines.append(f"    <Choice value={_attr(_taxonomy_name(category, language))} alias={_attr(category)}>")
        for label in groups[category]:
            lines.append(f"      <Choice value={_attr(_taxonomy_name(label, language))} alias={_attr(label)}/>")
        lines.append("    </Choice>")
    return lines


def relation_labels_of(value: dict) -> list[str]:
    """The Conan labels of a Taxonomy result value: the last element of each path (an alias; a
    category picked alone is not a label and is dropped by the caller's check)."""
    out = []
    for path in value.get("taxonomy") or []:
        if isinstance(path, list) and path and isinstance(path[-1], str) and path[-1] not in out:
            out.append(path[-1])
    return out


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


def build_label_config(kinds: list[str], *, title: str = "", language: str = "en") -> str:
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
        # The searchable picker: a per-region Taxonomy on the span an arrow starts from ("A is
        # <label> of x", x = the arrow's other end). Label Studio 1.23's own relation dropdown has
        # no search box (its Select is not `searchable`; checked in the editor), so it stays only
        # for projects pushed before and for arrows that need their own label.
        placeholder = "搜索关系（中文或英文）" if language == "zh" else "Search relation labels (English or Chinese)"
        lines.append('  <Header value="$relation_header" size="6"/>')
        lines.append(f'  <Taxonomy name="{RELATION_TAXONOMY}" toName="{TEXT}" perRegion="true" leafsOnly="true" '
                     f'showFullPath="true" placeholder={_attr(placeholder)}>')
        lines.extend(relation_taxonomy(language))
        lines.append("  </Taxonomy>")
        # choice="multiple": a relation may carry several Conan labels (as in Casebook).
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
    if "relations" in kinds:
        data["relation_header"] = ""
    if "questions" in kinds:
        data.update({STEM: "", "options": [], "options_single": [], "options_multi": [], "distractors": [],
                     "correct_header": "", "reject_header": ""})
    return data
