#!/usr/bin/env python3
"""check_readme_deps.py - the README's lists of what the two commands install
are scripts/deps.sh's lists (issue 37: "the list of what it installs" had
drifted).

README.md holds two marked lists, <!-- deps:build --> (what `make run`
installs) and <!-- deps:test --> (what `make test` adds); scripts/deps.sh
holds the packages in its `pkgs=(...)` and `pkgs+=(...)` arrays. They must
name the same packages, in any order.

Prints one line per check and "N passed, N failed"; exit 1 on a mismatch.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from checklib import check, summary  # noqa: E402


def deps_lists():
    text = open(os.path.join(ROOT, "scripts", "deps.sh"), encoding="utf-8").read()
    build = re.search(r"^pkgs=\((.*?)^\)", text, re.S | re.M).group(1)
    test = re.search(r"^  pkgs\+=\((.*?)^  \)", text, re.S | re.M).group(1)

    def words(block):
        out = []
        for line in block.splitlines():
            out += line.split("#", 1)[0].split()
        return out
    return words(build), words(test)


def readme_list(tag):
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    m = re.search(r"<!-- deps:%s -->`([^`]*)`<!-- /deps -->" % tag, text)
    return m.group(1).split() if m else None


def main():
    build, test = deps_lists()
    for tag, want in (("build", build), ("test", test)):
        got = readme_list(tag)
        check("README's deps:%s list = scripts/deps.sh's" % tag,
              got is not None and sorted(got) == sorted(want),
              "README %s, deps.sh %s" % (
                  None if got is None else sorted(set(got) ^ set(want)) or got, sorted(want)))
    return summary()


if __name__ == "__main__":
    sys.exit(main())
