/*
 * app_declare.h - the queues the config file declares (app_declare.c).
 */
#ifndef WR_APP_DECLARE_H
#define WR_APP_DECLARE_H

#include <event2/event.h>
#include <stdbool.h>

#include "app.h"

/* True when every declared queue had its answer (exists, created, or
 * cannot be applied). */
bool wr_app_declared_all_done(const app_t *app);

/* queues_timer's callback (arg: the app_t): sends a round for the declared
 * queues not done yet (none while one is in flight) and comes back in
 * 500 ms until every one is done. Arm it with a zero timeout to start. */
void wr_app_queues_timer_cb(evutil_socket_t fd, short what, void *arg);

/* Every declared queue is looked at again and created if absent, as at
 * start (K31: the store lost its data); answers in flight are ignored. */
void wr_app_redeclare(app_t *app);

/* Parses the queue declarations of cfg into out (WR_CONFIG_QUEUES_MAX
 * entries); false on the first that does not parse: logged as an error
 * with the prefix `when`, or printed on stderr when `when` is NULL (at
 * start, before the log). */
bool wr_app_parse_declared(const wr_config_t *cfg, wr_queue_config_t *out, const char *when);

/* The declaration of queue name in cfg, or NULL. */
const wr_config_queue_t *wr_app_find_declared(const wr_config_t *cfg, const char *name);

#endif
