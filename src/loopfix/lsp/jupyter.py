"""The language server spec that jupyter-lsp (the server half of jupyterlab-lsp) finds through
the `jupyter_lsp_spec_v1` entry point, so that JupyterLab starts `loopfix lsp` for Python
notebooks and files.

jupyter-lsp calls the entry point with its `LanguageServerManager` and takes a dict of specs
keyed by server id (the id names the websocket, `/lsp/ws/loopfix`). `argv` runs this very
interpreter, so the server is the loopfix installed beside Jupyter. JupyterLab sends a notebook
as one Python text (its code cells joined, with blank lines between them and IPython magics
rewritten as calls) under the `.virtual_documents` folder of the server root, and maps the
diagnostics' positions back to cells itself; the server analyses that text from memory, so
the spec says it needs no copy on disk (`requires_documents_on_disk`).

Keys: jupyter-lsp's `schema/schema.json` (`language-server-spec`: `argv`, `languages` and
`version` required).
"""

from __future__ import annotations

import sys

SERVER_ID = "loopfix"


def spec(manager: object = None) -> dict[str, dict]:
    """`{server id: spec}` for jupyter-lsp; `manager` (jupyter-lsp's) is not needed."""
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
            "env": {"PYTHONUNBUFFERED": "1"},
        }
    }
