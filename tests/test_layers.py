"""The layer order of DESIGN.md: a module imports only from its own layer or earlier ones.

Every import statement of every module under ``src/cdlearn`` is read with ``ast``,
including imports inside functions (a lazy import is still a dependency: it is
how ``api`` and ``multiclass`` used to call each other). A module not in the
table below fails the test, so a new module gets a layer when it is added.
"""

from __future__ import annotations

import ast
from pathlib import Path

import cdlearn

ROOT = Path(cdlearn.__file__).parent

#: DESIGN.md "Layers"; packages (kernels, solvers, ...) give every module in them their layer
LAYERS = {
    "data": 1, "compile_stats": 1,
    "losses": 2, "penalties": 2, "penalties_group": 2, "objectives": 2,
    "multi_objectives": 2,
    "sampling": 3,
    "kernels": 4,
    "solvers": 5,
    "api": 6, "faceoff": 6,
    "multiclass": 7, "paths": 7, "distributed": 7, "multioutput": 7,
    "estimators": 8,
    "datasets": 9, "experiments": 9, "cli": 9, "report": 9, "features": 9,
    "warmup": 9,
}


def _layer(module: str) -> int:
    """Layer of ``cdlearn.a.b`` from its first component after ``cdlearn``."""
    parts = module.split(".")
    assert parts[0] == "cdlearn", module
    if len(parts) == 1:
        return 0  # the package facade, checked separately
    assert parts[1] in LAYERS, f"cdlearn.{parts[1]} has no layer in LAYERS (DESIGN.md)"
    return LAYERS[parts[1]]


def _module_name(path: Path, root: Path = ROOT) -> tuple[str, bool]:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    if is_package:
        parts.pop()
    return ".".join(parts), is_package


def _imports(path: Path, root: Path = ROOT) -> set[str]:
    """The ``cdlearn`` modules ``path`` imports, at module level or inside functions."""
    name, is_package = _module_name(path, root)
    package = name.split(".") if is_package else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "cdlearn")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target == "cdlearn":
                # ``from . import paths`` imports a module; ``from . import __version__`` a name
                found.update(f"cdlearn.{a.name}" if a.name in LAYERS else target
                             for a in node.names)
            elif target.split(".")[0] == "cdlearn":
                found.add(target)
    return found


def _modules():
    return sorted(ROOT.rglob("*.py"))


def test_every_module_has_a_layer():
    for path in _modules():
        _layer(_module_name(path)[0])


def test_no_module_imports_a_later_layer():
    offenders = []
    for path in _modules():
        name, _ = _module_name(path)
        if name == "cdlearn":
            continue
        own = _layer(name)
        offenders += [f"{name} (layer {own}) imports {dep} (layer {_layer(dep)})"
                      for dep in sorted(_imports(path))
                      if dep != "cdlearn" and _layer(dep) > own]
    assert offenders == []


def test_public_solve_routes_upward_without_a_cycle():
    # api (layer 6) runs one problem; cdlearn.solve is the layer-7 router
    api_imports = _imports(ROOT / "api.py")
    assert not [m for m in api_imports if _layer(m) >= 7]
    assert cdlearn.solve.__module__ == "cdlearn.multiclass"
    assert "cdlearn.api" in _imports(ROOT / "multiclass.py")


def test_the_checker_sees_lazy_and_relative_imports(tmp_path):
    # the old cycle: a function-level ``from .multiclass import ...`` inside api
    fake = tmp_path / "cdlearn" / "api.py"
    fake.parent.mkdir()
    fake.write_text((ROOT / "api.py").read_text()
                    + "\n\ndef _f():\n    from .multiclass import solve_ovr\n"
                    "    from . import paths\n    from .estimators import _base\n")
    found = _imports(fake, fake.parent)
    assert {"cdlearn.multiclass", "cdlearn.paths", "cdlearn.estimators"} <= found
    assert "cdlearn.data" in found and max(map(_layer, found)) == 8
