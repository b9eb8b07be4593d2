/*
 * memq_steps.h - the steps the queue-model tests (test_memq_*.c,
 * test_mem_snapshot_groups.c) drive a wr_memq_t with, each asserting it
 * succeeded. Include it once, after <cmocka.h>.
 */
#ifndef WR_MEMQ_STEPS_H
#define WR_MEMQ_STEPS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "store/memory/memq.h"

/* A join (add) or status of u at now (store and wall clock alike; page: a
 * page join): its answer. */
static inline wr_entry_t memq_entry(wr_memq_t *q, const char *u, bool add, bool page, int64_t now)
{
    wr_entry_t e;
    bool dirty = false;
    memset(&e, 0, sizeof e);
    assert_int_equal(wr_memq_entry(q, u, strlen(u), add, page, now, now, &e, &dirty), WR_OK);
    return e;
}

/* One admission tick at now: how many were admitted. */
static inline uint64_t memq_admit(wr_memq_t *q, int64_t now)
{
    uint64_t n = 0, moved, left;
    bool dirty = false;
    assert_int_equal(wr_memq_admit(q, now, &n, NULL, &moved, &left, &dirty), WR_OK);
    return n;
}

#endif
