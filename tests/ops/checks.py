"""checks.py - the one way the tests/ops checkers print their verdicts.

report([(name, ok), ...]) prints "ok   name" or "FAIL name" per check and
the closing "N passed, N failed" line CTest's log readers know, and
returns the exit code (1 when any check failed).
"""


def report(checks):
    failed = 0
    for name, ok in checks:
        print(("ok   " if ok else "FAIL ") + name, flush=True)
        failed += not ok
    print("%d passed, %d failed" % (len(checks) - failed, failed))
    return 1 if failed else 0
