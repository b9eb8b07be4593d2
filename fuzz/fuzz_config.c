/*
 * fuzz_config.c - libFuzzer target: the INI config file
 * (wr_config_load_file through libinih), written to a temporary file per
 * input. Every declared queue's fields are then parsed as the server does
 * at start (wr_qconfig_parse).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64];
    if (!path[0])
        snprintf(path, sizeof(path), "/tmp/wr-fuzz-config-%d.ini", (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    static wr_config_t cfg;
    char err[512] = "";
    wr_config_defaults(&cfg);
    if (wr_config_load_file(&cfg, path, err, sizeof(err)) == WR_OK) {
        for (size_t i = 0; i < cfg.n_queues; i++) {
            wr_queue_config_t q;
            char field[WR_FIELD_MAX + 1], msg[256];
            (void)wr_qconfig_parse(cfg.queues[i].fields, &q, field, sizeof(field), msg,
                                   sizeof(msg));
        }
    } else if (err[0] == '\0') {
        abort(); /* an error always says what is wrong */
    }
    wr_config_free(&cfg);
    return 0;
}
