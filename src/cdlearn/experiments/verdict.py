"""The verdict of one reproduction against its paper, written by the run itself.

Every ``run_<name>`` ends by calling :func:`write_verdict` with the paper's claim,
the number it measured, and a verdict computed from that number (a threshold in
the experiment's code, never a string typed by hand). ``cdlearn reproduce
--summary`` collects the ``verdict.json`` files into one agreement table.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

__all__ = ["VERDICTS", "Verdict", "read_verdicts", "write_verdict"]

#: The allowed verdicts, best first. "under-specified": the paper does not give a
#: parameter the result depends on; "no data": the paper's data is not available
#: here and no faithful substitute exists.
VERDICTS = ("agrees", "partly", "no", "under-specified", "no data")

VERDICT_FILE = "verdict.json"


@dataclass(frozen=True)
class Verdict:
    """One row of the agreement table."""

    id: str
    claim: str      # the paper's claim or number, one line
    ours: str       # what this run measured, one line
    verdict: str    # one of VERDICTS
    reason: str     # one line; for anything but "agrees", what the evidence is
    evidence: str   # file (and #anchor) in the run's folder holding the evidence
    mode: str       # "quick" or "full"


def write_verdict(out_dir, *, exp_id: str, claim: str, ours: str, verdict: str,
                  reason: str, full: bool, evidence: str = "README.md") -> Path:
    """Write ``out_dir/verdict.json``; returns its path."""
    if verdict not in VERDICTS:
        raise ValueError(f"verdict must be one of {VERDICTS}, got {verdict!r}")
    for name, text in (("claim", claim), ("ours", ours), ("reason", reason)):
        if not text or "\n" in text:
            raise ValueError(f"{name} must be one non-empty line, got {text!r}")
    row = Verdict(exp_id, claim, ours, verdict, reason, evidence, "full" if full else "quick")
    path = Path(out_dir) / VERDICT_FILE
    path.write_text(json.dumps(asdict(row), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def read_verdicts(results_dir) -> list[Verdict]:
    """Every ``<results_dir>/<ID>/verdict.json``, sorted by ID."""
    rows = []
    for path in sorted(Path(results_dir).glob(f"*/{VERDICT_FILE}")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("verdict") not in VERDICTS:
            raise ValueError(f"{path}: verdict must be one of {VERDICTS}, got {data.get('verdict')!r}")
        rows.append(Verdict(**{k: data[k] for k in Verdict.__dataclass_fields__}))
    return rows
