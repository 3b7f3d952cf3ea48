"""What a link may say (explorer.kit.links): the rules take a value only as the app writes it, once."""

import pytest

from explorer.kit.links import Choice, Flag, Number, Text, Unusable, read

LAYERS = Number(1, 24, 1)
GAIN = Number(0.1, 8.0, 0.1)
QUERY = Number(-10.0, 10.0, 0.1)


@pytest.mark.parametrize(("rule", "text", "value"), [
    (LAYERS, "12", 12), (LAYERS, "1", 1), (LAYERS, "24", 24), (LAYERS, "12.0", 12), (LAYERS, "1.2e1", 12),
    (GAIN, "0.3", 0.3), (GAIN, "8", 8.0), (GAIN, "0.30000000000000004", 0.30000000000000004),
    (QUERY, "-0.7", -0.7), (QUERY, "-10", -10.0), (QUERY, "-0", 0.0),
    (Choice([1, 2, 4]), "4", 4), (Choice(["png", "svg"]), "svg", "svg"),
    (Choice([0, 1, 2], lambda n: "Explore" if n == 0 else str(n)), "Explore", 0),
    (Flag(), "true", True), (Flag(), "FALSE", False), (Flag(("1", "true"), ("0", "false")), "1", True),
    (Text(5), "", ""), (Text(5), "a b\x00", "a b\x00"), (Text(5), "12345", "12345"),
])
def test_a_value_written_as_the_app_writes_it_is_taken(rule, text, value):
    got = read([text], rule)
    assert got == pytest.approx(value) if isinstance(value, float) else got == value
    assert type(got) is type(value)


@pytest.mark.parametrize(("rule", "text"), [
    (LAYERS, ""), (LAYERS, " 12"), (LAYERS, "12 "), (LAYERS, "junk"), (LAYERS, "0"), (LAYERS, "25"), (LAYERS, "-1"),
    (LAYERS, "2.5"), (LAYERS, "nan"), (LAYERS, "NaN"), (LAYERS, "inf"), (LAYERS, "-inf"), (LAYERS, "1e309"),
    (LAYERS, "9" * 400), (LAYERS, "１２"), (LAYERS, "٣"), (LAYERS, "1_2"), (LAYERS, "0x10"), (LAYERS, "½"),
    (GAIN, "0.35"), (GAIN, "0"), (QUERY, "-10.05"), (QUERY, "-1e6"),
    (Choice([1, 2, 4]), "3"), (Choice([1, 2, 4]), "04"), (Choice([1, 2, 4]), "4.0"), (Choice(["png", "svg"]), "SVG"),
    (Choice([0, 1, 2], lambda n: "Explore" if n == 0 else str(n)), "0"), (Choice(["a"]), ""),
    (Flag(), ""), (Flag(), "1"), (Flag(), "yes"), (Flag(("1", "true"), ("0", "false")), "2"),
    (Text(5), "123456"), (Text(300), "a" * 10240),
])
def test_anything_else_is_unusable_with_a_reason(rule, text):
    with pytest.raises(Unusable, match=r"^is "):
        read([text], rule)


@pytest.mark.parametrize(("rule", "value"), [(LAYERS, "5"), (Choice(["png", "svg"]), "png"), (Flag(), "true"),
                                             (Text(300), "abc")])
def test_a_parameter_given_twice_is_unusable_even_when_both_values_are(rule, value):
    read([value], rule)
    with pytest.raises(Unusable, match="2 values"):
        read([value, value], rule)
    with pytest.raises(Unusable):
        read([], rule)


STEPS = Choice([0, 1, 2], lambda n: "Explore" if n == 0 else str(n))


@pytest.mark.parametrize(("rule", "value", "text"), [
    (LAYERS, 12, "12"), (GAIN, 1.0, "1"), (GAIN, 0.5, "0.5"), (STEPS, 0, "Explore"), (STEPS, 2, "2"),
    (Flag(), False, "false"), (Flag(("1", "true"), ("0", "false")), True, "1"),
])
def test_text_writes_a_value_back_the_way_the_rule_reads_it(rule, value, text):
    assert rule.text(value) == text
    assert read([text], rule) == value


@pytest.mark.parametrize(("rule", "held", "not_held"), [
    (Number(1, 24, 1), [1, 12, 24, 2.5], [0, 25, True, "12", None]),
    (Number(0.0, 1.0, 0.1), [0.0, 0.3, 1], [-0.1, 1.5, False, "0.3"]),
    (Choice(["mean", 0, 1]), ["mean", 0, 1], ["max", 2, None]),
    (Flag(), [True, False], [1, 0, "true", None]),
    (Text(10), ["", "a long text than ten"], [None, 3, ["a"]]),
])
def test_a_rule_says_which_session_values_its_widget_can_hold(rule, held, not_held):
    """Another page's value under the same key is dropped (explorer.kit.controls) when the rule
    says the widget cannot hold it: a range is the slider's, not its steps; text is any length
    (the box itself cuts it)."""
    assert all(rule.holds(v) for v in held)
    assert not any(rule.holds(v) for v in not_held)
    usable = [text for text in ("1", "0.3", "mean", "0", "true", "abc") if _usable(text, rule)]
    assert usable
    assert all(rule.holds(read([text], rule)) for text in usable)  # what a link gives, the widget holds


def _usable(text: str, rule) -> bool:
    try:
        read([text], rule)
    except Unusable:
        return False
    return True
