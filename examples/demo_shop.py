"""demo_shop.py - the page behind the line of `make run` (scripts/run.sh).

Standard library only (wsgiref). It stands for the shop a real queue
protects: GET / needs a pass and consumes it (examples/python/waitroom_gate.py,
the WSGI middleware of docs/INTEGRATION.md), so an admitted browser lands on
a page that says it got in, and the same pass used again (a reload, a
shared link) is sent back to the queue page: no pass, no entry.

    WAITROOM_API=http://127.0.0.1:8080 WAITROOM_PAGE=http://127.0.0.1:8080/ \\
    WAITROOM_QUEUE=demo PORT=8081 python3 examples/demo_shop.py

It prints "listening on 127.0.0.1:PORT" once it listens.
"""
import html
import os
import sys
from wsgiref.simple_server import WSGIRequestHandler, make_server

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "python"))
from waitroom_gate import Gate  # noqa: E402

env = os.environ
gate = Gate(api=env["WAITROOM_API"], page=env["WAITROOM_PAGE"], queue=env["WAITROOM_QUEUE"])

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Demo shop: you're in</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 36rem; margin: 3rem auto; padding: 0 1rem">
<h1>You're in</h1>
<p>This page stands for the shop behind the line of queue <b>{queue}</b>.
Your entry pass was checked and consumed just now (it works once): reloading
this page sends you back to the line.</p>
<p><small>Visitor {user}</small></p>
</body></html>
"""


def shop(environ, start_response):
    if environ.get("PATH_INFO", "/") != "/":
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b"not found\n"]
    claims = environ.get("waitroom", {})
    body = PAGE.format(queue=html.escape(gate.queue),
                       user=html.escape(str(claims.get("userId", "")))).encode()
    start_response("200 OK", [("Content-Type", "text/html; charset=utf-8"),
                              ("Cache-Control", "no-store"), ("Content-Length", str(len(body)))])
    return [body]


class QuietHandler(WSGIRequestHandler):
    def log_message(self, *args):  # waitroomd's access log is the one to read
        pass


if __name__ == "__main__":
    server = make_server("127.0.0.1", int(env.get("PORT", "0")), gate.wsgi(shop, consume=True),
                         handler_class=QuietHandler)
    print("listening on 127.0.0.1:%d" % server.server_port, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
