"""What `optimize` hands back in Python: result.json (docs/result-schema.md) as an object.

The fields most scripts want are attributes (speed-up per case, best parameters, optimized
source, diff, report path); everything else is in `data`, the parsed result.json.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any


@dataclasses.dataclass(frozen=True)
class CaseResult:
    """One case: its time as written and optimized (median, ms) and the speed-up between them
    (from the confirmation run; None where a time is missing)."""

    case: dict[str, Any]
    label: str
    baseline_ms: float | None
    best_ms: float | None
    speedup: float | None
    status: str


@dataclasses.dataclass(frozen=True)
class OptimizeResult:
    """An `optimize` run. `status` is "improved", "unchanged" or "no-gpu" (then only the
    analysis and compile checks ran: `compile_checks`, and no times)."""

    status: str
    speedup: float | None
    cases: tuple[CaseResult, ...]
    best_config: dict[str, Any]
    best_config_text: str
    source: str | None
    diff: str | None
    out_dir: Path | None
    source_path: Path | None
    diff_path: Path | None
    report_path: Path | None
    html_path: Path | None
    result_path: Path | None
    version: str
    commit: str
    data: dict[str, Any]

    @property
    def improved(self) -> bool:
        return self.status == "improved"

    @property
    def compile_checks(self) -> list[dict[str, Any]]:
        return list(self.data.get("compile_checks") or [])

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "OptimizeResult":
        outputs = data.get("outputs") or {}

        def path(key: str) -> Path | None:
            value = outputs.get(key)
            return Path(value) if value else None

        def text(p: Path | None) -> str | None:
            if p is None or not p.is_file():
                return None
            return p.read_text(encoding="utf-8", errors="replace")

        baseline = {i: c for i, c in enumerate((data.get("baseline") or {}).get("per_case") or [])}
        best = data.get("best") or {}
        cases = []
        for i, b in enumerate(best.get("per_case") or []):
            base = baseline.get(i, {})
            cases.append(CaseResult(case=dict(b.get("case") or base.get("case") or {}),
                                    label=b.get("label") or base.get("label") or "",
                                    baseline_ms=base.get("time_ms"),
                                    best_ms=b.get("time_ms"),
                                    speedup=b.get("speedup", 1.0 if best.get("id") == 0 and b.get("time_ms") else None),
                                    status=b.get("status", "")))
        tool = data.get("tool") or {}
        source_path, diff_path = path("source"), path("diff")
        return cls(status=data.get("status", ""),
                   speedup=data.get("speedup"),
                   cases=tuple(cases),
                   best_config=dict(best.get("config") or {}),
                   best_config_text=best.get("config_text", ""),
                   source=text(source_path),
                   diff=text(diff_path),
                   out_dir=path("dir"),
                   source_path=source_path,
                   diff_path=diff_path,
                   report_path=path("report"),
                   html_path=path("html"),
                   result_path=path("result"),
                   version=tool.get("version", ""),
                   commit=tool.get("commit", ""),
                   data=data)

    def __repr__(self) -> str:
        speed = f"{self.speedup:.2f}x" if isinstance(self.speedup, (int, float)) else "-"
        return (f"OptimizeResult(status={self.status!r}, speedup={speed}, best={self.best_config_text!r}, "
                f"out_dir={str(self.out_dir) if self.out_dir else None!r})")
