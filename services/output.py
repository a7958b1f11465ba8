"""Printing for the CLI: one JSON object on stdout for --json, Rich tables otherwise, errors on stderr."""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.console import Console
from rich.table import Table

# Wide enough for the report tables when the output is a pipe or a log file (Rich assumes 80 columns there).
out = Console(width=None if sys.stdout.isatty() else 200)
err = Console(stderr=True, soft_wrap=True)


def print_json(value: Any) -> None:
    print(json.dumps(value, indent=2, sort_keys=False, default=str))


def key_value_table(title: str, rows: dict[str, Any]) -> Table:
    table = Table(title=title, show_header=False, title_justify="left")
    table.add_column("key", style="bold")
    table.add_column("value", overflow="fold")
    for k, v in rows.items():
        table.add_row(k, v if isinstance(v, str) else json.dumps(v, default=str))
    return table


def records_table(title: str, records: list[dict[str, Any]], columns: list[str]) -> Table:
    table = Table(title=title, title_justify="left")
    for c in columns:
        table.add_column(c, justify="right" if records and isinstance(records[0].get(c), int | float) else "left")
    for r in records:
        table.add_row(*[_cell(r.get(c)) for c in columns])
    return table


def _cell(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.3g}" if (v != 0 and (abs(v) < 1e-2 or abs(v) >= 1e5)) else f"{v:,.2f}".rstrip("0").rstrip(".")
    if isinstance(v, bool):
        return "yes" if v else "no"
    return str(v)
