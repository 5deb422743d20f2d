"""Value differences: key-level for JSON data, text diffs for strings."""

from __future__ import annotations

from hypothesis import given, strategies as st

from flow_xray.analysis.diff.values import MAX_CHANGES, diff_values, text_diff


def test_equal_values_have_no_diff() -> None:
    """Equal data is None; ``1`` and ``1.0`` are the same number."""
    assert diff_values({"a": [1, {"b": 2}]}, {"a": [1.0, {"b": 2}]}) is None


def test_booleans_are_not_numbers() -> None:
    """``True`` and ``1`` are equal in Python but not as recorded JSON: a change."""
    changes = diff_values({"flag": True}, {"flag": 1})
    assert changes is not None
    assert [(c.path, c.change) for c in changes.changes] == [("flag", "changed")]


def test_nested_keys_are_located_by_path() -> None:
    """Changes deep inside are reported where they are; odd keys are quoted."""
    before = {"request": {"params": {"top k": 3, "query": "tea"}}, "gone": 1}
    after = {"request": {"params": {"top k": 5, "query": "tea"}}, "new": 2}
    changes = diff_values(before, after)
    assert changes is not None
    assert [(c.path, c.change, c.before, c.after) for c in changes.changes] == [
        ('request.params["top k"]', "changed", 3, 5),
        ("gone", "removed", 1, None),
        ("new", "added", None, 2),
    ]


def test_string_changes_carry_a_text_diff() -> None:
    """A changed string inside JSON gets a word-level diff."""
    changes = diff_values({"answer": "it is 21 C"}, {"answer": "it is 24 C"})
    assert changes is not None
    assert changes.changes[0].text == (
        ("equal", "it is "),
        ("delete", "21"),
        ("insert", "24"),
        ("equal", " C"),
    )


def test_multiline_text_is_diffed_by_line() -> None:
    """Text with newlines is compared line by line."""
    ops = text_diff("a\nb\nc\n", "a\nB\nc\n")
    assert ops == (("equal", "a\n"), ("delete", "b\n"), ("insert", "B\n"), ("equal", "c\n"))


def test_long_change_lists_are_capped() -> None:
    """At most MAX_CHANGES changes are listed; the rest are counted."""
    changes = diff_values({str(i): i for i in range(300)}, {str(i): -i - 1 for i in range(300)})
    assert changes is not None
    assert (len(changes.changes), changes.more) == (MAX_CHANGES, 300 - MAX_CHANGES)


def test_deep_values_do_not_recurse() -> None:
    """A value nested 5,000 levels deep is compared without recursion."""
    a: object = "x"
    b: object = "y"
    for _ in range(5000):
        a, b = {"k": a}, {"k": b}
    changes = diff_values(a, b)
    assert changes is not None and changes.changes[0].path.count("k") == 5000


@given(st.text(), st.text())
def test_text_diff_rebuilds_both_sides(before: str, after: str) -> None:
    """Equal + deleted pieces give the old text; equal + inserted ones give the new."""
    ops = text_diff(before, after)
    assert "".join(t for op, t in ops if op != "insert") == before
    assert "".join(t for op, t in ops if op != "delete") == after
