/*
 * mem_report.c - the embedded store's reports (mem_report.h).
 *
 * In memory: days = {queue: {day: {"x": expire_ms, "f": {field: value}}}}
 * and index = {queue: "FIRST_MS,DELETED_MS"}. A day whose expiry passed is
 * dropped (with its file) at the next write of any report. Persistence:
 * each (queue, day) map and the index is one small JSON file under
 * DIR/reports, written (temp file, rename) when it changed, at most once
 * every few seconds (wr_mem_report_save's gap) and at close: a crash
 * loses at most that gap of report data, never the line's state (the
 * snapshot holds that). Memory: a day's map is about 60 bytes per field
 * (jansson), see docs/BENCHMARKS.md for the bound per queue per day.
 */
#include "store/memory/mem_report.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/ids.h"
#include "base/log.h"

struct wr_mem_report {
    char *dir;        /* DIR/reports, or NULL */
    json_t *days;     /* queue -> day -> {"x","f"} */
    json_t *index;    /* queue -> "first,deleted" */
    json_t *dirty;    /* "queue.day" -> true; "index" -> true */
    int64_t saved_ms; /* last save */
};

static void load_dir(wr_mem_report_t *r, int64_t now_ms)
{
    DIR *d = opendir(r->dir);
    if (!d)
        return;
    struct dirent *e;
    char path[4096];
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", r->dir, e->d_name);
        json_error_t jerr;
        json_t *j = json_load_file(path, 0, &jerr);
        if (!j || !json_is_object(j)) {
            wr_warn("reports: %s does not parse, skipped", path);
            json_decref(j);
            continue;
        }
        if (strcmp(e->d_name, "index.json") == 0) {
            json_decref(r->index);
            r->index = j;
            continue;
        }
        char name[WR_QUEUE_NAME_MAX + 32];
        snprintf(name, sizeof name, "%.*s", (int)(len - 5), e->d_name);
        char *dot = strrchr(name, '.');
        if (!dot) {
            json_decref(j);
            continue;
        }
        *dot = '\0';
        json_int_t x = json_integer_value(json_object_get(j, "x"));
        if (!wr_ids_valid_queue(name) || x <= now_ms) {
            json_decref(j);
            if (x > 0 && x <= now_ms)
                remove(path);
            continue;
        }
        json_t *q = json_object_get(r->days, name);
        if (!q) {
            q = json_object();
            json_object_set_new(r->days, name, q);
        }
        json_object_set_new(q, dot + 1, j);
    }
    closedir(d);
}

wr_mem_report_t *wr_mem_report_new(const char *dir, int64_t now_ms)
{
    wr_mem_report_t *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->days = json_object();
    r->index = json_object();
    r->dirty = json_object();
    if (dir) {
        size_t n = strlen(dir) + 16;
        r->dir = malloc(n);
        if (r->dir)
            snprintf(r->dir, n, "%s/reports", dir);
    }
    if (!r->days || !r->index || !r->dirty || (dir && !r->dir)) {
        wr_mem_report_free(r);
        return NULL;
    }
    if (r->dir)
        load_dir(r, now_ms);
    r->saved_ms = now_ms;
    return r;
}

void wr_mem_report_free(wr_mem_report_t *r)
{
    if (!r)
        return;
    if (r->dir && r->days)
        (void)wr_mem_report_save(r, 0, 0);
    json_decref(r->days);
    json_decref(r->index);
    json_decref(r->dirty);
    free(r->dir);
    free(r);
}

static void mark(wr_mem_report_t *r, const char *queue, const char *day)
{
    char key[WR_QUEUE_NAME_MAX + 32];
    snprintf(key, sizeof key, "%s.%s", queue, day);
    json_object_set_new(r->dirty, key, json_true());
}

/* Drops the days whose expiry passed (and their files). */
static void prune(wr_mem_report_t *r, int64_t now_ms)
{
    const char *qn;
    json_t *q;
    void *tmp;
    json_object_foreach_safe(r->days, tmp, qn, q)
    {
        const char *dn;
        json_t *d;
        void *tmp2;
        json_object_foreach_safe(q, tmp2, dn, d)
        {
            if (json_integer_value(json_object_get(d, "x")) > now_ms)
                continue;
            if (r->dir) {
                char path[4096];
                snprintf(path, sizeof path, "%s/%s.%s.json", r->dir, qn, dn);
                remove(path);
            }
            json_object_del(q, dn);
        }
        if (json_object_size(q) == 0)
            json_object_del(r->days, qn);
    }
}

wr_err_t wr_mem_report_write(wr_mem_report_t *r, const wr_store_report_req_t *req,
                             const char *sample_text, int64_t now_ms)
{
    char dn[32];
    snprintf(dn, sizeof dn, "%lld", (long long)req->day);
    prune(r, now_ms);
    json_t *q = json_object_get(r->days, req->queue);
    if (!q) {
        q = json_object();
        if (!q || json_object_set_new(r->days, req->queue, q) != 0)
            return WR_ENOMEM;
    }
    json_t *d = json_object_get(q, dn);
    if (!d) {
        d = json_pack("{s:I,s:{}}", "x", (json_int_t)req->expire_at_ms, "f");
        if (!d || json_object_set_new(q, dn, d) != 0)
            return WR_ENOMEM;
    }
    json_object_set_new(d, "x", json_integer((json_int_t)req->expire_at_ms));
    json_t *f = json_object_get(d, "f");
    if (sample_text && req->sample && (req->sample[0] == 'e' || !json_object_get(f, req->sample)))
        json_object_set_new(f, req->sample, json_string(sample_text));
    for (size_t i = 0; i < req->n_adds; i++) {
        json_t *v = json_object_get(f, req->adds[i].field);
        json_int_t cur = json_is_integer(v) ? json_integer_value(v) : 0;
        json_object_set_new(f, req->adds[i].field, json_integer(cur + req->adds[i].n));
    }
    mark(r, req->queue, dn);
    return WR_OK;
}

json_t *wr_mem_report_day(wr_mem_report_t *r, const char *queue, int64_t day)
{
    char dn[32];
    snprintf(dn, sizeof dn, "%lld", (long long)day);
    return json_object_get(json_object_get(json_object_get(r->days, queue), dn), "f");
}

json_t *wr_mem_report_index(wr_mem_report_t *r, const wr_store_report_req_t *req)
{
    if (req->queue && !req->lookup) {
        long long first = req->first_ms;
        const char *cur = json_string_value(json_object_get(r->index, req->queue));
        if (cur)
            sscanf(cur, "%lld,", &first);
        char v[64];
        snprintf(v, sizeof v, "%lld,%lld", first, (long long)req->deleted_ms);
        json_object_set_new(r->index, req->queue, json_string(v));
        json_object_set_new(r->dirty, "index", json_true());
    }
    return r->index;
}

/* Writes j to DIR/name atomically. */
static wr_err_t write_file(const wr_mem_report_t *r, const char *name, const json_t *j)
{
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/%s", r->dir, name);
    snprintf(tmp, sizeof tmp, "%s/.%s.tmp", r->dir, name);
    if (json_dump_file(j, tmp, JSON_COMPACT) != 0 || rename(tmp, path) != 0) {
        wr_warn("reports: cannot write %s: %s", path, strerror(errno));
        remove(tmp);
        return WR_EIO;
    }
    return WR_OK;
}

wr_err_t wr_mem_report_save(wr_mem_report_t *r, int64_t now_ms, int64_t min_gap_ms)
{
    if (!r->dir || json_object_size(r->dirty) == 0)
        return WR_OK;
    if (min_gap_ms > 0 && now_ms - r->saved_ms < min_gap_ms)
        return WR_OK;
    r->saved_ms = now_ms;
    if (mkdir(r->dir, 0700) != 0 && errno != EEXIST) {
        wr_warn("reports: cannot make %s: %s", r->dir, strerror(errno));
        return WR_EIO;
    }
    wr_err_t err = WR_OK;
    const char *key;
    json_t *v;
    json_object_foreach(r->dirty, key, v)
    {
        (void)v;
        char name[WR_QUEUE_NAME_MAX + 48];
        if (strcmp(key, "index") == 0) {
            if (write_file(r, "index.json", r->index) != WR_OK)
                err = WR_EIO;
            continue;
        }
        char qn[WR_QUEUE_NAME_MAX + 32];
        snprintf(qn, sizeof qn, "%s", key);
        char *dot = strrchr(qn, '.');
        if (!dot)
            continue;
        *dot = '\0';
        json_t *d = json_object_get(json_object_get(r->days, qn), dot + 1);
        if (!d)
            continue;
        snprintf(name, sizeof name, "%s.json", key);
        if (write_file(r, name, d) != WR_OK)
            err = WR_EIO;
    }
    json_object_clear(r->dirty);
    return err;
}

/* The pairs of object o (string or integer values) in one allocation. */
static wr_err_t pairs_of(const json_t *o, wr_store_report_pair_t **out, size_t *n)
{
    size_t cnt = json_object_size(o), bytes = 0;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)o, key, v)
    {
        bytes += strlen(key) + 1 + (json_is_string(v) ? strlen(json_string_value(v)) : 24) + 1;
    }
    wr_store_report_pair_t *p = malloc((cnt ? cnt : 1) * sizeof *p + bytes + 1);
    if (!p)
        return WR_ENOMEM;
    char *s = (char *)(p + (cnt ? cnt : 1));
    size_t i = 0;
    json_object_foreach((json_t *)o, key, v)
    {
        p[i].key = s;
        s += sprintf(s, "%s", key) + 1;
        p[i].value = s;
        if (json_is_string(v))
            s += sprintf(s, "%s", json_string_value(v)) + 1;
        else
            s += sprintf(s, "%lld", (long long)json_integer_value(v)) + 1;
        i++;
    }
    *out = p;
    *n = i;
    return WR_OK;
}

wr_err_t wr_mem_report_op(wr_mem_report_t *r, const wr_store_report_req_t *req,
                          const char *sample_text, int64_t now_ms, wr_store_report_pair_t **pairs,
                          size_t *n)
{
    *pairs = NULL;
    *n = 0;
    switch (req->kind) {
    case WR_STORE_REPORT_WRITE: {
        wr_err_t err = wr_mem_report_write(r, req, sample_text, now_ms);
        if (err != WR_OK)
            return err;
        (void)wr_mem_report_save(r, now_ms, 5000);
        if (!req->sample)
            return WR_OK;
        json_t *o = json_pack("{s:s}", "exists", sample_text ? "1" : "0");
        err = o ? pairs_of(o, pairs, n) : WR_ENOMEM;
        json_decref(o);
        return err;
    }
    case WR_STORE_REPORT_READ: {
        json_t *d = wr_mem_report_day(r, req->queue, req->day);
        json_t *empty = d ? NULL : json_object();
        wr_err_t err = pairs_of(d ? d : empty, pairs, n);
        json_decref(empty);
        return err;
    }
    case WR_STORE_REPORT_INDEX: {
        json_t *all = wr_mem_report_index(r, req);
        if (!req->queue)
            return pairs_of(all, pairs, n);
        json_t *one = json_object(); /* a lookup's entry; nothing after an update */
        json_t *e = req->lookup ? json_object_get(all, req->queue) : NULL;
        if (!one || (e && json_object_set(one, req->queue, e) != 0)) {
            json_decref(one);
            return WR_ENOMEM;
        }
        wr_err_t err = pairs_of(one, pairs, n);
        json_decref(one);
        return err;
    }
    }
    return WR_EINVAL;
}
