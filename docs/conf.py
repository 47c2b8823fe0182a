"""Sphinx configuration of cdlearn's documentation (``make docs``).

Offline by design: the build reads nothing from the network. Links to
scikit-learn, numpy and scipy are explicit URLs (``extlinks`` roles
``:sklearn:``, ``:numpy:``, ``:scipy:``); intersphinx, which downloads the
projects' inventories, is enabled only with ``CDLEARN_DOCS_ONLINE=1``.

``CDLEARN_DOCS_QUICK=1`` runs only the gallery examples listed in
``QUICK_EXAMPLES`` (seconds each, generated or scikit-learn data); the others
are shown with their code but not run. ``CDLEARN_DOCS_ROOT`` points at the
repository when this directory is built from a copy (tests/test_docs.py).
"""

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = Path(os.environ.get("CDLEARN_DOCS_ROOT", HERE.parent)).resolve()
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(HERE))

from _ext import results  # noqa: E402

import cdlearn  # noqa: E402

QUICK = os.environ.get("CDLEARN_DOCS_QUICK", "") not in ("", "0")
ONLINE = os.environ.get("CDLEARN_DOCS_ONLINE", "") not in ("", "0")

project = "cdlearn"
author = "cdlearn developers"
copyright = "2026, cdlearn developers"
release = version = cdlearn.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.extlinks",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
    "matplotlib.sphinxext.plot_directive",
]
if ONLINE:
    extensions.append("sphinx.ext.intersphinx")
    intersphinx_mapping = {
        "python": ("https://docs.python.org/3", None),
        "numpy": ("https://numpy.org/doc/stable", None),
        "scipy": ("https://docs.scipy.org/doc/scipy", None),
        "sklearn": ("https://scikit-learn.org/stable", None),
    }

extlinks = {
    "sklearn": ("https://scikit-learn.org/stable/modules/generated/sklearn.%s.html", "sklearn.%s"),
    "numpy": ("https://numpy.org/doc/stable/reference/generated/numpy.%s.html", "numpy.%s"),
    "scipy": ("https://docs.scipy.org/doc/scipy/reference/generated/scipy.%s.html", "scipy.%s"),
}

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "generated/_toc_*", "**.ipynb_checkpoints", "auto_examples/*.py",
                    "auto_examples/*.ipynb", "auto_examples/*.zip"]
templates_path = ["_templates"]

myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3
# the result files are written as stand-alone notes: their heading levels jump
suppress_warnings = ["myst.header"]

autosummary_generate = True
autodoc_default_options = {"members": True, "inherited-members": False}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks = set()

QUICK_EXAMPLES = ["plot_certificate", "plot_group_lasso", "plot_ascd_active_set"]
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": ("/(" + "|".join(QUICK_EXAMPLES) + r")\.py$") if QUICK else r"/plot_",
    "download_all_examples": False,
    "backreferences_dir": None,
    "abort_on_example_error": True,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "ignore_pattern": r"(__init__|_data)\.py",
}

plot_include_source = True
plot_html_show_source_link = False
plot_formats = [("png", 100)]

html_theme = "pydata_sphinx_theme"
html_title = f"cdlearn {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_prev_next": True,
    "secondary_sidebar_items": ["page-toc"],
}
html_static_path = []
html_show_sourcelink = False


def _skip_sklearn_members(app, what, name, obj, skip, options):
    # scikit-learn's metadata-routing setters are generated per class; their
    # docstrings point into scikit-learn's own docs (not built here)
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", _skip_sklearn_members)
    app.connect("builder-inited", lambda app: results.write_pages(ROOT, Path(app.srcdir)))
