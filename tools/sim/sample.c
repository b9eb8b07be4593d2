/*
 * sample.c - waitroom-sim: sampling the line and the shop every --sample-ms
 * into the run's series (one bucket per BUCKET_MS), and the progress line.
 */
#include "sim.h"

/* ---------- sampling and progress ---------- */

static void on_sample_wr(op_t *op, int code, json_t *body)
{
    sim_t *s = op->arg;
    s->sample_wr_busy = false;
    json_t *st = json_object_get(body, "stats");
    int64_t k = series_index(s, now_ms());
    if (code == 200 && st && k >= 0) {
        s->ser.waiting[k] = (int32_t)json_integer_value(json_object_get(st, "waiting"));
        s->ser.admitted_total[k] =
            (int32_t)json_integer_value(json_object_get(st, "admittedTotal"));
        s->ser.held[k] = (int32_t)json_integer_value(json_object_get(st, "held"));
        s->ser.returned[k] = (int32_t)json_integer_value(json_object_get(st, "returnedTotal"));
        json_t *sl = json_object_get(st, "stockLeft");
        if (json_is_integer(sl))
            s->ser.stock_left[k] = (int32_t)json_integer_value(sl);
        json_t *rt = json_object_get(st, "admitRateTarget");
        if (json_is_number(rt))
            s->ser.rate_target[k] = json_number_value(rt);
    }
    json_t *so = json_object_get(st, "soldOutAt");
    if (code == 200 && json_is_integer(so) && !s->sold_out_at_ms)
        s->sold_out_at_ms = json_integer_value(so);
    json_t *pq = json_object_get(st, "prequeue");
    if (code == 200 && json_is_integer(pq) && json_integer_value(pq) > s->prequeue_peak)
        s->prequeue_peak = json_integer_value(pq);
}

static void on_sample_shop(op_t *op, int code, json_t *body)
{
    sim_t *s = op->arg;
    s->sample_shop_busy = false;
    int64_t k = series_index(s, now_ms());
    if (code == 200 && body && k >= 0) {
        s->ser.shop_in_flight[k] = (int32_t)json_integer_value(json_object_get(body, "inFlight"));
        /* the shop's peak since its previous /stats: the highest of the
         * samples that land in this bucket */
        json_t *pk = json_object_get(body, "inFlightPeak");
        int32_t peak =
            json_is_integer(pk) ? (int32_t)json_integer_value(pk) : s->ser.shop_in_flight[k];
        if (peak > s->ser.shop_in_flight_peak[k])
            s->ser.shop_in_flight_peak[k] = peak;
        s->ser.shop_busy[k] = (int32_t)json_integer_value(json_object_get(body, "busy"));
        s->ser.shop_waiting[k] = (int32_t)json_integer_value(json_object_get(body, "waiting"));
    }
}

void sample_tick(evutil_socket_t fd, short what, void *arg)
{
    sim_t *s = arg;
    if (s->finishing)
        return;
    int64_t k = series_index(s, now_ms());
    if (k >= 0)
        s->ser.asleep[k] = (int32_t)s->asleep_now;
    if (!s->no_queue && !s->sample_wr_busy) {
        op_t *op = admin_op(s, EVHTTP_REQ_GET, on_sample_wr);
        s->sample_wr_busy = true;
        pool_submit(&s->statp, op);
    }
    if (!s->sample_shop_busy) {
        s->sample_shop_busy = true;
        pool_submit(&s->shopstat, op_new(EVHTTP_REQ_GET, "/stats", NULL, on_sample_shop, s));
    }
}

void progress_tick(evutil_socket_t fd, short what, void *arg)
{
    sim_t *s = arg;
    static int64_t last_line;
    bool tty = isatty(2);
    int64_t now = now_ms();
    if (!tty && now - last_line < 5000)
        return;
    last_line = now;
    double frac = s->n_users ? (double)s->done / s->n_users : 1;
    char bar[31];
    int fill = (int)(frac * 30);
    for (int i = 0; i < 30; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[30] = '\0';
    uint32_t waiting =
        s->joined - s->admitted - s->left - s->lost - s->told_sold_out - s->told_closed;
    if (s->no_queue)
        waiting = 0;
    char extra[96] = "";
    if (s->sleepers_planned > 0 || s->stock >= 0)
        snprintf(extra, sizeof(extra), " asleep %u held %u sold out %u", s->asleep_now,
                 s->users_held, s->told_sold_out);
    fprintf(stderr, "%s[%s] %3.0f%% %5.1fs joined %u waiting %u admitted %u ok %u failed %u%s%s",
            tty ? "\r" : "", bar, frac * 100, (double)(now - s->t0_ms) / 1000.0, s->joined, waiting,
            s->admitted, s->orders_ok, s->orders_failed + s->orders_refused, extra,
            tty ? "   " : "\n");
}
