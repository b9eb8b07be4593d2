"""Web Push on Redis Cluster: test_push.py's tests (the routes, one
decrypted push per admission, the retries, the closing push, a subscribed
person never away, two instances sending exactly one push per admission)
against the suite's cluster, where every key of a queue carries its hash
tag {queue} and the scripts run on the queue's slot. Run by run.py for the
backend redis-cluster (its pattern is test_cluster*.py); skipped on the
others, which run test_push.py itself."""
import test_push
from harness import ENV


class test_push_on_cluster(test_push.Push):  # noqa: N801 - named so that `-k test_push` selects it
    """test_push.Push on the cluster."""

    def setUp(self):
        if ENV.store != "redis-cluster":
            self.skipTest("redis-cluster only (test_push.py runs on the others)")
        super().setUp()
