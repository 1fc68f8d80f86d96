"""The editor consumers: a language server (`server.py`) and a python-lsp-server plugin
(`plugin.py`), both thin layers over `features.py`, which turns the same planned fixes the
command line writes into diagnostics and code actions."""
