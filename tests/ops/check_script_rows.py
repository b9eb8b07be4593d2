#!/usr/bin/env python3
"""check_script_rows.py - cmake/script_rows.cmake (the build step that folds
the names of scripts.def into the Redis scripts' text) on small scripts of
its own: a '--' inside a string is kept and the comment after it emptied; a
long bracket ([=[ ... ]=], which spans lines) and a table name inside a
string (it would be folded there) stop the step with the file's name; the
names themselves fold to their numbers.

Usage: check_script_rows.py [--cmake CMAKE]  (exit 0: every case passed)
"""
import argparse
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STEP = os.path.join(ROOT, "cmake", "script_rows.cmake")

DEF = """WR_SCRIPT_TABLE(A_T, t)
WR_SCRIPT_ROW(A_T, X, s)
WR_SCRIPT_ROW(A_T, Y, i)
WR_SCRIPT_END(A_T)
"""


def run(cmake, lua):
    """Runs the step on scripts/t.lua = lua: (exit code, output text or
    None, the step's messages)."""
    with tempfile.TemporaryDirectory() as d:
        src, out = os.path.join(d, "src"), os.path.join(d, "out")
        os.makedirs(os.path.join(src, "scripts"))
        os.makedirs(os.path.join(out, "scripts", "rows"))
        with open(os.path.join(d, "t.def"), "w") as f:
            f.write(DEF)
        with open(os.path.join(src, "scripts", "t.lua"), "w") as f:
            f.write(lua)
        p = subprocess.run([cmake, "-DDEF=" + os.path.join(d, "t.def"), "-DSRC=" + src,
                            "-DOUT=" + out, "-DLUA=scripts/t.lua", "-DSCRIPTS=t", "-P", STEP],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        text = None
        path = os.path.join(out, "scripts", "t.lua")
        if p.returncode == 0 and os.path.exists(path):
            with open(path) as f:
                text = f.read()
        return p.returncode, text, p.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cmake", default="cmake")
    cmake = ap.parse_args().cmake
    failed = []

    def check(name, ok, detail):
        print("%s %s" % ("ok  " if ok else "FAIL", name))
        if not ok:
            print("     " + detail.replace("\n", "\n     "))
            failed.append(name)

    # the names fold; comments go, lines kept
    rc, text, msg = run(cmake, "-- head\nlocal a = ARGV[A_T.Y] -- the second\nreturn A_T._N\n")
    check("fold", rc == 0 and text == "\nlocal a = ARGV[2] \nreturn 2\n", repr((rc, text, msg)))

    # a '--' inside strings stays; the comment after them goes
    lua = ("local s = 'a -- b' .. \"c -- d\" -- gone\n"
           "local e = 'it\\'s -- e' -- gone too\n"
           "return s .. e\n")
    rc, text, msg = run(cmake, lua)
    want = ("local s = 'a -- b' .. \"c -- d\" \n"
            "local e = 'it\\'s -- e' \n"
            "return s .. e\n")
    check("a '--' in a string", rc == 0 and text == want, repr((rc, text, msg)))

    # a long comment of level 1: emptied by line, its middle would run
    rc, text, msg = run(cmake, "local x = 1\n--[=[\nx = 2\n--]=]\nreturn x\n")
    check("a long bracket is refused", rc != 0 and "t.lua" in msg and "[=[" in msg,
          repr((rc, text, msg)))

    # a table's name inside a string would be folded there
    rc, text, msg = run(cmake, "return 'bad A_T.X'\n")
    check("a name in a string is refused", rc != 0 and "t.lua" in msg and "in a string" in msg,
          repr((rc, text, msg)))

    if failed:
        print("%d of 4 failed" % len(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
