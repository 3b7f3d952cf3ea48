"""AppTest: the entry point, the navigation and the home page (run through app.py, because
st.page_link only resolves pages registered with st.navigation)."""

from explorer.lessons import LESSONS
from explorer.serve.catalog import PAGES
from harness.apptest import ROOT, assert_no_exception, page_test


def open_app():
    at = page_test("app.py").run()
    assert_no_exception(at)
    return at


def test_entry_point_opens_the_home_page():
    at = open_app()
    assert at.title[0].value == "Attention Explorer"


def test_home_page_notes_link_settings_it_does_not_have():
    at = page_test("app.py", {"T": "64"}).run()
    assert_no_exception(at)
    assert any("“T” is not a setting of this page" in box.value for box in at.info)
    assert not open_app().info, "a plain visit gets no note"


def test_home_takes_present_1_and_turns_presentation_mode_on():
    """`/?present=1` (a lecturer's projected link to the start) is a setting of Home too: no note, the
    sidebar's toggle on; a value it cannot use is named and the mode stays off."""
    at = page_test("app.py", {"present": "1"}).run()
    assert_no_exception(at)
    assert not at.info, [box.value for box in at.info]
    assert at.sidebar.toggle(key="_present_toggle").value is True
    wrong = page_test("app.py", {"present": "maybe"}).run()
    assert_no_exception(wrong)
    assert any("Presentation mode" in box.value and "maybe" in box.value for box in wrong.info)
    assert wrong.sidebar.toggle(key="_present_toggle").value is False


def test_home_links_to_every_lesson():
    at = open_app()
    linked = " ".join(el.proto.page for el in at.get("page_link"))
    for lesson in LESSONS:
        assert lesson.url_path in linked, f"home page does not link to {lesson.title}"


def test_every_catalogued_page_runs_through_the_navigation():
    at = open_app()
    for page in PAGES:
        at.switch_page(str(ROOT / page.path)).run()
        assert_no_exception(at)
        expected = "Attention Explorer" if page.path.endswith("home.py") else page.title
        assert at.title[0].value == expected


def test_page_scripts_are_not_in_a_folder_named_pages():
    """A pages/ folder beside app.py would put Streamlit in legacy multipage mode on deep links."""
    assert not (ROOT / "pages").exists()
