"""Pages of the result files, written at build time (``builder-inited``).

Every ``benchmarks/results/**/*.md`` and ``tests_sklearn/results/report.md``
gets a page ``generated/<slug>.md`` that *includes* the file (myst's
``include``), so the site shows what the file says today: a new result file
appears on its own, nothing is copied by hand. The plots written beside a file
(``<stem>*.png``; for a ``results.md``, or a run's ``note.md`` / ``README.md``,
every PNG of its folder that belongs to no other file) are shown under it. A file whose name starts with a
``cdlearn reproduce`` experiment id, or that sits in a folder named after one
(``benchmarks/results/reproductions/<ID>/note.md``), is listed under the
reproductions. The agreement table ``benchmarks/results/reproductions/summary.md``
(written by ``cdlearn reproduce --summary``) comes first there, with its links to
the notes' evidence pointed at the notes' pages.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

SOURCES = [("benchmarks/results", "**/*.md"), ("tests_sklearn/results", "report.md")]
SUMMARY = "benchmarks/results/reproductions/summary.md"


def _experiment_ids() -> list[str]:
    from cdlearn.experiments import experiment_ids

    return experiment_ids()


def _title_and_start(text: str, fallback: str) -> tuple[str, int]:
    """The first line's ``# heading`` as the page title (and skip it), else ``fallback``."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.strip():
            m = re.match(r"#\s+(.*\S)", line)
            return (m.group(1), i + 1) if m else (fallback, 0)
    return fallback, 0


def collect(root: Path) -> list[Path]:
    files = []
    for folder, pattern in SOURCES:
        files += sorted((root / folder).glob(pattern))
    return files


def plots(path: Path) -> list[Path]:
    """The PNGs beside result file ``path`` that belong to it."""
    pngs = sorted(path.parent.glob("*.png"))
    if path.name in ("results.md", "note.md", "README.md"):  # a run folder: all its plots
        others = [m.stem for m in path.parent.glob("*.md") if m != path]
        return [p for p in pngs if not any(p.stem.startswith(o) for o in others)]
    return [p for p in pngs if p.stem.startswith(path.stem)]


def _slug(rel: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", rel.removesuffix(".md")).strip("-").lower()


def summary_page(root: Path) -> str:
    """The agreement table's page: the summary file with every relative link
    ``ID/file.md#anchor`` pointed at the generated page of that note."""
    path = root / SUMMARY
    folder = path.parent.relative_to(root).as_posix()
    text = path.read_text(encoding="utf-8")

    def relink(m: re.Match) -> str:
        target, anchor = m.group(2), m.group(3) or ""
        if not (path.parent / target).is_file():
            return m.group(0)
        return f"]({_slug(f'{folder}/{target}')}.md{anchor})"

    text = re.sub(r"\]\((([\w.-]+/[\w./-]+\.md))(#[\w-]+)?\)", relink, text)
    title, start = _title_and_start(text, SUMMARY)
    body = "\n".join(text.splitlines()[start:])
    return (f"# {title}\n\nGenerated at build time from `{SUMMARY}` (written by "
            "`cdlearn reproduce --summary`; regenerate it, do not edit this page).\n"
            + body + "\n")


def write_pages(root: Path, srcdir: Path) -> list[str]:
    """Write ``srcdir/generated/*.md`` for the result files under ``root``; return their names."""
    out = srcdir / "generated"
    out.mkdir(exist_ok=True)
    for old in out.glob("*.md"):
        old.unlink()
    ids = sorted(_experiment_ids(), key=len, reverse=True)
    groups: dict[str, list[str]] = {"benchmarks": [], "reproductions": [], "sklearn": []}
    for path in collect(root):
        rel = path.relative_to(root).as_posix()
        slug = _slug(rel)
        if rel == SUMMARY:
            (out / f"{slug}.md").write_text(summary_page(root), encoding="utf-8")
            groups["reproductions"].insert(0, slug)
            continue
        title, start = _title_and_start(path.read_text(encoding="utf-8"), rel)
        include = os.path.relpath(path, out).replace(os.sep, "/")
        options = [":heading-offset: 1", ":relative-images:"]
        if start:
            options.insert(0, f":start-line: {start}")
        (out / f"{slug}.md").write_text(
            f"# {title}\n\n"
            f"Generated at build time from `{rel}` (edit that file, not this page).\n\n"
            "```{include} " + include + "\n" + "\n".join(options) + "\n```\n"
            + "".join(f"\n## Plot `{png.name}`\n\n```{{image}} "
                      f"{os.path.relpath(png, out).replace(os.sep, '/')}\n:alt: {png.stem}\n```\n"
                      for png in plots(path)),
            encoding="utf-8")
        if rel.startswith("tests_sklearn"):
            groups["sklearn"].append(slug)
        elif any(path.stem.startswith(i) for i in ids) or path.parent.name in ids:
            groups["reproductions"].append(slug)
        else:
            groups["benchmarks"].append(slug)
    for group, slugs in groups.items():
        body = "\n".join(f"/generated/{s}" for s in slugs)
        (out / f"_toc_{group}.md").write_text(
            "```{toctree}\n:maxdepth: 1\n\n" + body + "\n```\n", encoding="utf-8")
    return [s for slugs in groups.values() for s in slugs]
