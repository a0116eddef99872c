"""Reasoning chains: a DAG of direct clues, inferred clues and a conclusion.

A node's hop level is the longest path from a direct clue (direct = 0, WhodunitBench ``p``);
adding an edge that would close a cycle is refused with a message instead of being saved.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping

from django.db import transaction

from annotate.models import ChainNode, Clue, EvidenceSpan, ReasoningChain
from annotate.services import versions
from casebook import audit
from casebook.interchange import NodeKind


class ChainError(ValueError):
    """The change would break the chain; the message is meant for the annotator."""


def find_cycle(parents: Mapping[int, Iterable[int]]) -> list[int] | None:
    """A cycle in the parent graph as a list of node ids, or ``None`` when it is acyclic."""
    state: dict[int, int] = {}  # 1 = on the stack, 2 = done
    stack: list[int] = []

    def visit(node: int) -> list[int] | None:
        state[node] = 1
        stack.append(node)
        for parent in parents.get(node, ()):
            if state.get(parent) == 1:
                return stack[stack.index(parent):] + [parent]
            if parent not in state:
                found = visit(parent)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in list(parents):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def hop_levels(
    kinds: Mapping[int, str], parents: Mapping[int, Iterable[int]], declared: Mapping[int, int | None] | None = None
) -> dict[int, int | None]:
    """Longest path from a direct node to each node; ``None`` when no direct node leads there.

    A declared level (``ChainNode.level``, kept from an import until the node is edited) wins: a
    published pool says its statement is ``2-step`` even where the level below is missing.
    Assumes the graph is acyclic (it is kept so by :func:`set_parents`).
    """
    memo: dict[int, int | None] = {}

    def level(node: int) -> int | None:
        if node in memo:
            return memo[node]
        if declared and declared.get(node) is not None:
            memo[node] = declared[node]
            return memo[node]
        if kinds.get(node) == NodeKind.DIRECT:
            memo[node] = 0
            return 0
        best = None
        for parent in parents.get(node, ()):
            up = level(parent)
            if up is not None and (best is None or up + 1 > best):
                best = up + 1
        memo[node] = best
        return best

    return {node: level(node) for node in kinds}


def chain_graph(chain: ReasoningChain) -> tuple[list[ChainNode], dict[int, list[int]], dict[int, int | None]]:
    """Nodes (with evidence and image clue loaded), parent map and levels, in two queries."""
    nodes = list(chain.nodes.select_related("image_clue").prefetch_related("evidence"))
    links = ChainNode.parents.through.objects.filter(from_chainnode__chain=chain).values_list(
        "from_chainnode_id", "to_chainnode_id"
    )
    parents: dict[int, list[int]] = {n.pk: [] for n in nodes}
    for child, parent in links:
        parents.setdefault(child, []).append(parent)
    levels = hop_levels({n.pk: n.kind for n in nodes}, parents, {n.pk: n.level for n in nodes})
    return nodes, parents, levels


def _node_snapshot(node: ChainNode) -> dict:
    return audit.snapshot(
        node,
        parents=sorted(node.parents.values_list("pk", flat=True)),
        evidence=sorted(node.evidence.values_list("pk", flat=True)),
    )


def _validate(kind: str, text: str, span_ids: list[int], image_clue: Clue | None, parent_ids: list[int]) -> None:
    if kind not in set(NodeKind):
        raise ChainError(f"Unknown node kind {kind!r}.")
    if not text.strip():
        raise ChainError("A node needs its statement text.")
    if kind == NodeKind.DIRECT:
        if not span_ids and image_clue is None:
            raise ChainError("A direct clue must cite an evidence span or an image clue.")
        if parent_ids:
            raise ChainError("A direct clue comes from the material itself: it has no parent nodes.")
    elif not parent_ids:
        raise ChainError(f"An {kind} node must cite at least one parent node.")


@transaction.atomic
def save_node(
    chain: ReasoningChain, node: ChainNode | None, *, kind: str, text: str, parent_ids: Iterable[int] = (),
    span_ids: Iterable[int] = (), image_clue_id: int | None = None, knowledge: str = "", user=None,
    expected_version: int | None = None,
) -> ChainNode:
    """Create or update a node; refuses cycles, foreign ids and direct nodes without evidence. An
    update checks the version the editor loaded (``expected_version``, else the one ``node`` was
    read at) and raises VersionConflict when someone saved the node in between."""
    parent_ids = sorted({int(p) for p in parent_ids})
    span_ids = sorted({int(s) for s in span_ids})
    game = chain.game
    image_clue = Clue.objects.filter(game=game, pk=image_clue_id).first() if image_clue_id else None
    if image_clue_id and image_clue is None:
        raise ChainError("That image clue is not part of this game.")
    if len(EvidenceSpan.objects.filter(game=game, pk__in=span_ids)) != len(span_ids):
        raise ChainError("Some evidence spans are not part of this game.")
    known = set(ChainNode.objects.filter(chain=chain, pk__in=parent_ids).values_list("pk", flat=True))
    if known != set(parent_ids):
        raise ChainError("Parent nodes must belong to the same chain.")
    _validate(kind, text, span_ids, image_clue, parent_ids)

    if node is not None:
        _, parents, _ = chain_graph(chain)
        parents[node.pk] = parent_ids
        cycle = find_cycle(parents)
        if cycle:
            names = dict(ChainNode.objects.filter(pk__in=cycle).values_list("pk", "key"))
            raise ChainError("That would make a cycle: " + " → ".join(names.get(i, str(i)) for i in reversed(cycle)))
        before = _node_snapshot(node)
        versions.claim(node, node.version if expected_version is None else expected_version,
                       ChainNode.objects.prefetch_related("parents", "evidence"))
    else:
        before = None
        position = chain.nodes.count()
        node = ChainNode(chain=chain, key=_free_key(chain, kind), position=position)
    node.kind, node.text, node.knowledge, node.image_clue = kind, text.strip(), knowledge.strip(), image_clue
    node.level = None  # computed from the graph from now on
    node.save()
    node.parents.set(parent_ids)
    node.evidence.set(span_ids)
    _touch(chain)
    audit.record(game, user, node, "update" if before else "create", before, _node_snapshot(node))
    return node


@transaction.atomic
def delete_node(node: ChainNode, user=None) -> None:
    """Delete a node; its children lose it as a parent (and must be fixed by the annotator)."""
    chain = node.chain
    before = _node_snapshot(node)
    pk = node.pk
    node.delete()
    node.pk = pk
    _touch(chain)
    audit.record(chain.game, user, node, "delete", before, None)


def _free_key(chain: ReasoningChain, kind: str) -> str:
    """A node key unused in the whole game: questions and key statements cite nodes by key alone."""
    prefix = {"direct": "d", "inferred": "i", "conclusion": "c"}.get(kind, "n")
    used = set(ChainNode.objects.filter(chain__game_id=chain.game_id).values_list("key", flat=True))
    n = 1
    while f"{prefix}{n}" in used:
        n += 1
    return f"{prefix}{n}"


def _touch(chain: ReasoningChain) -> None:
    ReasoningChain.objects.filter(pk=chain.pk).update(version=chain.version + 1)
    chain.version += 1


def level_label(level: int | None) -> str:
    """WhodunitBench's level names: ``p`` for a direct clue, ``n-step`` after n inferences."""
    if level is None:
        return "–"
    return "p" if level == 0 else f"{level}-step"


def game_nodes(game) -> list[tuple[ChainNode, int | None]]:
    """Every chain node of a game with its hop level, in two queries (for pickers)."""
    nodes = list(ChainNode.objects.filter(chain__game=game).select_related("chain").only(
        "id", "key", "kind", "text", "level", "chain__id", "chain__title", "chain__goal"))
    links = ChainNode.parents.through.objects.filter(from_chainnode__chain__game=game).values_list(
        "from_chainnode_id", "to_chainnode_id")
    parents: dict[int, list[int]] = {}
    for child, parent in links:
        parents.setdefault(child, []).append(parent)
    levels = hop_levels({n.pk: n.kind for n in nodes}, parents, {n.pk: n.level for n in nodes})
    return [(n, levels.get(n.pk)) for n in nodes]
