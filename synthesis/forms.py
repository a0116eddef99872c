from __future__ import annotations

from django import forms


class SynthesisForm(forms.Form):
    players = forms.IntegerField(min_value=2, max_value=12, initial=4, help_text="Player characters (the victim is not a player).")
    language = forms.ChoiceField(choices=[("zh", "中文"), ("en", "English")], initial="zh")
    theme = forms.CharField(required=False, max_length=200, help_text="e.g. a family feud, a locked room, 民国谍战")
    setting = forms.CharField(required=False, max_length=200, help_text="Era and place, e.g. a 1930s tea house")
    critic_rounds = forms.IntegerField(min_value=0, max_value=5, initial=1, help_text="Critic → refinement rounds.")
    per_script = forms.IntegerField(min_value=0, max_value=20, initial=4, label="Questions per role script")
    per_image = forms.IntegerField(min_value=0, max_value=10, initial=3, label="Questions per image clue")
    model = forms.CharField(required=False, max_length=200, help_text="Empty: the configured CASEBOOK_LLM_MODEL.")
