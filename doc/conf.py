"""Sphinx configuration of the exactclf documentation."""

import os

import exactclf

project = "exactclf"
author = "exactclf developers"
copyright = "2026, exactclf developers"
version = release = exactclf.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

autosummary_generate = True
autodoc_default_options: dict = {}
numpydoc_show_class_members = False
numpydoc_validation_checks: set[str] = set()

# offline builds (CI has no network): cross-references to other projects are left as text
intersphinx_mapping: dict = {}

sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "doc_module": ("exactclf",),
    "backreferences_dir": "generated/backrefs",
    # EXACTCLF_DOC_QUICK=1 lays out the gallery without running the examples
    "plot_gallery": "False" if os.environ.get("EXACTCLF_DOC_QUICK") else "True",
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
}

html_theme = "pydata_sphinx_theme"
html_title = "exactclf"
html_theme_options = {"navigation_with_keys": False}
templates_path = ["_templates"]
exclude_patterns = ["_build"]
