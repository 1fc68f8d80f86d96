"""The language server spec that jupyter-lsp (the server half of jupyterlab-lsp) finds through
the `jupyter_lsp_spec_v1` entry point, so that JupyterLab starts `loopfix lsp` for Python
notebooks and files.

jupyter-lsp calls the entry point with its `LanguageServerManager` and takes a dict of specs
keyed by server id (the id names the websocket, `/lsp/ws/loopfix`). `argv` runs this very
interpreter, so the server is the loopfix installed beside Jupyter. JupyterLab sends a notebook
as one Python text (its code cells joined, with blank lines between them and IPython magics
rewritten as calls) under the `.virtual_documents` folder of the server root, and maps the
diagnostics' positions back to cells itself; the server analyses that text from memory, so
the spec says it needs no copy on disk (`requires_documents_on_disk`). For everything that
depends on where a file is (the modules it imports from its folder, the `pyproject.toml` that
applies, `per-file-ignores`), a virtual document's path is its notebook's (`real_path`): the
spec passes the virtual documents folder and the server root in the environment; without them
(the pylsp plugin under jupyter-lsp, a server set up by hand) the `.virtual_documents` folder
jupyter-lsp uses by default is recognised by name.

Keys: jupyter-lsp's `schema/schema.json` (`language-server-spec`: `argv`, `languages` and
`version` required).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

SERVER_ID = "loopfix"
VIRTUAL_DIR = ".virtual_documents"  # jupyter-lsp's default `virtual_documents_dir`
# where jupyter-lsp puts the virtual documents, and the server root they mirror
VIRTUAL_ENV, ROOT_ENV = "LOOPFIX_JUPYTER_VIRTUAL_DOCUMENTS", "LOOPFIX_JUPYTER_ROOT"


def spec(manager: object = None) -> dict[str, dict]:
    """`{server id: spec}` for jupyter-lsp, given its `LanguageServerManager` (its
    `virtual_documents_dir` is relative to the server root unless absolute, as jupyter-lsp's
    server extension reads it)."""
    env = {"PYTHONUNBUFFERED": "1"}
    contents = getattr(getattr(manager, "parent", None), "contents_manager", None)
    root = getattr(contents, "root_dir", None)
    folder = getattr(manager, "virtual_documents_dir", None)
    if isinstance(root, str) and isinstance(folder, str) and folder:
        root = Path(root).expanduser()  # resolved, as in the URIs jupyter-lsp makes
        env.update({ROOT_ENV: str(root.resolve()), VIRTUAL_ENV: str((root / folder).resolve())})
    return {
        SERVER_ID: {
            "version": 2,
            "argv": [sys.executable, "-m", "loopfix", "lsp"],
            "languages": ["python"],
            "mime_types": ["text/python", "text/x-ipython", "text/x-python"],
            "display_name": "loopfix",
            "requires_documents_on_disk": False,
            "install": {"pip": "pip install 'loopfix[jupyter]'"},
            "urls": {
                "home": "https://github.com/loopfix/loopfix",
                "issues": "https://github.com/loopfix/loopfix/issues",
            },
            "env": env,
        }
    }


def real_path(path: Path) -> Path:
    """The file a jupyter-lsp virtual document stands for (`<root>/.virtual_documents/sub/
    nb.ipynb` is `<root>/sub/nb.ipynb`); any other path as it is."""
    root, folder = os.environ.get(ROOT_ENV), os.environ.get(VIRTUAL_ENV)
    if root and folder:
        try:
            return Path(root) / path.relative_to(folder)
        except ValueError:
            return path
    parts = path.parts
    if VIRTUAL_DIR in parts[:-1]:
        at = len(parts) - 1 - parts[::-1].index(VIRTUAL_DIR)
        return Path(*parts[:at], *parts[at + 1 :])
    return path
