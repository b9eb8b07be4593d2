/*
 * store_memory_report.c - the report operation of the embedded store
 * (store.h report; docs/API.md 1.3, "The sale's report"): a WRITE's sample
 * is the queue's stats now (after the same sweep queue_get does), taken in
 * the store's one step; the maps and the registry are mem_report.c's.
 * Part of the store_memory module (store_memory_internal.h).
 */
#include <stdlib.h>

#include "base/ids.h"
#include "core/report.h"
#include "store/memory/mem_report.h"
#include "store/memory/memq.h"
#include "store/memory/store_memory_internal.h"

wr_err_t wr_store_memory__report(wr_store_t *base, const wr_store_report_req_t *req,
                                 wr_store_report_cb cb, void *arg)
{
    mstore_t *s = (mstore_t *)base;
    bool ok = cb && wr_store_valid_report(req) && (!req->queue || wr_ids_valid_queue(req->queue));
    if (s->closing || !ok)
        return wr_store_memory__report_answer(s, cb, arg, ok, WR_OK, NULL, 0);
    int64_t now_ms = wr_store_memory__wall_us(s) / 1000;
    wr_memq_t *q = req->sample ? wr_memq_db_find(&s->db, req->queue) : NULL;
    char text[WR_REPORT_SAMPLE_MAX];
    if (q) {
        wr_queue_stats_t st;
        wr_memq_sweep(q, wr_store_memory__now_us(s), &s->dirty);
        wr_memq_stats(q, &st);
        wr_report_sample_t smp = wr_store_report_sample(&st, now_ms, req->rate);
        wr_report_sample_text(&smp, text, sizeof text);
    }
    wr_store_report_pair_t *pairs = NULL;
    size_t n = 0;
    wr_err_t err = wr_mem_report_op(s->reports, req, q ? text : NULL, now_ms, &pairs, &n);
    return wr_store_memory__report_answer(s, cb, arg, true, err, pairs, n);
}
