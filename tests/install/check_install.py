#!/usr/bin/env python3
"""check_install.py - what `make install` lays down, checked (CTest label install).

    check_install.py install_tree --build BUILD --waitroomd BIN
    check_install.py systemd_unit --build BUILD --waitroomd BIN
    check_install.py man_page     --build BUILD --waitroomd BIN
    check_install.py uninstall    --build BUILD --waitroomd BIN

install_tree  `cmake --install BUILD` (what `make install` runs; the Makefile's
              recipe is checked with `make -n`) into a DESTDIR, at the default
              prefix /usr/local and at another one: lists the installed files
              and checks them against the expected set; the binary runs; the
              unit's ExecStart names the installed binary.
systemd_unit  installs at a temporary prefix (so ExecStart's binary exists) and
              runs `systemd-analyze verify` on the installed unit, with MANPATH
              at the installed man pages (so Documentation=man:waitroomd(8)
              resolves), then `systemd-analyze security --offline` with a
              threshold; checks the directives the deployment relies on.
man_page      `mandoc -T lint -W warning` on docs/waitroomd.8 (and on
              docs/waitroom-invite.1, whose flags must be its --help's); every flag of
              `waitroomd --help` has an entry in OPTIONS and every entry is a
              flag of --help. --version is documented ahead of its code: until
              `waitroomd --version` works that one entry is skipped (and said
              so); once it works, its output must be "waitroomd X.Y.Z".
uninstall     `make uninstall` (scripts/uninstall.sh) honours DESTDIR and PREFIX:
              a "real" install at a temporary PREFIX and a staged one of the
              same PREFIX under a DESTDIR; uninstalling the staged one leaves
              no file under the DESTDIR and the real one untouched; then
              uninstalling the real one leaves no file and no share/doc/waitroom
              there; install_manifest.txt is left as it was.

Prints "N passed, N failed" and exits 1 on any failure.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from checklib import check, summary  # noqa: E402
UNIT_SRC = os.path.join(ROOT, "examples", "systemd", "waitroomd.service")
MAN_SRC = os.path.join(ROOT, "docs", "waitroomd.8")
INVITE_MAN_SRC = os.path.join(ROOT, "docs", "waitroom-invite.1")
VERIFY_MAN_SRC = os.path.join(ROOT, "docs", "waitroom-verify.1")
SECURITY_THRESHOLD = 40  # systemd-analyze security --threshold (tenths: the unit scores 3.4 = 34 on Debian 12)

# Relative to the prefix.
EXPECTED = [
    "bin/waitroom-invite",
    "bin/waitroom-verify",
    "bin/waitroomd",
    "lib/systemd/system/waitroomd.service",
    "share/doc/waitroom/API.md",
    "share/doc/waitroom/INTEGRATION.md",
    "share/doc/waitroom/README.md",
    "share/doc/waitroom/examples/grafana/waitroom.json",
    "share/doc/waitroom/examples/nginx/README.md",
    "share/doc/waitroom/examples/nginx/waitroom.conf",
    "share/doc/waitroom/examples/nginx/waitroom.ini",
    "share/doc/waitroom/examples/node/package-lock.json",
    "share/doc/waitroom/examples/node/package.json",
    "share/doc/waitroom/examples/node/shop.js",
    "share/doc/waitroom/examples/node/waitroom.js",
    "share/doc/waitroom/examples/page/README.md",
    "share/doc/waitroom/examples/page/i18n.json",
    "share/doc/waitroom/examples/page/logo.svg",
    "share/doc/waitroom/examples/page/queue.html",
    "share/doc/waitroom/examples/page/shop.css",
    "share/doc/waitroom/examples/prometheus/waitroom.rules.test.yml",
    "share/doc/waitroom/examples/prometheus/waitroom.rules.yml",
    "share/doc/waitroom/examples/python/shop.py",
    "share/doc/waitroom/examples/python/waitroom_gate.py",
    "share/doc/waitroom/examples/shell/waitroom.sh",
    "share/doc/waitroom/examples/systemd/waitroom.env",
    "share/doc/waitroom/examples/systemd/waitroomd.service",
    "share/doc/waitroom/examples/waitroom.ini",
    "share/man/man1/waitroom-invite.1",
    "share/man/man1/waitroom-verify.1",
    "share/man/man8/waitroomd.8",
]



def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, **kw)


def cmake_install(build, prefix, destdir=None):
    env = dict(os.environ)
    env.pop("DESTDIR", None)
    if destdir:
        env["DESTDIR"] = destdir
    r = run(["cmake", "--install", build, "--prefix", prefix], env=env)
    if r.returncode != 0:
        raise SystemExit(f"cmake --install {build} --prefix {prefix} failed:\n{r.stdout}{r.stderr}")
    return r.stdout


def listing(top):
    out = []
    for d, _, files in os.walk(top):
        for f in files:
            out.append(os.path.relpath(os.path.join(d, f), top))
    return sorted(out)


def unit_lines(text):
    """The unit's directives as (key, value) pairs, comments dropped."""
    pairs = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#;[":
            continue
        k, _, v = line.partition("=")
        pairs.append((k.strip(), v.strip()))
    return pairs


def install_tree(a):
    with tempfile.TemporaryDirectory(prefix="wr-install-") as tmp:
        # The Makefile's install target runs this very command.
        env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
        r = run(["make", "-C", ROOT, "-n", "install", f"BUILD={a.build}", f"DESTDIR={tmp}/x"], env=env)
        want = f'DESTDIR="{tmp}/x" cmake --install {a.build} --prefix "/usr/local"'
        check("make -n install runs cmake --install with PREFIX=/usr/local and DESTDIR",
              r.returncode == 0 and want in r.stdout, r.stdout + r.stderr)

        dest = os.path.join(tmp, "stage")
        log = cmake_install(a.build, "/usr/local", dest)
        files = listing(dest)
        print("installed (DESTDIR=stage, PREFIX=/usr/local):")
        for f in files:
            print("     " + f)
        check("the installed files are exactly the expected ones",
              files == ["usr/local/" + f for f in EXPECTED],
              f"missing {sorted(set('usr/local/' + f for f in EXPECTED) - set(files))}, "
              f"unexpected {sorted(set(files) - set('usr/local/' + f for f in EXPECTED))}")
        check("cmake --install reports every file it installs",
              all(os.path.join(dest, f) in log for f in files), log)
        manifest = os.path.join(a.build, "install_manifest.txt")
        mf = open(manifest).read().split("\n") if os.path.exists(manifest) else []
        check("install_manifest.txt lists the unit (for uninstalling)",
              os.path.join(dest, "usr/local/lib/systemd/system/waitroomd.service") in mf, manifest)

        binary = os.path.join(dest, "usr/local/bin/waitroomd")
        check("the binary is executable", os.access(binary, os.X_OK))
        h = run([binary, "--help"])
        check("the installed binary runs (--help exits 0)", h.returncode == 0 and "usage: waitroomd" in h.stdout,
              h.stdout + h.stderr)
        with open(os.path.join(dest, "usr/local/share/man/man8/waitroomd.8")) as f1, open(MAN_SRC) as f2:
            check("the man page is docs/waitroomd.8", f1.read() == f2.read())

        src = open(UNIT_SRC).read()
        inst = open(os.path.join(dest, "usr/local/lib/systemd/system/waitroomd.service")).read()
        check("the installed unit is examples/systemd/waitroomd.service (default prefix)", inst == src,
              "they differ")

        other = os.path.join(tmp, "other")
        cmake_install(a.build, "/opt/wr", other)
        inst = open(os.path.join(other, "opt/wr/lib/systemd/system/waitroomd.service")).read()
        diff = [(x, y) for x, y in zip(src.splitlines(), inst.splitlines()) if x != y]
        check("with PREFIX=/opt/wr only ExecStart changes, to the installed binary",
              len(src.splitlines()) == len(inst.splitlines()) and len(diff) == 1
              and diff[0][1].startswith("ExecStart=/opt/wr/bin/waitroomd --config "),
              repr(diff))
        check("PREFIX=/opt/wr installs the same files there",
              listing(other) == ["opt/wr/" + f for f in EXPECTED], repr(listing(other)))


def systemd_unit(a):
    sa = shutil.which("systemd-analyze")
    if not sa:
        check("systemd-analyze is installed (Debian package systemd; scripts/deps.sh)", False)
        return
    with tempfile.TemporaryDirectory(prefix="wr-unit-") as tmp:
        prefix = os.path.join(tmp, "prefix")
        cmake_install(a.build, prefix)
        unit = os.path.join(prefix, "lib/systemd/system/waitroomd.service")
        env = dict(os.environ, MANPATH=os.path.join(prefix, "share/man"))
        r = run([sa, "verify", unit], env=env)
        check("systemd-analyze verify (ExecStart's binary and man:waitroomd(8) found)",
              r.returncode == 0 and not r.stderr.strip(), r.stdout + r.stderr)
        r = run([sa, "verify", unit], env=dict(os.environ, MANPATH=os.path.join(tmp, "none")))
        check("... and verify does look for the man page (it fails without it)",
              r.returncode != 0 and "waitroomd(8)" in r.stderr, r.stdout + r.stderr)
        r = run([sa, "security", "--offline=true", f"--threshold={SECURITY_THRESHOLD}", unit])
        m = re.search(r"Overall exposure level for \S+: ([0-9.]+)", r.stdout + r.stderr)
        check(f"systemd-analyze security: exposure at most {SECURITY_THRESHOLD / 10}",
              r.returncode == 0 and m is not None, (m.group(0) if m else (r.stdout + r.stderr)[-2000:]))
        if m:
            print(f"     exposure {m.group(1)}")

        d = unit_lines(open(unit).read())
        keys = {}
        for k, v in d:
            keys.setdefault(k, []).append(v)
        exec_start = keys.get("ExecStart", [""])[0]
        check("ExecStart: the installed binary, --config /etc/waitroom/waitroom.ini, --data-dir /var/lib/waitroom",
              exec_start.startswith(os.path.join(prefix, "bin/waitroomd") + " ")
              and "--config /etc/waitroom/waitroom.ini" in exec_start
              and "--data-dir /var/lib/waitroom" in exec_start, exec_start)
        want = {
            "Type": "notify", "NotifyAccess": "main", "ExecReload": "/bin/kill -HUP $MAINPID", "NoNewPrivileges": "yes",
            "ProtectSystem": "strict", "ProtectHome": "yes", "PrivateTmp": "yes", "DynamicUser": "yes",
            "StateDirectory": "waitroom", "LimitNOFILE": "65536", "Restart": "on-failure",
            "EnvironmentFile": "-/etc/waitroom/waitroom.env", "WantedBy": "multi-user.target",
        }
        for k, v in want.items():
            check(f"{k}={v}", keys.get(k) == [v], repr(keys.get(k)))
        # Until waitroomd answers SIGHUP by reloading (1.1), `systemctl reload`
        # stops it; say so rather than fail (see the unit's header).
        v = run([a.waitroomd, "--version"])
        if v.returncode != 0:
            print("     note: waitroomd --version fails, so this is a waitroomd before 1.1: "
                  "ExecReload (SIGHUP) stops it instead of reloading")


def make_env():
    return {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "DESTDIR")}


def make_uninstall(a, prefix, destdir=None):
    cmd = ["make", "-s", "-C", ROOT, "uninstall", f"BUILD={a.build}", f"PREFIX={prefix}"]
    if destdir:
        cmd.append(f"DESTDIR={destdir}")
    return run(cmd, env=make_env())


def uninstall(a):
    with tempfile.TemporaryDirectory(prefix="wr-uninstall-") as tmp:
        real = os.path.join(tmp, "real")          # stands for /usr/local
        stage = os.path.join(tmp, "stage")        # a DESTDIR
        cmake_install(a.build, real)
        cmake_install(a.build, real, stage)
        manifest = os.path.join(a.build, "install_manifest.txt")
        before = open(manifest).read()
        want = sorted("real/" + f for f in EXPECTED)
        check("installed at PREFIX (the real one) and staged under DESTDIR",
              listing(real) == [f[len("real/"):] for f in want]
              and listing(stage) == sorted(os.path.relpath(real, "/") + "/" + f for f in EXPECTED),
              repr(listing(stage)))
        r = make_uninstall(a, real, stage)
        check("make uninstall DESTDIR=stage PREFIX=real exits 0", r.returncode == 0, r.stdout + r.stderr)
        check("... leaves no file under DESTDIR", listing(stage) == [], repr(listing(stage)))
        check("... and the real install untouched", listing(real) == [f[len("real/"):] for f in want],
              repr(listing(real)))
        check("... and install_manifest.txt as it was", open(manifest).read() == before)
        r = make_uninstall(a, real)
        check("make uninstall PREFIX=real exits 0", r.returncode == 0, r.stdout + r.stderr)
        check("... leaves no file there", listing(real) == [], repr(listing(real)))
        check("... nor share/doc/waitroom", not os.path.exists(os.path.join(real, "share/doc/waitroom")))
        check("... and keeps the shared directories (bin)", os.path.isdir(os.path.join(real, "bin")))
        r = make_uninstall(a, real)
        check("a second make uninstall is harmless (exit 0)", r.returncode == 0, r.stdout + r.stderr)


def man_page(a):
    mandoc = shutil.which("mandoc")
    if not mandoc:
        check("mandoc is installed (Debian package mandoc; scripts/deps.sh)", False)
        return
    r = run([mandoc, "-T", "lint", "-W", "warning", MAN_SRC])
    check("mandoc -T lint -W warning: no warning", r.returncode == 0 and not (r.stdout + r.stderr).strip(),
          r.stdout + r.stderr)
    r = run([mandoc, "-T", "ascii", MAN_SRC])
    check("mandoc renders it", r.returncode == 0 and "waitroomd" in r.stdout, r.stderr)

    documented = set(re.findall(r"^\.It Fl -([a-z][a-z0-9-]*)", open(MAN_SRC).read(), re.M))
    h = run([a.waitroomd, "--help"])
    helped = set(re.findall(r"^  --([a-z][a-z0-9-]*)", h.stdout, re.M))
    check("waitroomd --help lists flags", h.returncode == 0 and len(helped) > 20, h.stdout + h.stderr)
    v = run([a.waitroomd, "--version"])
    has_version = v.returncode == 0
    if has_version:
        check("waitroomd --version prints 'waitroomd X.Y.Z'",
              re.fullmatch(r"waitroomd \d+\.\d+\.\d+\n?", v.stdout) is not None, repr(v.stdout + v.stderr))
    else:
        # TODO(--version): drop this branch once every waitroomd has the flag.
        print("     SKIP: waitroomd --version is not implemented yet; its man page entry is not checked")
        documented.discard("version")
    check("every flag of --help has an entry in the man page", not (helped - documented),
          f"undocumented: {sorted(helped - documented)} (add them to docs/waitroomd.8, OPTIONS)")
    check("every entry of the man page is a flag of --help", not (documented - helped),
          f"not in --help: {sorted(documented - helped)}")
    # Each entry names its [server] key: the flag with "_" for "-" (config.c's table).
    src = open(MAN_SRC).read()
    entries = dict(re.findall(r"^\.It Fl -([a-z][a-z0-9-]*)[^\n]*\n(.*?)(?=^\.It |^\.El)", src, re.M | re.S))
    nokey = [f for f in sorted(helped - {"help", "config", "version"})
             if not re.search(r"^\.Pq Cm " + f.replace("-", "_") + r"\b", entries.get(f, ""), re.M)]
    check("each option's entry names its INI key", not nokey, f"no '.Pq Cm KEY' in the entries of {nokey}")
    # waitroom-invite(1), waitroom-verify(1): lint-clean, and their flags are
    # the ones of their usage texts.
    for tool, man in (("waitroom-invite", INVITE_MAN_SRC), ("waitroom-verify", VERIFY_MAN_SRC)):
        tool_src = open(man).read()
        r = run([mandoc, "-T", "lint", "-W", "warning", man])
        check(f"{tool}.1: mandoc -T lint -W warning: no warning",
              r.returncode == 0 and not (r.stdout + r.stderr).strip(), r.stdout + r.stderr)
        h = run([os.path.join(os.path.dirname(a.waitroomd), tool), "--help"])
        helped = set(re.findall(r"--([a-z][a-z0-9-]*)", h.stdout + h.stderr))
        documented = set(re.findall(r"^\.It Fl -([a-z][a-z0-9-]*)", tool_src, re.M))
        check(f"{tool}.1 documents exactly the flags of {tool} --help",
              helped and documented == helped,
              f"--help {sorted(helped)}, man page {sorted(documented)}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("check", choices=["install_tree", "systemd_unit", "man_page", "uninstall"])
    p.add_argument("--build", required=True)
    p.add_argument("--waitroomd", required=True)
    a = p.parse_args()
    a.build = os.path.abspath(a.build)
    {"install_tree": install_tree, "systemd_unit": systemd_unit, "man_page": man_page,
     "uninstall": uninstall}[a.check](a)
    sys.exit(summary())


if __name__ == "__main__":
    main()
