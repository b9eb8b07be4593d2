/*
 * qconfig_probe.c - instruction counts of the queue config code (issue 21,
 * docs/BENCHMARKS.md "one row per queue config field"): run it under
 * callgrind, which counts instructions whatever the machine's load.
 *
 *   gcc -O2 -Isrc bench/qconfig_probe.c build/libwr_core.a build/libwr_base.a \
 *       -ljansson -lm -o /tmp/qconfig_probe
 *   valgrind --tool=callgrind --callgrind-out-file=/dev/null /tmp/qconfig_probe p 10000
 *
 * argv[1]: p = wr_qconfig_parse of a rendered config (the Redis config
 * cache's miss, without the JSON text), d = json_loadb + parse (the whole
 * decode of a stored config), r = wr_qconfig_to_json, 0 = setup only (to
 * subtract); argv[2]: iterations.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/qconfig.h"
int main(int argc, char **argv)
{
    int n = argc > 2 ? atoi(argv[2]) : 100000;
    char mode = argc > 1 ? argv[1][0] : '0';
    const char *in =
        "{\"admitPerSecond\": 175, \"capacity\": {\"connections\": 40, \"serviceMs\": 200}, "
        "\"opensAt\": 1764460800000, \"returnOrigins\": [\"https://shop.example\"], \"targetUrl\": "
        "\"https://shop.example/buy\", \"sessionSeconds\": 600}";
    json_t *j0 = json_loads(in, 0, NULL);
    wr_queue_config_t c;
    char f[80], m[256];
    if (wr_qconfig_parse(j0, &c, f, sizeof f, m, sizeof m))
        return 1;
    json_t *r = wr_qconfig_to_json(&c);
    char *s = json_dumps(r, JSON_COMPACT);
    size_t sl = strlen(s);
    long sink = 0;
    if (mode == 'p')
        for (int i = 0; i < n; i++) {
            wr_queue_config_t x;
            wr_qconfig_parse(r, &x, f, sizeof f, m, sizeof m);
            sink += x.tick_ms;
        }
    if (mode == 'd')
        for (int i = 0; i < n; i++) {
            json_t *j = json_loadb(s, sl, 0, NULL);
            wr_queue_config_t x;
            wr_qconfig_parse(j, &x, f, sizeof f, m, sizeof m);
            sink += x.tick_ms;
            json_decref(j);
        }
    if (mode == 'r')
        for (int i = 0; i < n; i++) {
            json_t *j = wr_qconfig_to_json(&c);
            sink += json_object_size(j);
            json_decref(j);
        }
    printf("%ld\n", sink);
    free(s);
    json_decref(r);
    json_decref(j0);
    return 0;
}
