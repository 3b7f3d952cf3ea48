"""The explorer package: its public names, and what loads without torch (for a fast first page)."""

import subprocess
import sys

import explorer


def test_every_public_name_resolves():
    for name in explorer.__all__:
        assert getattr(explorer, name) is not None, name
    assert set(explorer.__all__) <= set(dir(explorer))


def test_the_catalog_and_the_ui_helpers_load_without_torch():
    """app.py and the home page use only these, so a fresh server shows the home page without
    waiting for torch's import (app.py then imports it in the background)."""
    code = "import sys, explorer.serve.catalog, explorer.kit.controls; print('torch' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "False", result.stderr
