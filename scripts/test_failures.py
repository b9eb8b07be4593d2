#!/usr/bin/env python3
"""Print, after a failed `make test`, what each failed CTest test said.

CTest prints a failed test's output when that test ends, in the middle of
the run; a CI log that keeps only its tail loses it. The Makefile calls this
when ctest fails: it reads BUILD/Testing/Temporary/LastTest.log and prints,
for each failed test, its failure lines (unittest's FAIL:/ERROR: headers,
tracebacks' last lines, assertion messages, sanitizer reports) and its last
lines, bounded, so that the end of the log names the cause.

Usage: scripts/test_failures.py BUILD_DIR
"""
import os
import re
import sys

MAX_LINES = 60  # per failed test
KEY = re.compile(r"^(FAIL|ERROR):|^\w*Error\b|Traceback|^\s+File .*, line|"
                 r"^\s*\w*Error: |runtime error|Sanitizer|^SUMMARY:|^FAIL|"
                 r"^\[ +(ERROR|LINE|FAILED) +\]|^\d+ passed, \d+ failed|^(TIMEOUT|Timeout)")
LOGLINE = re.compile(r"level=(info|warn|debug)|\"level\":")


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build-san"
    path = os.path.join(build, "Testing", "Temporary", "LastTest.log")
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        print("test_failures: %s" % e)
        return 0
    # one block per test: from "N/M Testing: name" to "Test Passed." / "Test Failed."
    blocks = re.split(r"^\d+/\d+ Testing: ", text, flags=re.M)[1:]
    failed = 0
    for b in blocks:
        name = b.split("\n", 1)[0].strip()
        if "Test Passed." in b.rsplit("<end of output>", 1)[-1]:
            continue
        failed += 1
        out = b.split("Output:\n", 1)[-1]
        out = out.split("<end of output>", 1)[0]
        lines = [ln for ln in out.splitlines() if ln.strip() and not ln.startswith("-----")]
        keep = []
        for i, ln in enumerate(lines):
            if KEY.search(ln) and not LOGLINE.search(ln):
                keep.append(ln)
        keep = keep[:MAX_LINES - 10]
        tail = lines[-10:]
        print("==== failed: %s (%d output lines) ====" % (name, len(lines)))
        for ln in keep:
            print("  " + ln[:300])
        print("  -- last lines --")
        for ln in tail:
            print("  " + ln[:300])
    if failed:
        print("==== %d failed test(s); whole output in %s ====" % (failed, path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
