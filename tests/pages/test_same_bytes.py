"""Same numbers always, down to the bytes: a table drawn twice is sent the same both times.  pandas
gives each Styler a random uuid, which Streamlit sends with the table: a styled table without a fixed
one differed on every run (the server burst test saw positions' lecture table "change")."""

import pytest

from harness.apptest import run_page


@pytest.mark.parametrize("page", [f"explorer/lessons/{n}/{n}.py" for n in ("positions", "decoder", "encoders")])
def test_every_table_is_sent_the_same_on_every_run(page):
    first, second = run_page(page), run_page(page)
    assert len(first.table) >= 1, "the page draws a table"
    assert [t.proto.SerializeToString() for t in first.table] == [t.proto.SerializeToString() for t in second.table]
