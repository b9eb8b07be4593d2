"""checklib.py - the "ok NAME" / "FAIL NAME" lines and the closing
"N passed, N failed" of the check scripts (tests/install/*.py,
tests/ops/*.py), which CTest runs one per test.

    sys.path.insert(0, <tests>); from checklib import check, summary
    check("what is checked", ok, "detail printed on failure")   # returns ok
    sys.exit(summary())   # prints the counts; 1 on any failure or none passed
"""
passed = 0
failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok   {name}", flush=True)
    else:
        failed += 1
        print(f"FAIL {name}" + (f"\n     {detail}" if detail else ""), flush=True)
    return ok


def summary():
    print(f"{passed} passed, {failed} failed", flush=True)
    return 1 if failed or not passed else 0
