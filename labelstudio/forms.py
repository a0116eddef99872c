"""The bridge page's form: where Label Studio is, the token, what to push."""
from __future__ import annotations

from django import forms

from . import config


class ConnectionForm(forms.Form):
    action = forms.ChoiceField(choices=[("push", "Push"), ("pull", "Pull")])
    url = forms.URLField(label="Label Studio URL", max_length=500, assume_scheme="http",
                         widget=forms.URLInput(attrs={"placeholder": "http://127.0.0.1:8089", "size": 40}))
    token = forms.CharField(label="Access token", max_length=200, strip=True,
                            widget=forms.PasswordInput(attrs={"autocomplete": "off", "size": 44}),
                            help_text="Label Studio → Account & Settings → legacy token. Not stored.")
    kinds = forms.MultipleChoiceField(choices=[(k, k) for k in config.KINDS], initial=list(config.KINDS), required=False,
                                      widget=forms.CheckboxSelectMultiple, help_text="Push only.")
    keep_deleted = forms.BooleanField(required=False, label="Keep items deleted in Label Studio",
                                      help_text="Pull only. Unticked: drafts whose annotation was deleted there are withdrawn.")

    def clean(self):
        data = super().clean()
        if data.get("action") == "push" and not data.get("kinds"):
            self.add_error("kinds", "Choose at least one kind to push.")
        return data
