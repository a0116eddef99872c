"""Heavy SDKs imported at first use, so that ``manage.py`` commands and the URL conf start fast.

``openai`` (~0.5 s) and ``label_studio_sdk`` (~0.8 s, with pandas) are needed only by the few
code paths that talk to an endpoint; a module writes ``openai = lazy_module("openai")`` and uses
``openai.OpenAI`` as before, and the import happens on the first attribute read.
"""
from __future__ import annotations

from importlib import import_module
from types import ModuleType
from typing import Any


class LazyModule:
    """Stands for a module until an attribute is read; then imports it once and delegates."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attribute: str) -> Any:
        if self._module is None:
            self._module = import_module(self._name)
        return getattr(self._module, attribute)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}{'' if self._module is None else ' (loaded)'}>"


def lazy_module(name: str) -> Any:
    return LazyModule(name)
