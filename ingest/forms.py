"""Upload form and the split editor's form parsing (plain logic, no request objects)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath

from django import forms
from django.conf import settings

from .split import KINDS, SplitDecision

CORRECTED = "corrected in the split editor"


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("widget", MultipleFileInput(attrs={"multiple": True}))
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        single = super().clean
        files = data if isinstance(data, (list, tuple)) else [data]
        return [single(f, initial) for f in files if f] or [single(None, initial)]


class UploadForm(forms.Form):
    files = MultipleFileField(
        help_text="PDFs (with or without text), scans or phone photos (PNG, JPEG, TIFF, WebP), TXT/Markdown, or one ZIP."
    )
    title = forms.CharField(max_length=300, help_text="Title of the game")
    language = forms.ChoiceField(choices=[("zh", "Chinese (zh)"), ("en", "English (en)")])
    characters = forms.CharField(
        required=False, max_length=2000, help_text="Optional cast list, comma-separated (anchors the split)"
    )
    traditional = forms.BooleanField(required=False, help_text="Chinese text is traditional (chi_tra model)")
    replace = forms.BooleanField(required=False, help_text="Overwrite a game or files ingested before")

    def clean_files(self):
        files = self.cleaned_data["files"]
        total = sum(f.size for f in files)
        limit = settings.CASEBOOK_MAX_UPLOAD_BYTES
        if total > limit:
            raise forms.ValidationError(f"The upload is {total:,} bytes; the limit is {limit:,}.")
        for f in files:
            if not PurePosixPath(f.name.replace("\\", "/")).name.strip("."):
                raise forms.ValidationError(f"'{f.name}' is not a usable file name.")
        return files

    def cast(self) -> list[str]:
        raw = self.cleaned_data.get("characters", "")
        return [c.strip() for c in raw.replace("，", ",").replace("、", ",").split(",") if c.strip()]


class SplitFormError(ValueError):
    """The posted split editor form is malformed; the message names the row."""


def decisions_from_post(
    data: Mapping[str, str], sources: list[str], previous: Sequence[SplitDecision]
) -> list[SplitDecision]:
    """Rows ``row-<i>-{section,kind,source,page,offset,drop}`` (+ an optional ``new-*`` row) → decisions.

    A dropped row merges its section into the one before it (its boundary disappears). Reasons come
    from the ``previous`` decisions, not the form: a row that differs from the one at its index says
    so, keeping what the splitter had found, so the split's history shows which boundaries a person
    set.
    """
    count = int(data.get("rows", "0") or 0)
    prefixes = [f"row-{i}-" for i in range(count)]
    if (data.get("new-section") or "").strip():
        prefixes.append("new-")
    decisions = []
    for n, prefix in enumerate(prefixes, start=1):
        if data.get(prefix + "drop"):
            continue
        section = (data.get(prefix + "section") or "").strip()
        kind = data.get(prefix + "kind") or ""
        source = data.get(prefix + "source") or ""
        if kind not in KINDS:
            raise SplitFormError(f"row {n}: unknown kind '{kind}'")
        if source not in sources:
            raise SplitFormError(f"row {n}: unknown document '{source}'")
        try:
            page = int(data.get(prefix + "page") or "")
            offset = int(data.get(prefix + "offset") or "0")
        except ValueError:
            raise SplitFormError(f"row {n}: page and offset must be whole numbers") from None
        before = previous[n - 1] if prefix != "new-" and n - 1 < len(previous) else None
        decision = SplitDecision(section, kind, source, page, offset, before.reason if before else "")
        if before is None:
            decision.reason = "added in the split editor"
        elif decision != before and not before.reason.startswith(CORRECTED):
            decision.reason = f"{CORRECTED} (found as: {before.reason})"
        decisions.append(decision)
    return decisions
