"""Merge JUnit XML reports into one (scripts/test.sh: the suite's two phases into the report asked for).

    python scripts/merge_junit.py OUT IN [IN ...]

Every <testsuite> of every report that exists goes under one <testsuites>; a missing or unreadable
report is left out (the phase's pytest failed before writing it: its own exit status says so)."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET


def merge(out: str, reports: list[str]) -> int:
    merged = ET.Element("testsuites")
    for path in reports:
        try:
            root = ET.parse(path).getroot()
        except (OSError, ET.ParseError):
            continue
        merged.extend(root.iter("testsuite") if root.tag == "testsuites" else [root])
    ET.ElementTree(merged).write(out, encoding="utf-8", xml_declaration=True)
    return sum(1 for _ in merged.iter("testcase"))


if __name__ == "__main__":
    print(f"merge_junit: {merge(sys.argv[1], sys.argv[2:])} test cases in {sys.argv[1]}")
