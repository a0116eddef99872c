"""The JSON each synthesis stage asks for: one schema per stage, used twice.

The schema goes to the endpoint as structured output (strict: every property required, nothing
else allowed), and the same schema checks the reply, because servers without structured output
(llama.cpp, small models) answer in free JSON. The check coerces what is unambiguous (``"3"`` for
3, ``1``/``0`` for true/false) and names the first field that is wrong, for the stage's report.
"""
from __future__ import annotations

from typing import Any

STRING = {"type": "string"}
INTEGER = {"type": "integer"}


def obj(**properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def arr(items: dict[str, Any], min_items: int = 0) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "array", "items": items}
    if min_items:
        schema["minItems"] = min_items
    return schema


def enum(*values: str) -> dict[str, Any]:
    return {"type": "string", "enum": list(values)}


OUTLINE = obj(
    title=STRING,
    victim=obj(name=STRING, summary=STRING),
    characters=arr(obj(name=STRING, summary=STRING, secret=STRING), 2),
    murderer=STRING,
    timeline=arr(obj(time=STRING, character=STRING, action=STRING), 1),
    background=STRING,
    motive=STRING,
    method=STRING,
)
CHARACTER = obj(name=STRING, back=STRING, m=INTEGER)
SCORE_AXES = ("plot_complexity", "character_development", "difficulty", "logical_consistency")
CRITIC = obj(
    scores=obj(**{axis: INTEGER for axis in SCORE_AXES}),
    outline_suggestions=STRING,
    character_suggestions=arr(obj(name=STRING, suggestion=STRING)),
)
CLUES = obj(
    public_clues=arr(STRING, 1),
    images=arr(obj(index=INTEGER, kind=enum("text_rich", "media_rich"), visible_text=STRING)),
)
POOL = obj(
    direct=arr(obj(id=STRING, text=STRING, source=STRING, quote=STRING), 1),
    inferred=arr(obj(id=STRING, text=STRING, parents=arr(STRING), knowledge=STRING, hops=INTEGER)),
    conclusions=arr(obj(id=STRING, goal=enum("murderer", "method", "motive"), text=STRING, parents=arr(STRING)), 1),
)
_MCQ = {"question": STRING, "options": arr(STRING, 2), "answer": STRING}
LONG_SCRIPT = obj(questions=arr(obj(**_MCQ, quote=STRING)))
IMAGE = obj(questions=arr(obj(**_MCQ)))
MULTI_HOP = obj(questions=arr(obj(**_MCQ, node=STRING)))
CMD = obj(motive=STRING, method=STRING)


# Fields a small model may leave out without making the reply unusable (they default to "").
OPTIONAL = frozenset({"summary", "secret", "knowledge", "quote", "visible_text", "outline_suggestions", "suggestion"})


class ShapeError(ValueError):
    """The reply is JSON but not of the stage's shape; the message names the field."""


def conform(value: Any, schema: dict[str, Any], path: str = "$") -> Any:
    """``value`` checked against ``schema`` and lightly coerced; raises :class:`ShapeError`."""
    kind = schema.get("type")
    if kind == "object":
        if not isinstance(value, dict):
            raise ShapeError(f"{path} should be an object, got {type(value).__name__}")
        out = {}
        for key, sub in schema["properties"].items():
            if key not in value:
                if sub.get("type") == "array":
                    value = {**value, key: []}  # an empty list said by omission
                elif sub.get("type") == "string" and key in OPTIONAL:
                    value = {**value, key: ""}
                else:
                    raise ShapeError(f"{path}.{key} is missing")
            out[key] = conform(value[key], sub, f"{path}.{key}")
        return out
    if kind == "array":
        if not isinstance(value, list):
            raise ShapeError(f"{path} should be a list, got {type(value).__name__}")
        if len(value) < schema.get("minItems", 0):
            raise ShapeError(f"{path} should have at least {schema['minItems']} item(s), got {len(value)}")
        return [conform(item, schema["items"], f"{path}[{i}]") for i, item in enumerate(value)]
    if kind == "integer":
        if isinstance(value, bool):
            return int(value)
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            return int(value.strip())
        raise ShapeError(f"{path} should be a whole number, got {value!r}"[:160])
    if kind == "string":
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str):
            raise ShapeError(f"{path} should be text, got {type(value).__name__}")
        allowed = schema.get("enum")
        if allowed:
            folded = value.strip().lower().replace("-", "_").replace(" ", "_")
            if folded not in allowed:
                raise ShapeError(f"{path} should be one of {', '.join(allowed)}, got {value!r}"[:160])
            return folded
        return value.strip()
    return value
