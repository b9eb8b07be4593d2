/*
 * cluster_harness.h - a private Redis Cluster for the store tests: N
 * primaries (and R replicas each) on free loopback ports, made with
 * `redis-cli --cluster create`, in a mkdtemp directory; every redis-server
 * gets PR_SET_PDEATHSIG, so a crashed test never leaves one behind.
 */
#ifndef WR_CLUSTER_HARNESS_H
#define WR_CLUSTER_HARNESS_H

#include <hiredis/hiredis.h>
#include <stdint.h>

#include "store/store.h"

#define SC_NODES_MAX 12

/* Starts primaries * (1 + replicas) nodes and waits (20 s) until every
 * node says cluster_state:ok. 0, or -1 (everything stopped). */
int sc_setup(int primaries, int replicas);

/* Stops every node (SIGKILL) and removes the directory. */
void sc_teardown(void);

/* "redis-cluster://127.0.0.1:P1,127.0.0.1:P2" (the first two nodes as
 * seeds); borrowed. */
const char *sc_url(void);

/* FLUSHALL on every node that answers as a primary; 0 or -1. */
int sc_flushall(void);

/* One command on a fresh blocking connection to 127.0.0.1:port; the reply
 * (caller frees) or NULL. */
redisReply *sc_cmd(int port, const char *fmt, ...);

/* Opens the store on the cluster (through the registry) and waits until
 * it is connected (10 s). NULL on failure. */
wr_store_t *sc_open(uint32_t cmd_timeout_ms);

#endif
