"""Redis Cluster faults of issue 37, each against a real cluster of its own:

- K42: every endpoint type Redis documents (`cluster-preferred-endpoint-type`
  ip, hostname with `cluster-announce-hostname`, hostname without one ("?"),
  unknown-endpoint (NULL in CLUSTER SLOTS, "" in MOVED)) serves queues on
  every shard and follows a MOVED; over TLS the certificate is checked
  against the hostname (a certificate for localhost only: reached by
  address, the nodes are refused);
- /readyz: 503 naming every shard while every node answers CLUSTERDOWN; in
  durability mode a shard without the replicas WAIT needs is named with its
  reason (200 while other shards serve, 503 once none can);
- a MOVED or an ASK to a node the instance has no connection to yet is
  followed (connect, then send) within the store timeout;
- a node that leaves the slot map has its connections closed.

Run by run.py for the backend redis-cluster (pattern test_cluster*.py).
"""
import os
import shutil
import subprocess
import tempfile
import time

from harness import ADMIN, ENV, Client, WRTest, Waitroomd, uid
from helpers import RedisCluster, spawn, wait_in_file
from resp import RedisError

ANSWER_BOUND_S = 2.0


def localhost_certs(d):
    """A CA and a node certificate valid for the name localhost only (no IP
    address in it: a TLS check against 127.0.0.1 refuses it)."""
    def ssl(*a):
        subprocess.run(["openssl"] + list(a), cwd=d, check=True, capture_output=True)
    ssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=wr-test-ca",
        "-keyout", "ca.key", "-out", "ca.pem")
    with open(os.path.join(d, "ext.cnf"), "w") as f:
        f.write("subjectAltName=DNS:localhost\n")
    ssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout", "node.key",
        "-out", "node.csr")
    ssl("x509", "-req", "-in", "node.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-days", "2", "-extfile", "ext.cnf", "-out", "node.pem")
    return {"ca": os.path.join(d, "ca.pem"), "cert": os.path.join(d, "node.pem"),
            "key": os.path.join(d, "node.key")}


def acked_reply(r):
    """A join the store acknowledged: a place in line, not degraded."""
    return r.status == 200 and r.json.get("status") == "waiting" and \
        not r.json.get("degraded") and isinstance(r.json.get("position"), int)


class ClusterFaults(WRTest):

    def setUp(self):
        super().setUp()
        if ENV.store != "redis-cluster":
            self.skipTest("redis-cluster only")

    # -- helpers ----------------------------------------------------------
    def own_cluster(self, **kw):
        cl = RedisCluster(ENV.tmpdir, **kw)
        self.addCleanup(cl.stop)
        return cl

    def instance(self, url, extra=(), timeout_ms=250):
        w = Waitroomd(ENV.waitroomd, url, ENV.secret, ENV.tmpdir, identity="header:X-User-Id",
                      extra=["--store-timeout-ms", str(timeout_ms)] + list(extra))
        self.addCleanup(w.kill)
        return w

    def queue_on(self, cl, port, client, prefix="fq"):
        """A paused queue whose slot is owned by the primary on port."""
        for _ in range(500):
            name = "%s-%s" % (prefix, uid(""))
            if cl.owner("wr:{%s}:config" % name) == port:
                r = client.put_queue(name, {"admitPerSecond": 1, "paused": True})
                self.assertEqual(r.status, 200, repr(r))
                return name
        self.fail("no queue name for %d" % port)

    def acked_join(self, client, q, user):
        t0 = time.monotonic()
        r = client.join(q, user)
        self.assertLess(time.monotonic() - t0, ANSWER_BOUND_S)
        self.assertEqual(r.status, 200, repr(r))
        self.assertEqual(r.json.get("status"), "waiting", repr(r))
        self.assertFalse(r.json.get("degraded"), repr(r))
        return r.json["position"]

    def waitroomd_clients(self, cl, port):
        """Connections to node port other than this test's and MIGRATE's."""
        rows = cl.cmd(port, "CLIENT", "LIST").splitlines()
        return [r for r in rows if " cmd=client|list" not in r and " cmd=restore-asking" not in r]

    def slot_of(self, cl, q):
        return cl.cmd(cl.alive()[0].port, "CLUSTER", "KEYSLOT", "wr:{%s}:config" % q)

    # -- K42: endpoint types ---------------------------------------------
    def endpoint_type_serves(self, etype, extra=(), expect_host=None):
        cl = self.own_cluster(primaries=3, replicas=0,
                              extra=["--cluster-preferred-endpoint-type", etype] + list(extra))
        first = cl.cmd(cl.nodes[0].port, "CLUSTER", "SLOTS")[0][2][0]
        self.assertEqual(first, expect_host, "CLUSTER SLOTS endpoint for %s" % etype)
        w = self.instance(cl.url())
        primaries = cl.primary_ports()
        queues = {p: self.queue_on(cl, p, w.client, "ep") for p in primaries}
        for p, q in queues.items():
            self.assertEqual(self.acked_join(w.client, q, "u1"), 1)
            self.assertEqual(cl.cmd(p, "EXISTS", "wr:{%s}:waiting" % q), 1, q)
        r = w.client.get("/readyz")
        self.assertEqual((r.status, r.json), (200, {"status": "ready"}), etype)
        # a MOVED names the new owner with the same endpoint type ("" for
        # unknown-endpoint, "?" for a hostname never announced)
        src = primaries[0]
        q = queues[src]
        dst = primaries[1]
        slot = self.slot_of(cl, q)
        cl.migrate_slot(slot, src, dst)
        try:
            cl.cmd(src, "EXISTS", "wr:{%s}:config" % q)
            note = "no MOVED"
        except RedisError as e:
            note = str(e)
        self.assertTrue(note.startswith("MOVED %d " % slot), note)
        self.assertEqual(self.acked_join(w.client, q, "u2"), 2, "after MOVED (%s)" % note)
        self.assertEqual(cl.cmd(dst, "ZCARD", "wr:{%s}:waiting" % q), 2)

    def test_endpoint_ip(self):
        self.endpoint_type_serves("ip", expect_host="127.0.0.1")

    def test_endpoint_hostname(self):
        self.endpoint_type_serves("hostname", ["--cluster-announce-hostname", "localhost"],
                                  expect_host="localhost")

    def test_endpoint_hostname_not_announced(self):
        self.endpoint_type_serves("hostname", expect_host="?")

    def test_endpoint_unknown(self):
        self.endpoint_type_serves("unknown-endpoint", expect_host=None)

    def test_endpoint_hostname_over_tls_checks_the_name(self):
        # the certificate names localhost and no address: the instance gets
        # only as far as the hostname endpoints take it
        self.assertTrue(shutil.which("openssl"), "openssl is missing: scripts/deps.sh installs it")
        c = localhost_certs(tempfile.mkdtemp(prefix="certs-", dir=ENV.tmpdir))
        cl = self.own_cluster(primaries=3, replicas=0, tls=c,
                              extra=["--cluster-preferred-endpoint-type", "hostname",
                                     "--cluster-announce-hostname", "localhost"])
        url = "rediss-cluster://localhost:%d,localhost:%d" % (cl.nodes[0].tls_port,
                                                               cl.nodes[1].tls_port)
        w = self.instance(url, ["--redis-ca", c["ca"]])
        shards = {}  # a queue on each shard (owners told apart by CLUSTER SLOTS)
        for _ in range(500):
            name = "tls-" + uid("")
            shards.setdefault(cl.owner("wr:{%s}:config" % name), name)
            if len(shards) == 3:
                break
        self.assertEqual(len(shards), 3)
        for q in shards.values():
            self.assertEqual(w.client.put_queue(q, {"admitPerSecond": 1, "paused": True}).status,
                             200)
            self.assertEqual(self.acked_join(w.client, q, "t1"), 1)
        r = w.client.get("/readyz")
        self.assertEqual((r.status, r.json), (200, {"status": "ready"}))
        # the same nodes reached by address: the certificate does not name
        # 127.0.0.1, so no connection is made and the instance never serves
        ip_url = "rediss-cluster://127.0.0.1:%d,127.0.0.1:%d" % (cl.nodes[0].tls_port,
                                                                  cl.nodes[1].tls_port)
        _, port, errpath = spawn(self, ["--store", ip_url, "--token-secret", ENV.secret,
                                        "--redis-ca", c["ca"], "--store-timeout-ms", "250"])
        wait_in_file(self, errpath, "certificate is not for '127.0.0.1'",
                     "the name check refusing the address")
        r = Client(port).get("/readyz")
        self.assertEqual(r.status, 503, repr(r))

    # -- /readyz ------------------------------------------------------------
    def test_readyz_503_while_every_node_answers_clusterdown(self):
        cl = self.own_cluster(primaries=3, replicas=0)
        w = self.instance(cl.url())
        primaries = cl.primary_ports()
        survivor = primaries[2]
        q = self.queue_on(cl, survivor, w.client, "cd")
        self.assertEqual(self.acked_join(w.client, q, "before"), 1)
        for p in primaries[:2]:
            cl.node(p).kill()
        # the survivor, cut off from the majority, says cluster_state:fail
        # and answers CLUSTERDOWN to every key
        self.poll_until(lambda: cl.cmd(survivor, "CLUSTER", "INFO"),
                        lambda s: "cluster_state:fail" in s, timeout=15,
                        what="the survivor's cluster_state:fail")
        r = self.poll_until(lambda: w.client.get("/readyz"), lambda r: r.status == 503,
                            timeout=5, what="/readyz 503 with every node CLUSTERDOWN")
        self.assertEqual(r.json["error"], "STORE_UNAVAILABLE", r.body)
        shards = r.json["unreachableShards"]
        for p in primaries:
            self.assertTrue(any(s.startswith("127.0.0.1:%d (slots " % p) for s in shards),
                            (p, shards))
        mine = [s for s in shards if s.startswith("127.0.0.1:%d " % survivor)]
        self.assertEqual(len(mine), 1, shards)
        self.assertIn("CLUSTERDOWN", mine[0])
        r = w.client.join(q, uid("down-"))  # failPolicy (limited): not acknowledged
        self.assertTrue(r.status == 503 or r.json.get("degraded"), repr(r))
        # readiness asks cost the store nothing: the breaker stays closed
        for _ in range(10):
            self.assertEqual(w.client.get("/readyz").status, 503)
        self.assertIn('waitroom_breaker_state{state="closed"} 1',
                      w.client.get("/metrics", ADMIN).body)

    def test_readyz_names_a_shard_without_the_replicas_durability_needs(self):
        cl = self.own_cluster(primaries=3, replicas=1)
        w = self.instance(cl.url(), ["--redis-wait-replicas", "1",
                                     "--redis-wait-timeout-ms", "300"], timeout_ms=500)
        primaries = cl.primary_ports()
        victim = primaries[0]
        qv = self.queue_on(cl, victim, w.client, "dv")
        qh = self.queue_on(cl, primaries[1], w.client, "dh")
        r = w.client.get("/readyz")
        self.assertEqual((r.status, r.json), (200, {"status": "ready"}))
        cl.node(cl.replica_of(victim)).kill()
        addr = "127.0.0.1:%d (slots " % victim

        r = self.poll_until(lambda: w.client.get("/readyz"),
                            lambda r: r.status == 200 and addr in r.body, timeout=5,
                            what="/readyz names the shard without a replica")
        self.assertEqual(r.json["status"], "ready")
        named = [s for s in r.json["unreachableShards"] if s.startswith(addr)]
        self.assertEqual(len(named), 1, r.json)
        self.assertIn("0 of 1 replicas online", named[0])
        self.assertEqual(len(r.json["unreachableShards"]), 1, r.json)
        # what it names is true: that shard refuses joins, the other serves
        r = w.client.join(qv, uid("norep-"))
        self.assertEqual(r.status, 503, repr(r))
        self.assertEqual(self.acked_join(w.client, qh, uid("rep-")), 1)
        # no shard with a replica left: nothing can take a join
        for p in primaries[1:]:
            cl.node(cl.replica_of(p)).kill()
        r = self.poll_until(lambda: w.client.get("/readyz"), lambda r: r.status == 503,
                            timeout=5, what="/readyz 503 with no shard able to serve")
        self.assertEqual(len(r.json["unreachableShards"]), 3, r.json)
        for s in r.json["unreachableShards"]:
            self.assertIn("0 of 1 replicas online", s)

    # -- redirections to a node not connected yet; a node leaving ----------
    def test_ask_and_moved_to_a_node_never_connected(self):
        cl = self.own_cluster(primaries=3, replicas=0)
        src = cl.primary_ports()[0]
        # the store timeout bounds connect + handshake + scripts + the join
        w_ask = self.instance(cl.url(), timeout_ms=1000)
        w_moved = self.instance(cl.url(), timeout_ms=1000)
        q = self.queue_on(cl, src, w_ask.client, "rd")
        self.assertEqual(self.acked_join(w_ask.client, q, "a0"), 1)
        self.assertEqual(self.acked_join(w_moved.client, q, "m0"), 2)
        new = cl.add_node()
        self.assertEqual(self.waitroomd_clients(cl, new), [], "nobody knows the new node yet")
        slot = self.slot_of(cl, q)
        ids = cl.ids()
        # ASK: the slot migrating, its keys already on the new node. The
        # join is sent there with ASKING; the new node answers a script
        # whose keys are not all there yet TRYAGAIN (Redis's rule until
        # SETSLOT NODE), so the join itself may end degraded: what counts
        # is that the command reached the node it had no connection to.
        cl.cmd(new, "CLUSTER", "SETSLOT", slot, "IMPORTING", ids[src])
        cl.cmd(src, "CLUSTER", "SETSLOT", slot, "MIGRATING", ids[new])
        cl.migrate_keys(slot, src, new)
        r = w_ask.client.join(q, "a1")
        self.assertEqual(r.status, 200, repr(r))
        stats = cl.cmd(new, "INFO", "commandstats")
        self.assertIn("cmdstat_asking:calls=", stats, "the ASK was followed to the new node")
        self.assertIn("cmdstat_evalsha:calls=", stats)
        # MOVED: the slot now the new node's; w_moved never talked to it,
        # and its first join there is acknowledged
        cl.assign_slot(slot, new)
        n = 2 + (1 if r.json.get("position") else 0)
        self.assertEqual(self.acked_join(w_moved.client, q, "m1"), n + 1, "MOVED to a new node")
        self.assertEqual(self.acked_join(w_ask.client, q, "a1b"), n + 2)
        self.assertEqual(cl.cmd(new, "ZCARD", "wr:{%s}:waiting" % q), n + 2)

    def test_a_node_leaving_has_its_connections_closed(self):
        # (no replica migration: the node that gives its slot back stays an
        # empty primary, which the slot map does not name)
        cl = self.own_cluster(primaries=3, replicas=0,
                              extra=["--cluster-allow-replica-migration", "no"])
        src = cl.primary_ports()[0]
        w1, w2 = self.instance(cl.url()), self.instance(cl.url())
        q = self.queue_on(cl, src, w1.client, "lv")
        new = cl.add_node()
        slot = self.slot_of(cl, q)
        cl.migrate_slot(slot, src, new)
        n = 0
        for w in (w1, w2):  # each meets a MOVED to the new node and connects to it
            n += 1
            self.poll_until(lambda: w.client.join(q, "u%d" % n), lambda r: acked_reply(r),
                            what="a join on the new node acknowledged")
        self.assertEqual(cl.cmd(new, "ZCARD", "wr:{%s}:waiting" % q), 2)
        self.assertGreaterEqual(len(self.waitroomd_clients(cl, new)), 2)
        # the node leaves: its slot goes back (each instance meets a MOVED
        # and asks for the map, which no longer names the node), then
        # CLUSTER FORGET everywhere
        cl.migrate_slot(slot, new, src)
        for w in (w1, w2):
            n += 1
            self.assertEqual(self.acked_join(w.client, q, "u%d" % n), n)
        nid = cl.ids()[new]
        for p in cl.primary_ports():
            if p != new:
                cl.cmd(p, "CLUSTER", "FORGET", nid)
        self.poll_until(lambda: self.waitroomd_clients(cl, new), lambda c: c == [],
                        timeout=5, what="both instances closed their connections to the node "
                                        "that left")
        for w in (w1, w2):
            n += 1
            self.assertEqual(self.acked_join(w.client, q, "u%d" % n), n)
            r = w.client.get("/readyz")
            self.assertEqual((r.status, r.json), (200, {"status": "ready"}))

    # -- the {.global} shard down ----------------------------------------
    def test_queue_writes_while_the_global_shard_is_down(self):
        cl = self.own_cluster(primaries=3, replicas=0)
        w = self.instance(cl.url())
        home = cl.owner("wr:{.global}:queues")
        other = next(p for p in cl.primary_ports() if p != home)
        cl.node(home).kill()
        self.poll_until(lambda: w.client.get("/readyz"),
                        lambda r: r.status == 200 and "127.0.0.1:%d" % home in r.body,
                        what="/readyz names the {.global} shard")
        # PUT, PATCH and DELETE of a queue on a live shard answer; the
        # registry's SADD/SREM wait for the {.global} shard
        q = self.queue_on(cl, other, w.client, "gl")
        self.assertEqual(w.client.patch_queue(q, {"admitPerSecond": 3}).status, 200)
        self.assertEqual(w.client.get_queue(q).json["config"]["admitPerSecond"], 3)
        self.assertEqual(self.acked_join(w.client, q, "g1"), 1)
        gone = self.queue_on(cl, other, w.client, "gd")
        r = w.client.delete_queue(gone)
        self.assertIn(r.status, (200, 204), repr(r))
        # what needs {.global}: the list of queues (the registry)
        self.assertEqual(w.client.list_queues().status, 503)
        # the shard back: the held registry writes are sent, in order
        cl.restart(home)
        cl.wait_ok()
        self.poll_until(lambda: cl.cmd(home, "SMEMBERS", "wr:{.global}:queues"),
                        lambda m: q in m and gone not in m, timeout=10,
                        what="the registry has the queue written while its shard was down")
        r = self.poll_until(lambda: w.client.list_queues(), lambda r: r.status == 200,
                            timeout=10, what="the list of queues back")
        names = [x["name"] for x in r.json["queues"]]
        self.assertIn(q, names)
        self.assertNotIn(gone, names)
