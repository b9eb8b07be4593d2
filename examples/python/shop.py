"""shop.py - a minimal Flask shop behind waitroom (docs/INTEGRATION.md),
run by tests/ops/run_examples.py against a real waitroomd.

    WAITROOM_API=http://127.0.0.1:8080 WAITROOM_PAGE=http://127.0.0.1:8080/ \\
    WAITROOM_QUEUE=shop WAITROOM_ADMIN_KEY=... PORT=5000 python3 shop.py

GET /checkout/ is a page behind the line (verify); POST /checkout/order is
the protected work (consume), which ends the session (release) when done.
It reports its health (autotune) once at start; a waitroomd without
autotune answers 404 and the shop says so.
"""
import os
import sys
import time

from flask import Flask, g, jsonify
from werkzeug.serving import make_server

from waitroom_gate import Gate, report_health

env = os.environ
app = Flask(__name__)
gate = Gate(api=env["WAITROOM_API"], page=env["WAITROOM_PAGE"], queue=env["WAITROOM_QUEUE"])


@app.get("/checkout/")
@gate.flask_verify
def checkout():
    return "<h1>Checkout</h1>"


@app.post("/checkout/order")
@gate.flask_consume
def order():
    t0 = time.monotonic()
    # ... the order: stock, payment ...
    released = gate.release(g.waitroom["token"])
    app.config.setdefault("latencies", []).append((time.monotonic() - t0) * 1000)
    return jsonify(ordered=True, userId=g.waitroom.get("userId"), released=released)


if __name__ == "__main__":
    server = make_server("127.0.0.1", int(env.get("PORT", "0")), app, threaded=True)
    print("listening on 127.0.0.1:%d" % server.server_port, flush=True)
    if env.get("WAITROOM_ADMIN_KEY"):
        st = report_health(env["WAITROOM_API"], env["WAITROOM_QUEUE"], env["WAITROOM_ADMIN_KEY"],
                           latency_ms=0, error_rate=0.0)
        if st == 404:
            print("waitroom health report: 404, this waitroomd has no autotune; reports stopped",
                  flush=True)
        else:
            print("waitroom health report: %d" % st, flush=True)
    sys.stdout.flush()
    server.serve_forever()
