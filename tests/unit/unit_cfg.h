/*
 * unit_cfg.h - the queue config a unit test starts from: the defaults
 * (wr_qconfig_defaults) at the rate the test names.
 *
 *   wr_queue_config_t c = cfg_rate(175);
 *   c.tick_ms = 10;
 *
 * Include it once, in the test's .c file.
 */
#ifndef WR_UNIT_CFG_H
#define WR_UNIT_CFG_H

#include "core/qconfig.h"

/* The default config but for its rate (users a second). */
static inline wr_queue_config_t cfg_rate(double rate)
{
    wr_queue_config_t c;
    wr_qconfig_defaults(&c);
    c.admit_per_second = rate;
    return c;
}

#endif
