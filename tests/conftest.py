"""Shared fixtures for the explorer library tests."""

import os

import pytest
import torch

# No background warm-up of the default views in the servers and AppTest runs the tests start
# (app.py): its model loads would be counted against whatever page a test runs meanwhile, and its
# CPU would compete with the test.  tests/unit/test_warm.py tests the warm-up itself.
os.environ.setdefault("EXPLORER_WARM", "0")

# One torch thread for the whole run, as in the app (app.py, explorer/serve/startup.py): a MiniLM
# cosine differs in its 7th digit between one thread and two, so a figure an AppTest caches under
# one count and a reference computed under the other would disagree by what ran before them.
torch.set_num_threads(1)


def _scan_installed_components_once() -> None:
    """Every AppTest scans all installed packages for Streamlit components (0.25 s of each AppTest's
    run here, most of a page's test run): the packages do not change while the tests run, so the
    tests scan once.  Test speed only; on a Streamlit without this scanner nothing changes."""
    import functools

    try:
        from streamlit.components.v2 import manifest_scanner
    except ImportError:
        return
    scan = getattr(manifest_scanner, "scan_component_manifests", None)
    if scan is not None and not hasattr(scan, "cache_info"):
        manifest_scanner.scan_component_manifests = functools.lru_cache(maxsize=1)(scan)


_scan_installed_components_once()


def _load_torch_mha(torch_mha: torch.nn.MultiheadAttention, ours) -> torch.nn.MultiheadAttention:
    """Copy an explorer MultiHeadAttention's weights into a torch.nn.MultiheadAttention."""
    with torch.no_grad():
        torch_mha.in_proj_weight.copy_(torch.cat([ours.q_proj.weight, ours.k_proj.weight, ours.v_proj.weight]))
        torch_mha.in_proj_bias.copy_(torch.cat([ours.q_proj.bias, ours.k_proj.bias, ours.v_proj.bias]))
        torch_mha.out_proj.weight.copy_(ours.out_proj.weight)
        torch_mha.out_proj.bias.copy_(ours.out_proj.bias)
    return torch_mha


@pytest.fixture
def load_torch_mha():
    """Function (torch_mha, explorer_mha) -> torch_mha carrying explorer_mha's weights."""
    return _load_torch_mha
