"""Forms of the annotation app, and parsers that turn editor POSTs into service inputs."""
from __future__ import annotations

from django import forms
from django.http import QueryDict
from django.utils.text import slugify

from annotate.models import Character, Game, ReasoningChain
from annotate.services.questions import QuestionInput
from casebook.interchange import Status


class GameForm(forms.ModelForm):
    """Create a game by hand; the slug is derived from the title when left blank."""

    slug = forms.SlugField(required=False, allow_unicode=True, help_text="Leave blank to derive it from the title.")

    class Meta:
        model = Game
        fields = ["title", "slug", "language", "title_note", "truth_text", "truth_motive", "truth_method", "public_clue_text"]
        widgets = {
            "truth_text": forms.Textarea(attrs={"rows": 6}),
            "truth_motive": forms.Textarea(attrs={"rows": 2}),
            "truth_method": forms.Textarea(attrs={"rows": 2}),
            "public_clue_text": forms.Textarea(attrs={"rows": 4}),
        }

    def clean_slug(self) -> str:
        slug = self.cleaned_data.get("slug") or slugify(self.cleaned_data.get("title", ""), allow_unicode=True)
        if not slug:
            raise forms.ValidationError("Give the game a slug (letters, digits, hyphens).")
        qs = Game.objects.filter(slug=slug)
        if self.instance.pk:
            qs = qs.exclude(pk=self.instance.pk)
        if qs.exists():
            raise forms.ValidationError(f"A game with the slug “{slug}” already exists.")
        return slug


class CharacterForm(forms.ModelForm):
    """One character row: aliases comma-separated, goals one per line."""

    aliases_text = forms.CharField(required=False, label="Aliases", help_text="Comma-separated",
                                   widget=forms.TextInput(attrs={"placeholder": "other names, comma-separated"}))
    goals_text = forms.CharField(required=False, label="Goals", widget=forms.Textarea(attrs={"rows": 2}))
    # The version the row was loaded at (annotate.services.versions); not a model field of the form,
    # so saving never copies it onto the row.
    loaded_version = forms.IntegerField(required=False, widget=forms.HiddenInput)

    class Meta:
        model = Character
        fields = ["name", "playable", "is_victim", "is_murderer", "key_role"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            self.fields["aliases_text"].initial = ", ".join(self.instance.aliases or [])
            self.fields["goals_text"].initial = "\n".join(self.instance.goals or [])
            self.fields["loaded_version"].initial = self.instance.version

    def clean_name(self) -> str:
        name = " ".join(self.cleaned_data["name"].split())
        if not name:
            raise forms.ValidationError("A character needs a name.")
        return name

    def save(self, commit: bool = True) -> Character:
        char = super().save(commit=False)
        text = self.cleaned_data.get("aliases_text", "").replace("，", ",").replace("、", ",")
        char.aliases = [a.strip() for a in text.split(",") if a.strip()]
        char.goals = [g.strip() for g in self.cleaned_data.get("goals_text", "").splitlines() if g.strip()]
        if commit:
            char.save()
        return char


CharacterFormSet = forms.modelformset_factory(Character, form=CharacterForm, extra=1, can_delete=False)


class ScriptForm(forms.ModelForm):
    loaded_version = forms.IntegerField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["loaded_version"].initial = self.instance.version

    class Meta:
        model = Character
        fields = ["script", "self_intro"]
        widgets = {"script": forms.Textarea(attrs={"rows": 16}), "self_intro": forms.Textarea(attrs={"rows": 3})}


class ChainForm(forms.ModelForm):
    class Meta:
        model = ReasoningChain
        fields = ["goal", "title"]


def _int_or_none(value: str | None) -> int | None:
    value = (value or "").strip()
    return int(value) if value.isdigit() else None


def _ids(values: list[str]) -> list[int]:
    return [int(v) for v in values if str(v).strip().isdigit()]


def question_input(post: QueryDict) -> QuestionInput:
    """Parse the question editor. Options come as rows in page order (``option_row`` ids), each
    with ``option_text_<row>`` and an optional ``option_correct_<row>``."""
    options = []
    for row in post.getlist("option_row"):
        text = post.get(f"option_text_{row}", "")
        options.append((text, post.get(f"option_correct_{row}") in ("on", "1", "true")))
    weight_raw = (post.get("weight") or "").strip()
    if weight_raw and not weight_raw.isdigit():
        from annotate.services.questions import QuestionError

        raise QuestionError("The weight must be a positive whole number.")
    return QuestionInput(
        kind=post.get("kind", ""),
        stem=post.get("stem", ""),
        sub_type=post.get("sub_type", "").strip(),
        options=options,
        answer=post.get("answer", ""),
        premises=post.get("premises", "").splitlines(),
        multi=post.get("multi") in ("on", "1", "true"),
        weight=int(weight_raw) if weight_raw else None,
        perspective_id=_int_or_none(post.get("perspective")),
        image_clue_id=_int_or_none(post.get("image_clue")),
        chain_node_id=_int_or_none(post.get("chain_node")),
        evidence_ids=_ids(post.getlist("evidence")),
        status=post.get("status") or Status.DRAFT,
    )


def ids(values: list[str]) -> list[int]:
    return _ids(values)


def int_or_none(value: str | None) -> int | None:
    return _int_or_none(value)
