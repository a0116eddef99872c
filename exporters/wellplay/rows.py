"""Question CSV files: one row per question, read with the repairs of wellplay.md §9 (ragged rows,
a truth shifted into column ``e``, blank stems, ``bb``/``ac`` truths), each repair reported.
"""
from __future__ import annotations

import csv
import io
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from exporters.common import GBK, UTF8_BOM, decode_text, not_text
from exporters.problems import ProblemLog
from exporters.wellplay.layout import HEADER, OPTION_LETTERS


@dataclass
class CsvRow:
    """One question row after the repairs of §9 (cells stripped, shifted truth moved back)."""

    line: int
    value: str
    type: str
    question: str
    options: list[str]
    truth: str
    notes: list[tuple[str, str, str]] = field(default_factory=list)  # (message, action, severity)

    def key(self) -> tuple[str, str, str, tuple[str, ...], str]:
        return (self.value, self.type, self.question, tuple(self.options), self.truth)


def _letter(cell: str) -> str:
    cell = cell.strip().lower()
    return cell if len(cell) == 1 else ""


def parse_row(cells: list[str], line: int) -> CsvRow | None:
    """One CSV record -> CsvRow (None for blank lines and rows that are not questions).

    Applies the shifted-truth rule of §9.1: when the truth cell is empty or missing and the last
    filled option cell is a single letter a–e, that letter is the truth and not an option; empty
    surplus fields are dropped.
    """
    notes: list[tuple[str, str, str]] = []
    if not cells or not any(c.strip() for c in cells):
        return None
    raw_value = cells[0].strip()
    value = raw_value.lower()
    if value not in ("a", "b", "c"):
        row = CsvRow(line, "", "", "", [], "")
        row.notes.append(
            (f"unknown value (category) {raw_value!r}; expected a, b or c", "row not imported", "warning")
        )
        return row
    raw_type = cells[1].strip() if len(cells) > 1 else ""
    qtype = raw_type.lower()
    if raw_value != value or (raw_type != qtype and qtype in ("a", "b")):
        notes.append((f"uppercase letters {raw_value!r}/{raw_type!r} in value/type", "read as lowercase", "info"))
    if qtype not in ("a", "b"):
        notes.append((f"unknown type {raw_type!r}; expected a or b", "read as single choice (a)", "warning"))
        qtype = "a"
    question = cells[2].strip() if len(cells) > 2 else ""
    if not question:
        notes.append(("blank question text", "imported with an empty stem", "warning"))
    tail = [c.strip() for c in cells[3:]]
    if len(cells) != 9:
        surplus = "empty surplus fields dropped" if len(cells) > 9 else "missing fields read as empty"
        notes.append((f"{len(cells)} fields instead of 9", surplus, "warning"))
    if len(cells) == 9 and tail[5]:
        options, truth = tail[:5], tail[5]
    else:
        filled = list(tail)
        while filled and not filled[-1]:
            filled.pop()
        truth = ""
        if filled and _letter(filled[-1]) and _letter(filled[-1]) in OPTION_LETTERS:
            position = len(filled) - 1  # index in tail; 5 = the truth column
            truth = filled.pop()
            if position != 5:
                column = OPTION_LETTERS[position] if position < 5 else f"field {position + 4}"
                notes.append(
                    (f"truth is empty and column {column} holds the letter {truth!r} (shifted truth)",
                     f"read {truth.lower()!r} as the truth, not as an option", "warning")
                )
        options = filled
    while options and not options[-1]:
        options.pop()
    if not truth:
        notes.append(("no truth (answer letter)", "imported with no correct option", "warning"))
    if truth != truth.lower():
        notes.append((f"uppercase truth {truth!r}", "read as lowercase", "info"))
        truth = truth.lower()
    if "" in options:
        notes.append(("empty option cell between filled ones", "kept as an empty option", "warning"))
    if len(options) > 5:
        notes.append((f"{len(options)} options (WellPlay has 5 columns a–e)", "all options kept", "warning"))
    dups = sorted({o for o, n in Counter(options).items() if n > 1 and o})
    if dups:
        notes.append((f"duplicate option texts {dups}", "kept as published", "info"))
    bad = [ch for ch in truth if ch not in OPTION_LETTERS[: len(options)]]
    if bad:
        notes.append((f"truth {truth!r} names no option ({''.join(bad)!r})", "kept verbatim", "warning"))
    if truth and len(set(truth)) < len(truth):
        notes.append((f"truth {truth!r} repeats a letter", f"kept verbatim; option(s) {''.join(sorted(set(truth)))!r} marked correct", "warning"))
    elif qtype == "a" and len(set(truth)) > 1:
        notes.append((f"single-choice question with {len(set(truth))} accepted answers {truth!r}", "kept; all marked correct", "info"))
    return CsvRow(line, value, qtype, question, options, truth, notes)


def read_question_csv(path: Path, log: ProblemLog) -> list[CsvRow] | None:
    """Read one ``final_result/*.csv`` (utf-8-sig, csv module). None if the file is unusable."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        log.add(path, f"cannot read file: {(exc.strerror or 'input/output error').lower()}", "file skipped",
                severity="error")
        return None
    try:
        text, encoding = decode_text(data)
    except UnicodeDecodeError as exc:
        log.add(path, not_text(exc), "file skipped", severity="error")
        return None
    if encoding == GBK:
        log.add(path, f"encoded as {encoding}", f"read as {encoding}", severity="info")
    elif data.startswith(UTF8_BOM):
        log.add(path, "starts with a UTF-8 BOM", "ignored", severity="info")
    if data and not data.endswith(b"\n"):
        log.add(path, "no final newline", "last row read normally", severity="info")
    if "\r" in text:
        log.add(path, "CR line ends", "read as LF", severity="info")
    reader = csv.reader(io.StringIO(text, newline=""))
    rows: list[CsvRow] = []
    try:
        header = next(reader, None)
    except csv.Error as exc:
        log.add(path, f"not a CSV file ({exc})", "file skipped", severity="error")
        return None
    if header is None:
        log.add(path, "empty file", "no questions imported", severity="warning")
        return []
    columns = [h.strip().lower() for h in header]
    order: list[int] | None = None
    if columns != HEADER:
        if sorted(columns) == sorted(HEADER):
            order = [columns.index(h) for h in HEADER]
            log.add(path, f"header columns in another order: {','.join(header)}", "columns mapped by name",
                    location="line 1")
        else:
            log.add(path, f"unexpected header {','.join(header)!r} (expected {','.join(HEADER)})",
                    "file skipped", location="line 1", severity="error")
            return None
    elif header != HEADER:
        log.add(path, "header has spaces or uppercase letters", "read as the standard header", location="line 1",
                severity="info")
    spaces = 0
    blank_lines: list[int] = []
    last = reader.line_num
    try:
        for cells in reader:
            line = last + 1
            last = reader.line_num
            if order is not None and len(cells) >= len(HEADER):
                cells = [cells[i] for i in order] + cells[len(HEADER):]
            spaces += sum(1 for c in cells[2:] if c != c.strip())
            row = parse_row(cells, line)
            if row is None:
                blank_lines.append(line)
                continue
            for message, action, severity in row.notes:
                log.add(path, message, action, location=f"line {line}", severity=severity)
            if row.value:
                rows.append(row)
    except csv.Error as exc:
        log.add(path, f"CSV syntax error ({exc})", f"rows up to line {last} kept", location=f"line {last + 1}",
                severity="error")
    if blank_lines:
        log.add(path, f"blank line(s) {', '.join(map(str, blank_lines))}", "skipped", severity="info")
    if spaces:
        log.add(path, f"{spaces} cell(s) with leading/trailing spaces", "stripped", severity="info")
    return rows


def signature(row: CsvRow) -> tuple[str, str, str]:
    """What must agree between the two languages of a game: value, type and the truth's letter set
    (zh Ghost Revenge writes "bb" where en writes "b")."""
    return (row.value, row.type, "".join(sorted(set(row.truth))))
