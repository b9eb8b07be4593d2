#!/usr/bin/env python3
"""check_deb.py - the Debian package installed into a clean Debian 12 and
removed again (CTest deb_install, after deb_build made the package).

    check_deb.py --deb build/waitroom_VERSION_ARCH.deb [--cache DIR]
    check_deb.py --deb build                    (the one waitroom_*.deb there)

The clean root is a chroot made with mmdebstrap (an alternative to debootstrap
that downloads with apt, in parallel: ~40% faster here; plain debootstrap
when mmdebstrap is missing), --variant=minbase plus the package's run-time
libraries, so dpkg -i needs no network; not `dpkg --root`: dpkg runs
maintainer scripts chrooted into --root, so a bare directory cannot run
postinst (adduser, deb-systemd-helper), and with
--force-script-chrootless they would run on this machine and add the
system user here. Making the root takes minutes (downloads); it is kept as
a tarball in --cache (default ~/.cache/waitroom), keyed by the package's
dependencies, and unpacked afresh for every run (seconds). Needs root (chroot);
as another user it exits 77 (CTest: skipped).

Checked: dpkg -i; every file of the package with its owner and mode; the
binary runs there (--version matches debian/changelog); the system user and
group waitroom; /var/lib/waitroom owned by it, 0700; /etc/waitroom/waitroom.env
created root 0600 with a random admin key; waitroom.ini a conffile; the unit
enabled (multi-user.target.wants), run as User=waitroom, and its
ExecCondition refusing to start without an admin key and allowing it with
one; waitroomd started as the unit would (user waitroom, the conffile, the
data dir) answers /readyz and snapshots into /var/lib/waitroom on SIGTERM;
a reinstall (an upgrade's path) keeps an edited waitroom.env and
waitroom.ini; dpkg -r removes the programs and keeps config, secrets, data
and user; dpkg --purge removes /etc/waitroom, /var/lib/waitroom and the
unit's enablement, and leaves no file the package made except the system
user (kept, as Debian does with system users).
Prints "N passed, N failed" and exits 1 on any failure.
"""
import argparse
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from checklib import check, summary  # noqa: E402
MIRROR = os.environ.get("WR_DEBOOTSTRAP_MIRROR", "http://deb.debian.org/debian")
SUITE = "bookworm"



def run(cmd, timeout=300, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)


def deps_of(deb):
    """The package names of the .deb's Depends (versions and alternatives dropped)."""
    dep = run(["dpkg-deb", "-f", deb, "Depends"]).stdout
    return sorted({re.split(r"[\s(|]", d.strip())[0] for d in dep.split(",") if d.strip()})


def clean_root_tar(cache, deps):
    """A minbase root with deps, as a tarball in cache (made once)."""
    key = hashlib.sha256((SUITE + " " + " ".join(deps)).encode()).hexdigest()[:16]
    tar = os.path.join(cache, f"root-{SUITE}-minbase-{key}.tar")
    if os.path.isfile(tar):
        return tar
    if os.path.isdir(tar):  # an older run's mmdebstrap made a directory of it
        shutil.rmtree(tar, ignore_errors=True)
    os.makedirs(cache, exist_ok=True)
    if os.path.isdir(tar + ".tmp"):
        shutil.rmtree(tar + ".tmp", ignore_errors=True)
    elif os.path.exists(tar + ".tmp"):
        os.unlink(tar + ".tmp")  # a run stopped while making it
    work = tempfile.mkdtemp(prefix="wr-debootstrap-", dir=cache)
    try:
        tool = "mmdebstrap" if shutil.which("mmdebstrap") else "debootstrap"
        print(f"making the clean root ({tool} {SUITE} minbase + {' '.join(deps)}; "
              "minutes, once)", flush=True)
        t0 = time.monotonic()
        if tool == "mmdebstrap":  # apt's parallel downloads, the tarball directly
            # --format=tar: mmdebstrap picks the format from the target's
            # name otherwise, and "X.tar.tmp" made a directory
            cmd = ["mmdebstrap", "--variant=minbase", "--format=tar",
                   "--include=" + ",".join(deps), SUITE, tar + ".tmp", MIRROR]
        else:
            cmd = ["debootstrap", "--variant=minbase", "--include=" + ",".join(deps), SUITE,
                   os.path.join(work, "root"), MIRROR]
        r = run(cmd, timeout=1500)
        if r.returncode != 0:
            print(r.stdout[-3000:] + r.stderr[-3000:])
            raise RuntimeError(f"{tool} failed")
        if tool == "debootstrap":
            subprocess.run(["tar", "-C", os.path.join(work, "root"), "-cf", tar + ".tmp", "."],
                           check=True)
        os.rename(tar + ".tmp", tar)
        print(f"clean root made in {time.monotonic() - t0:.0f} s: {tar}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return tar


def tree(root):
    """{relative path: (mode, uid, gid, symlink target)} of everything under root."""
    out = {}
    for top, dirs, files in os.walk(root):
        for n in dirs + files:
            p = os.path.join(top, n)
            st = os.lstat(p)
            rel = "/" + os.path.relpath(p, root)
            out[rel] = (st.st_mode, st.st_uid, st.st_gid,
                        os.readlink(p) if os.path.islink(p) else None)
    return out


class Chroot:
    def __init__(self, root):
        self.root = root

    def run(self, *cmd, **kw):
        return run(["chroot", self.root] + list(cmd), **kw)

    def path(self, p):
        return os.path.join(self.root, p.lstrip("/"))

    def ids(self, name):
        """(uid, gid, home, shell) of a user of the root, or None."""
        for line in open(self.path("/etc/passwd")):
            f = line.rstrip("\n").split(":")
            if f[0] == name:
                return int(f[2]), int(f[3]), f[5], f[6]
        return None

    def group(self, name):
        for line in open(self.path("/etc/group")):
            f = line.split(":")
            if f[0] == name:
                return int(f[2])
        return None


def unit_exec_condition(unit_text):
    """The unit's ExecCondition command line, as systemd would run it ($$ -> $)."""
    for line in unit_text.splitlines():
        if line.startswith("ExecCondition="):
            return line[len("ExecCondition="):].replace("$$", "$")
    return None


def shell_words(line):
    import shlex
    return shlex.split(line)


def run_service(c, extra_env):
    """waitroomd as the unit runs it: user waitroom, the conffile, the data
    dir, the secrets from the environment. Returns (port, process)."""
    cmd = ["chroot", "--userspec=waitroom:waitroom", c.root, "env", "-i"] + \
          [f"{k}={v}" for k, v in extra_env.items()] + \
          ["/usr/bin/waitroomd", "--config", "/etc/waitroom/waitroom.ini",
           "--data-dir", "/var/lib/waitroom", "--listen", "127.0.0.1:0"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    line = p.stdout.readline().strip()
    m = re.fullmatch(r"listening on 127\.0\.0\.1:(\d+)", line)
    if not m:
        p.kill()
        raise RuntimeError(f"waitroomd printed {line!r}; stderr: {p.stderr.read()[-2000:]}")
    return int(m.group(1)), p


def http_status(port, path):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--deb", required=True)
    ap.add_argument("--cache", default=os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "waitroom"))
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("skipped: chroot and dpkg into a clean root need root (run make test as root)")
        return 77
    if not (shutil.which("mmdebstrap") or shutil.which("debootstrap")):
        print("FAIL mmdebstrap (or debootstrap) is missing: scripts/deps.sh installs it")
        return 1
    for tool in ("chroot", "dpkg-deb"):
        if not shutil.which(tool):
            print(f"FAIL {tool} is missing: scripts/deps.sh installs it")
            return 1
    deb = os.path.abspath(a.deb)
    if os.path.isdir(deb):  # the directory deb_build (scripts/deb.sh) wrote it to
        import glob
        debs = sorted(glob.glob(os.path.join(deb, "waitroom_*.deb")))
        if len(debs) != 1:
            print(f"FAIL one waitroom_*.deb in {deb}: {debs}")
            return 1
        deb = debs[0]
    version = run(["dpkg-deb", "-f", deb, "Version"]).stdout.strip()
    changelog = open(os.path.join(ROOT, "debian", "changelog")).readline()
    check("the package's version is debian/changelog's",
          f"waitroom ({version})" in changelog, f"{version!r} vs {changelog!r}")

    tar = clean_root_tar(a.cache, deps_of(deb))
    tmp = tempfile.mkdtemp(prefix="wr-deb-root-")
    proc = None
    try:
        root = os.path.join(tmp, "root")
        os.mkdir(root)
        subprocess.run(["tar", "-C", root, "-xf", tar], check=True)
        c = Chroot(root)
        before = tree(root)
        shutil.copy(deb, c.path("/tmp/waitroom.deb"))

        # ---- install ----
        r = c.run("dpkg", "-i", "/tmp/waitroom.deb")
        if not check("dpkg -i into the clean root", r.returncode == 0, r.stdout + r.stderr):
            return 1
        st = c.run("dpkg-query", "-W", "-f=${Status}", "waitroom").stdout
        check("dpkg: install ok installed", st == "install ok installed", st)

        listing = run(["dpkg-deb", "-c", deb]).stdout.splitlines()
        bad = []
        files = []
        for line in listing:
            perm, owner, _size, _d, _t, path = line.split(None, 5)
            path = path.split(" -> ")[0].lstrip(".")
            if path in ("", "/"):
                continue
            path = path.rstrip("/")
            files.append(path)
            p = c.path(path)
            if not os.path.lexists(p):
                bad.append(f"{path}: missing")
                continue
            s = os.lstat(p)
            if s.st_uid != 0 or s.st_gid != 0 or owner != "root/root":
                bad.append(f"{path}: owner {s.st_uid}:{s.st_gid}")
            if perm[0] == "-" and oct(s.st_mode & 0o7777) != oct(
                    sum(0o400 >> i for i, ch in enumerate(perm[1:10]) if ch != "-")):
                bad.append(f"{path}: mode {oct(s.st_mode & 0o7777)} vs {perm}")
        check(f"the package's {len(files)} paths are there, root-owned, with their modes",
              not bad, "; ".join(bad))
        for must in ("/usr/bin/waitroomd", "/usr/bin/waitroom-invite", "/usr/bin/waitroom-verify",
                     "/usr/share/man/man8/waitroomd.8.gz", "/lib/systemd/system/waitroomd.service",
                     "/etc/waitroom/waitroom.ini", "/usr/share/doc/waitroom/copyright",
                     "/usr/share/doc/waitroom/examples/grafana/waitroom.json",
                     "/usr/share/doc/waitroom/examples/prometheus/waitroom.rules.yml",
                     # every example docs/INTEGRATION.md links to (issue 37)
                     "/usr/share/doc/waitroom/examples/node/waitroom.js",
                     "/usr/share/doc/waitroom/examples/node/shop.js",
                     "/usr/share/doc/waitroom/examples/node/package.json",
                     "/usr/share/doc/waitroom/examples/python/waitroom_gate.py",
                     "/usr/share/doc/waitroom/examples/python/shop.py",
                     "/usr/share/doc/waitroom/examples/shell/waitroom.sh",
                     "/usr/share/doc/waitroom/examples/page/queue.html",
                     "/usr/share/doc/waitroom/examples/nginx/README.md"):
            check(f"the package installs {must}", must in files)

        r = c.run("/usr/bin/waitroomd", "--version")
        check("waitroomd --version in the clean root: waitroomd " + version,
              r.stdout.strip() == "waitroomd " + version, r.stdout + r.stderr)
        r = c.run("/usr/bin/waitroom-invite", "--help")
        check("waitroom-invite runs in the clean root", "usage:" in (r.stdout + r.stderr),
              r.stdout + r.stderr)
        r = c.run("/usr/bin/waitroom-verify", "--help")
        check("waitroom-verify runs in the clean root", "usage:" in (r.stdout + r.stderr),
              r.stdout + r.stderr)

        u = c.ids("waitroom")
        gid = c.group("waitroom")
        check("system user waitroom (uid < 1000, its own group, home /var/lib/waitroom, nologin)",
              u is not None and u[0] < 1000 and gid is not None and u[1] == gid
              and u[2] == "/var/lib/waitroom" and u[3] == "/usr/sbin/nologin", repr((u, gid)))
        s = os.stat(c.path("/var/lib/waitroom"))
        check("/var/lib/waitroom: waitroom:waitroom 0700",
              u and (s.st_uid, s.st_gid, s.st_mode & 0o7777) == (u[0], gid, 0o700),
              repr((s.st_uid, s.st_gid, oct(s.st_mode))))
        envp = c.path("/etc/waitroom/waitroom.env")
        s = os.stat(envp)
        env_text = open(envp).read()
        check("/etc/waitroom/waitroom.env: root:root 0600",
              (s.st_uid, s.st_gid, s.st_mode & 0o7777) == (0, 0, 0o600), oct(s.st_mode))
        tmpl = open(os.path.join(ROOT, "examples/systemd/waitroom.env")).read()
        km = re.search(r"^WAITROOM_ADMIN_KEY=([0-9a-f]{64})$", env_text, re.M)
        check("waitroom.env: the template with a random 64-hex admin key made on install",
              km is not None and env_text == tmpl.replace(
                  "WAITROOM_ADMIN_KEY=\n", "WAITROOM_ADMIN_KEY=%s\n" % km.group(1)),
              env_text)
        conff = c.run("dpkg-query", "-W", "-f=${Conffiles}", "waitroom").stdout
        check("/etc/waitroom/waitroom.ini is a conffile (and the only one)",
              [l.split()[0] for l in conff.strip().splitlines()] == ["/etc/waitroom/waitroom.ini"],
              conff)
        check("waitroom.env is not a package file (created by postinst, never overwritten)",
              "/etc/waitroom/waitroom.env" not in files)

        wants = c.path("/etc/systemd/system/multi-user.target.wants/waitroomd.service")
        check("the unit is enabled (multi-user.target.wants/waitroomd.service)",
              os.path.islink(wants)
              and os.readlink(wants) == "/lib/systemd/system/waitroomd.service",
              repr(os.path.lexists(wants) and os.readlink(wants)))
        unit = open(c.path("/lib/systemd/system/waitroomd.service")).read()
        keys = [l for l in unit.splitlines() if l and not l.startswith("#")]
        check("the unit: ExecStart=/usr/bin/waitroomd with the conffile and the data dir",
              "ExecStart=/usr/bin/waitroomd --config /etc/waitroom/waitroom.ini "
              "--data-dir /var/lib/waitroom" in keys)
        check("the unit runs as User=waitroom Group=waitroom, no DynamicUser",
              "User=waitroom" in keys and "Group=waitroom" in keys
              and not any(k.startswith("DynamicUser") for k in keys))
        cond = unit_exec_condition(unit)
        if check("the unit has an ExecCondition", cond is not None):
            words = shell_words(cond)
            r = c.run("env", "-i", "WAITROOM_ADMIN_KEY=", *words)
            check("ExecCondition with no admin key: exit 1 (start skipped) and says why",
                  r.returncode == 1 and "no admin key" in r.stderr, repr((r.returncode, r.stderr)))
            r = c.run("env", "-i", "WAITROOM_ADMIN_KEY=" + "ab" * 32, *words)
            check("ExecCondition with an admin key: exit 0", r.returncode == 0, repr(r))

        # ---- the service as the unit starts it ----
        port, proc = run_service(c, {"WAITROOM_ADMIN_KEY": "ab" * 32})
        deadline = time.monotonic() + 15
        st = None
        while time.monotonic() < deadline:
            try:
                st = http_status(port, "/readyz")
                if st == 200:
                    break
            except OSError:
                pass
            time.sleep(0.1)
        check("waitroomd as user waitroom with the package's config: /readyz 200", st == 200,
              repr(st))
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=20)
        proc = None
        snaps = os.listdir(c.path("/var/lib/waitroom"))
        owners = {os.stat(os.path.join(c.path("/var/lib/waitroom"), f)).st_uid for f in snaps}
        check("SIGTERM: exit 0, a snapshot in /var/lib/waitroom owned by waitroom",
              rc == 0 and snaps and owners == {u[0]}, repr((rc, snaps, owners)))

        # ---- reinstall (an upgrade's path): edited config and secrets kept ----
        with open(envp, "a") as f:
            f.write("# edited\n")
        with open(envp) as f:
            edited_env = f.read()
        inip = c.path("/etc/waitroom/waitroom.ini")
        with open(inip, "a") as f:
            f.write("; edited\n")
        edited_ini = open(inip).read()
        r = c.run("dpkg", "-i", "--force-confold", "/tmp/waitroom.deb")
        check("dpkg -i again", r.returncode == 0, r.stdout + r.stderr)
        s = os.stat(envp)
        check("the reinstall keeps the edited waitroom.env, root 0600",
              open(envp).read() == edited_env and (s.st_uid, s.st_mode & 0o7777) == (0, 0o600))
        check("the reinstall keeps the edited waitroom.ini", open(inip).read() == edited_ini)

        # ---- dpkg -r ----
        r = c.run("dpkg", "-r", "waitroom")
        check("dpkg -r", r.returncode == 0, r.stdout + r.stderr)
        st = c.run("dpkg-query", "-W", "-f=${Status}", "waitroom").stdout
        check("dpkg -r: deinstall ok config-files", st == "deinstall ok config-files", st)
        gone = [f for f in ("/usr/bin/waitroomd", "/usr/bin/waitroom-invite", "/usr/bin/waitroom-verify",
                            "/lib/systemd/system/waitroomd.service",
                            "/usr/share/doc/waitroom", "/usr/share/waitroom")
                if os.path.lexists(c.path(f))]
        check("dpkg -r removes the programs, the unit, the docs", not gone, repr(gone))
        kept = [f for f in ("/etc/waitroom/waitroom.ini", "/etc/waitroom/waitroom.env",
                            "/var/lib/waitroom/" + (snaps[0] if snaps else "?"))
                if not os.path.exists(c.path(f))]
        check("dpkg -r keeps the config, the secrets and the line's snapshot", not kept,
              repr(kept))
        check("dpkg -r keeps the user", c.ids("waitroom") is not None)

        # ---- dpkg --purge ----
        r = c.run("dpkg", "--purge", "waitroom")
        check("dpkg --purge", r.returncode == 0, r.stdout + r.stderr)
        st = c.run("dpkg-query", "-W", "-f=${Status}", "waitroom")
        check("dpkg --purge: the package is unknown to dpkg",
              st.returncode != 0 or st.stdout.startswith("unknown"), repr(st))
        after = tree(root)
        # dpkg's database and logs, the user and group files (the kept user),
        # adduser's lock (/run/adduser): not the package's files.
        ignore = re.compile(r"^/(var/lib/dpkg|var/log|var/cache|tmp|run/adduser$|etc/(passwd|group|"
                            r"shadow|gshadow|subuid|subgid)-?$)")
        new = sorted(p for p in set(after) - set(before) if not ignore.match(p))
        check("dpkg --purge leaves no new file behind (/etc/waitroom, /var/lib/waitroom, the "
              "enablement symlinks gone)", not new, repr(new))
        changed = sorted(p for p in set(after) & set(before)
                         if after[p] != before[p] and not ignore.match(p)
                         and not os.path.isdir(os.path.join(root, p.lstrip("/"))))
        check("dpkg --purge leaves no changed file but the user and group databases",
              not changed, repr(changed))
        missing = sorted(p for p in set(before) - set(after) if not ignore.match(p))
        check("dpkg --purge removes nothing that was there before", not missing, repr(missing))
        check("dpkg --purge keeps the system user (Debian practice)",
              c.ids("waitroom") is not None)
    finally:
        if proc is not None:
            proc.kill()
        shutil.rmtree(tmp, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
