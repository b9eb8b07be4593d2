/*
 * app_log.h - the public log's key and signer at start (app_log.c).
 */
#ifndef WR_APP_LOG_H
#define WR_APP_LOG_H

#include "app.h"

/* Without a store that keeps a public log: WR_EINVAL (printed) when a
 * queue of the config file has publicLog true, else WR_OK. With one: loads --log-key (or draws a
 * key to propose), asks the store for the key it keeps (store.h log_key: the first writer's),
 * starts the signer and hands it to the API. WR_OK (also for a store without a log, or one that did
 * not answer: the log routes answer 404 until a restart), WR_EINVAL (a --log-key that cannot be
 * read, or that differs from the key the store keeps: the instance must not start; printed),
 * WR_ENOMEM. */
wr_err_t wr_app_log_start(app_t *app);

#endif
