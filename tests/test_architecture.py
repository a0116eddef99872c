"""Dependencies point one way: core ``casebook`` ← domain ``annotate`` ← features ← integration.

A small AST check of every project module (function-level imports included, since a lazy import
is still a dependency). Scope and why:

- checked: every ``.py`` file of the apps, management commands and migrations included (a
  migration importing app code would freeze that dependency into the history);
- not checked: ``tests/`` and ``benchmarks/`` (drivers that exercise every layer together), and
  the project wiring in ``casebook/`` (settings, root URL conf, WSGI/ASGI), which by nature names
  every app; it holds no logic other apps import.

Feature → feature edges are refused unless listed in :data:`ALLOWED`, module by module, with the
reason; the allowed edges must stay acyclic. The one CJK definition (``casebook/text.py``) is
guarded here too: no other project module may spell an ideograph range.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

CORE, DOMAIN, FEATURE, INTEGRATION = 0, 1, 2, 3
LAYERS: dict[str, int] = {
    "casebook": CORE,
    "annotate": DOMAIN,
    "review": FEATURE, "generation": FEATURE, "ingest": FEATURE, "exporters": FEATURE,
    "evaluation": FEATURE, "synthesis": FEATURE, "playlogs": FEATURE,
    "labelstudio": INTEGRATION,
}
# Project wiring inside the core package: composes the apps, is imported by none of them.
WIRING = {"casebook/settings.py", "casebook/urls.py", "casebook/wsgi.py", "casebook/asgi.py"}

# Feature → feature imports that are right (importer app, imported module): keep this short.
ALLOWED: dict[tuple[str, str], str] = {
    # The published formats are parsed in one place, the format packages; evaluating models on
    # the published datasets reuses those readers instead of parsing the files a second time.
    ("evaluation", "exporters.generic.reader"): "reads JSONL datasets with the format's reader",
    ("evaluation", "exporters.wellplay.reader"): "reads WellPlay with the format's reader",
    ("evaluation", "exporters.whodunitbench.reader"): "reads WhodunitBench with the format's reader",
    ("evaluation", "exporters.whodunitbench.agent_logs"): "reads the published agent logs to score them",
    ("playlogs", "exporters.whodunitbench.agent_logs"): "imports played sessions from the published agent logs",
}

# An ideograph range spelled out (escaped or literal): only casebook/text.py may define one.
CJK_RANGE = re.compile(r"\\u4e00|\\u9fff|\\u3400|\\U00020000|[\u4e00\u3400]-")


@dataclass(frozen=True)
class Violation:
    path: str
    line: int
    imported: str
    why: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line} imports {self.imported}: {self.why}"


def project_modules(root: Path) -> list[Path]:
    """Every module of the layered apps under ``root`` (the project wiring left out)."""
    out = []
    for app in LAYERS:
        for path in sorted((root / app).rglob("*.py")):
            if path.relative_to(root).as_posix() not in WIRING:
                out.append(path)
    return out


def imports_of(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module) of every import in the file, nested ones included; relative
    imports stay inside their own app and are left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            # ``from exporters import conan`` depends on exporters.conan: name the submodule.
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def _allowed(app: str, module: str) -> bool:
    return any(app == a and (module == m or module.startswith(m + ".")) for a, m in ALLOWED)


def check_imports(root: Path) -> list[Violation]:
    """Imports that go against the layers (or sideways without an allow-list entry)."""
    violations = []
    for path in project_modules(root):
        rel = path.relative_to(root).as_posix()
        app = rel.split("/", 1)[0]
        for line, module in imports_of(path):
            target = module.split(".", 1)[0]
            if target not in LAYERS or target == app:
                continue
            if app == "casebook":
                violations.append(Violation(rel, line, module, "the core imports nothing else of ours"))
            elif LAYERS[target] > LAYERS[app]:
                violations.append(Violation(rel, line, module, f"{app} sits below {target}: dependencies point down"))
            elif LAYERS[target] == LAYERS[app] and not _allowed(app, module):
                violations.append(Violation(rel, line, module, f"features do not import each other ({app} → {target}); "
                                                               "move the shared part down, or allow it in ALLOWED"))
    return violations


def check_cjk_ranges(root: Path) -> list[str]:
    """Places other than casebook/text.py that spell a CJK ideograph range of their own."""
    found = []
    for path in project_modules(root) + sorted((root / "benchmarks").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel == "casebook/text.py":
            continue
        for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if CJK_RANGE.search(text):
                found.append(f"{rel}:{number}: a CJK range of its own; use casebook.text (CJK, CJK_RE, has_cjk …)")
    return found


def _cycle(edges: set[tuple[str, str]]) -> list[str] | None:
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return trail + [node, nxt]
            if nxt not in state and (found := visit(nxt, trail + [node])):
                return found
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start, [])):
            return found
    return None


# ---- the project ------------------------------------------------------------------------------

def test_imports_follow_the_layers() -> None:
    violations = check_imports(ROOT)
    assert not violations, "imports against the layers:\n" + "\n".join(map(str, violations))


def test_the_core_imports_nothing_of_ours() -> None:
    core = [v for v in check_imports(ROOT) if v.path.startswith("casebook/")]
    assert not core, "\n".join(map(str, core))
    assert (ROOT / "casebook" / "text.py").exists() and len(project_modules(ROOT)) > 150


def test_the_allowed_feature_edges_are_used_and_acyclic() -> None:
    used = {(p.relative_to(ROOT).parts[0], m) for p in project_modules(ROOT) for _, m in imports_of(p)}
    stale = [f"{a} → {m}" for a, m in ALLOWED if not any(a == ua and (um == m or um.startswith(m + "."))
                                                           for ua, um in used)]
    assert not stale, f"allow-list entries no module needs any more (remove them): {stale}"
    assert _cycle({(a, m.split(".", 1)[0]) for a, m in ALLOWED}) is None


def test_one_cjk_definition() -> None:
    found = check_cjk_ranges(ROOT)
    assert not found, "\n".join(found)


# ---- the checker itself, on a planted tree ------------------------------------------------------

def _plant(root: Path, files: dict[str, str]) -> Path:
    for app in (*LAYERS, "benchmarks"):
        (root / app).mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def test_checker_names_each_planted_violation(tmp_path: Path) -> None:
    root = _plant(tmp_path, {
        "casebook/text.py": 'CJK = "\\u4e00-\\u9fff"\n',
        "casebook/urls.py": "from annotate import views\n",  # wiring: allowed
        "casebook/jobs.py": "import os\n\n\ndef f():\n    from annotate.models import Game\n",
        "annotate/loader.py": "from casebook import text\nfrom review.audit import approvals\n",
        "exporters/writer.py": "from exporters import common\nfrom generation import llm\n",
        "evaluation/wellplay.py": "from exporters.wellplay.reader import read_game\n",  # allow-listed
        "playlogs/assist.py": "import exporters.whodunitbench.agent_logs\nimport generation.views\n",  # 1: allowed
        "labelstudio/pull.py": "from generation.distractors import refresh\nfrom review import states\n",
        "generation/prompts.py": "from . import offline\nimport re\n_CJK = re.compile(r'[\\u3400-\\u9fff]')\n",
        "benchmarks/speed.py": "ZH = '[一-龥]'\n",
    })
    found = {(v.path, v.line, v.imported) for v in check_imports(root)}
    assert found == {
        ("casebook/jobs.py", 5, "annotate.models.Game"),
        ("annotate/loader.py", 2, "review.audit.approvals"),
        ("exporters/writer.py", 2, "generation.llm"),
        ("playlogs/assist.py", 2, "generation.views"),
    }
    messages = "\n".join(map(str, check_imports(root)))
    assert "casebook/jobs.py:5 imports annotate.models.Game: the core imports nothing else of ours" in messages
    assert "exporters/writer.py:2 imports generation.llm: features do not import each other" in messages
    assert sorted(check_cjk_ranges(root)) == [
        "benchmarks/speed.py:1: a CJK range of its own; use casebook.text (CJK, CJK_RE, has_cjk …)",
        "generation/prompts.py:3: a CJK range of its own; use casebook.text (CJK, CJK_RE, has_cjk …)",
    ]


def test_a_clean_planted_tree_passes(tmp_path: Path) -> None:
    root = _plant(tmp_path, {"annotate/models.py": "from casebook.models import Job\n",
                             "review/views.py": "from annotate.services import states\n",
                             "labelstudio/push.py": "from exporters import common\n"})
    assert check_imports(root) == [] and check_cjk_ranges(root) == []


@pytest.mark.parametrize("edges, cyclic", [
    ({("a", "b"), ("b", "c")}, False),
    ({("a", "b"), ("b", "a")}, True),
    ({("a", "b"), ("b", "c"), ("c", "a")}, True),
])
def test_cycle_finder(edges: set[tuple[str, str]], cyclic: bool) -> None:
    assert (_cycle(edges) is not None) == cyclic
