#!/usr/bin/env python3
"""check_version.py - the release number is one fact (issue 37).

src/base/version.h's WR_VERSION (as `waitroomd --version` prints it; the
`waitroom_build_info` metric prints the same macro and is not read here),
the Debian package (debian/changelog's first entry) and docs/API.md's
"Contract version implemented" line must name the same MAJOR.MINOR.PATCH:
the contract version the server implements (shared/API.md, Clarifications
1.3).

    python3 tests/ops/check_version.py [--waitroomd build/waitroomd]

Prints one line per check and "N passed, N failed"; exit 1 on a mismatch.
"""
import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from checklib import check, summary  # noqa: E402


def read(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return f.read()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--waitroomd")
    a = ap.parse_args()
    m = re.search(r'#define WR_VERSION "(\d+\.\d+\.\d+)"', read("src/base/version.h"))
    header = m.group(1) if m else None
    m = re.match(r"waitroom \(([^)]+)\)", read("debian/changelog"))
    deb = m.group(1) if m else None
    m = re.search(r"Contract version implemented: (\d+\.\d+\.\d+)", read("docs/API.md"))
    contract = m.group(1) if m else None
    check("version.h defines WR_VERSION", header is not None)
    check("debian/changelog's first entry = WR_VERSION (%s, %s)" % (deb, header), deb == header)
    check("docs/API.md's contract version = WR_VERSION (%s, %s)" % (contract, header),
          contract == header)
    # the contract's newest fully implemented "Version 1.N additions": a
    # 1.1.0 server that already answers 1.2's routes would name the wrong one
    if header:
        major_minor = ".".join(header.split(".")[:2])
        check("docs/API.md has the sections of contract %s" % major_minor,
              ("(%s)" % major_minor) in read("docs/API.md") or major_minor == "1.0")
    if a.waitroomd:
        out = subprocess.run([a.waitroomd, "--version"], capture_output=True, text=True).stdout
        check("waitroomd --version prints 'waitroomd %s' (%r)" % (header, out.strip()),
              out == "waitroomd %s\n" % header)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
