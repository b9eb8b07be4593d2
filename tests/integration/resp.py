"""A minimal Redis client speaking RESP2 over a plain socket (stdlib only).

Used by the integration suite to read and poke the store directly (K01 score
precision, K02 SCRIPT FLUSH). Replies: simple strings and bulk strings come
back as str (bulk None for a nil), integers as int, arrays as lists, errors
raise RedisError.
"""
import re
import socket


class RedisError(Exception):
    pass


class Redis:
    def __init__(self, port, host="127.0.0.1", timeout=5.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.f = self.sock.makefile("rb")

    def close(self):
        try:
            self.f.close()
            self.sock.close()
        except OSError:
            pass

    def cmd(self, *args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            b = a if isinstance(a, bytes) else str(a).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(b), b))
        self.sock.sendall(b"".join(out))
        return self._read()

    def _read(self):
        line = self.f.readline()
        if not line.endswith(b"\r\n"):
            raise RedisError("connection closed")
        kind, rest = line[:1], line[1:-2]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            raise RedisError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            data = self.f.read(n + 2)
            return data[:-2].decode()
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self._read() for _ in range(n)]
        raise RedisError("bad reply type %r" % kind)


def commandstats(port, host="127.0.0.1"):
    """Calls of each command so far (INFO commandstats): {"evalsha": n, ...}."""
    r = Redis(port, host)
    try:
        info = r.cmd("INFO", "commandstats")
    finally:
        r.close()
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"cmdstat_(\S+?):calls=(\d+)", info)}
