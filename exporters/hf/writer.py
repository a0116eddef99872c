"""The Hugging Face layout: ``data/<table>.parquet``, ``images/…`` and the dataset card ``README.md``.

pyarrow is imported here, at first use, so commands that do not write Parquet never load it.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from .card import dataset_card
from .tables import COLUMNS, STRS, tables


def _schema(columns: dict[str, str]):
    import pyarrow as pa

    types = {"string": pa.string(), "int64": pa.int64(), "bool": pa.bool_(), "float64": pa.float64(),
             STRS: pa.list_(pa.string())}
    return pa.schema([(name, types[kind]) for name, kind in columns.items()])


def write_hf(documents: list[Any], out_dir: Path, *, include_drafts: bool = False) -> list[Path]:
    """Write the tables of ``documents`` (:class:`GameDocument`) and their images; returns the files."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = tables([d.data for d in documents], include_drafts=include_drafts)
    written: list[Path] = []
    files: dict[str, str] = {}
    (out_dir / "data").mkdir(parents=True, exist_ok=True)
    for name, items in rows.items():
        schema = _schema(COLUMNS[name])
        table = pa.Table.from_pylist(items, schema=schema)
        files[name] = f"data/{name}.parquet"
        path = out_dir / files[name]
        pq.write_table(table, path, compression="zstd", write_statistics=False)
        written.append(path)
    used = {row["image"] for row in rows["clues"] if row["image"]}
    for doc in documents:
        for rel, data in doc.images.items():
            path = out_dir / rel
            if rel in used and not path.exists():
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
                written.append(path)
    columns = {name: COLUMNS[name] for name in rows}
    counts = {name: len(items) for name, items in rows.items()}
    languages = sorted({d.data["game"]["language"] for d in documents})
    card = out_dir / "README.md"
    card.write_text(dataset_card(columns, counts, files, languages, [d.data["game"]["slug"] for d in documents]),
                    encoding="utf-8")
    written.append(card)
    return sorted(written)
