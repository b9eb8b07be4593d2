"""SIGHUP and the queues the config file declares (API 1.2 "Clarifications":
a changed [queue NAME] section writes only the fields it names, as a PATCH
of those fields; case K30).

Each test starts its own waitroomd on the suite's store with its own config
file, so signals never touch the shared servers.
"""
import os
import signal
import time

from harness import ENV, WRTest, now_ms, uid
from helpers import private_server


class Reload(WRTest):

    def start(self, ini):
        self.ini = os.path.join(ENV.tmpdir, "reload-%s.ini" % uid())
        with open(self.ini, "w") as f:
            f.write(ini)
        w = private_server(self, identity="header:X-User-Id", extra=["--config", self.ini])
        return w

    def reload(self, w, ini):
        tmp = self.ini + ".new"
        with open(tmp, "w") as f:
            f.write(ini)
        os.replace(tmp, self.ini)
        w.proc.send_signal(signal.SIGHUP)

    def declared(self, q, ini):
        """A private instance on ini, once its declared queue q exists."""
        w = self.start(ini)
        self.cleanup_queue(w.client, q)
        self.poll_until(lambda: w.client.get_queue(q).status, lambda s: s == 200,
                        what="declared queue")
        return w, w.client, now_ms() + 3600 * 1000

    def cleanup_queue(self, c, q):
        def delete():
            try:
                c.delete_queue(q)
            except OSError:  # stopped: the shared instance sees the same Redis
                if ENV.store == "redis":
                    self.c.delete_queue(q)
        self.addCleanup(delete)

    def test_k30_reload_keeps_the_schedule(self):
        """K30: editing only admitPerSecond and sending SIGHUP keeps opensAt
        and paused set through the admin API (a scheduled sale must not
        open early); a field removed from the section keeps its value; a
        field the section names is written."""
        q = "k30-" + uid()
        ini = "[queue %s]\nadmitPerSecond = 5\nmaxQueueSize = 100\ntokenTtlSeconds = 120\n" % q
        w, c, opens = self.declared(q, ini)
        r = c.patch_queue(q, {"opensAt": opens, "paused": True, "maxQueueSize": 50})
        self.assertEqual(r.status, 200, repr(r))
        u = uid()
        self.assertEqual(c.join(q, u).json["status"], "prequeue")

        # only the rate changes in the file; tokenTtlSeconds leaves it
        self.reload(w, "[queue %s]\nadmitPerSecond = 7\nmaxQueueSize = 100\n" % q)
        cfg = self.poll_until(lambda: c.get_queue(q).json["config"],
                              lambda v: v["admitPerSecond"] == 7, what="the file's new rate")
        self.assertEqual(cfg["opensAt"], opens, "the schedule undone by a reload: %s" % cfg)
        self.assertIs(cfg["paused"], True, cfg)
        self.assertEqual(cfg["tokenTtlSeconds"], 120, "a field the section no longer names")
        self.assertEqual(cfg["maxQueueSize"], 100, "a field the section names is written")
        self.assertEqual(c.me(q, u).json["status"], "prequeue", "the sale opened early")
        self.assertEqual(self.stats(q, c)["prequeue"], 1)

        # an unchanged file, sent again: nothing changes
        c.patch_queue(q, {"maxQueueSize": 60})
        w.proc.send_signal(signal.SIGHUP)
        time.sleep(0.5)
        cfg = c.get_queue(q).json["config"]
        self.assertEqual((cfg["maxQueueSize"], cfg["opensAt"], cfg["paused"]), (60, opens, True))
        self.assertEqual(w.terminate(), 0, w.stderr_tail())

    def test_reload_keeps_closed_and_the_stock(self):
        """API 1.2 "Clarifications": closed and what is left of the stock,
        set through the admin API, are never undone by a reload whose
        section does not name them; a section that names stock sets what is
        left (as a PATCH would), and the notice it names is written."""
        q = "end-" + uid()
        ini = "[queue %s]\nadmitPerSecond = 1000\ntickMs = 50\nstock = 5\n" % q
        w, c, _ = self.declared(q, ini)
        self.assertEqual(c.get_queue(q).json["config"]["stock"], 5)
        buyer = uid()
        self.join_ok(q, buyer, client=c)
        self.wait_admitted(q, buyer, client=c)
        self.assertEqual(c.get_queue(q).json["config"]["stock"], 4)
        r = c.patch_queue(q, {"closed": True})
        self.assertEqual(r.status, 200, repr(r))
        # the rate changes in the file; stock leaves it
        self.reload(w, "[queue %s]\nadmitPerSecond = 900\ntickMs = 50\n" % q)
        cfg = self.poll_until(lambda: c.get_queue(q).json["config"],
                              lambda v: v["admitPerSecond"] == 900, what="the file's new rate")
        self.assertEqual((cfg["closed"], cfg["stock"]), (True, 4), cfg)
        self.assertEqual(c.join(q, uid()).json.get("reason"), "closed")
        # a section that names stock (and a notice) sets them
        self.reload(w, "[queue %s]\nadmitPerSecond = 900\ntickMs = 50\nstock = 10\n"
                    "notice = Back at ten\n" % q)
        cfg = self.poll_until(lambda: c.get_queue(q).json["config"],
                              lambda v: v["stock"] == 10, what="the file's stock")
        self.assertEqual((cfg["closed"], cfg["notice"]), (True, "Back at ten"), cfg)
        self.assertEqual(w.terminate(), 0, w.stderr_tail())

    def test_k30_new_section_patches_a_live_queue_and_creates_an_absent_one(self):
        """K30: a section added on reload for a queue that already exists
        (made through the admin API) writes only its fields; one for an
        absent queue creates it with the declaration (defaults for the
        rest)."""
        live, fresh = "k30live-" + uid(), "k30new-" + uid()
        w = self.start("[server]\n")
        c = w.client
        self.cleanup_queue(c, live)
        self.cleanup_queue(c, fresh)
        opens = now_ms() + 3600 * 1000
        r = c.put_queue(live, {"admitPerSecond": 3, "paused": True, "opensAt": opens,
                               "tickMs": 200})
        self.assertEqual(r.status, 200, repr(r))
        self.reload(w, "[queue %s]\nadmitPerSecond = 9\n\n[queue %s]\nadmitPerSecond = 4\n"
                    % (live, fresh))
        self.poll_until(lambda: c.get_queue(fresh).status, lambda s: s == 200,
                        what="the new queue")
        cfg = self.poll_until(lambda: c.get_queue(live).json["config"],
                              lambda v: v["admitPerSecond"] == 9, what="the live queue's rate")
        self.assertEqual((cfg["paused"], cfg["opensAt"], cfg["tickMs"]), (True, opens, 200), cfg)
        cfg = c.get_queue(fresh).json["config"]
        self.assertEqual((cfg["admitPerSecond"], cfg["paused"], cfg["opensAt"]), (4, False, None))
        self.assertEqual(w.terminate(), 0, w.stderr_tail())

    def test_start_keeps_runtime_changes(self):
        """K30: at start a declared queue that exists is left as it is (a
        restart never undoes a runtime change); documented start
        behaviour."""
        q = "k30start-" + uid()
        ini = "[queue %s]\nadmitPerSecond = 5\n" % q
        w, c, opens = self.declared(q, ini)
        self.assertEqual(c.patch_queue(q, {"opensAt": opens, "admitPerSecond": 2}).status, 200)
        self.assertEqual(w.terminate(), 0)
        if ENV.store == "memory":
            return  # the embedded store without --data-dir starts empty
        w2 = self.start(ini)
        cfg = w2.client.get_queue(q).json["config"]
        self.assertEqual((cfg["opensAt"], cfg["admitPerSecond"]), (opens, 2), cfg)
