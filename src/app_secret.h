/*
 * app_secret.h - the token secret kept in the store (app_secret.c).
 */
#ifndef WR_APP_SECRET_H
#define WR_APP_SECRET_H

#include <event2/event.h>

#include "app.h"

/* secret_timer's callback (arg: the app_t): asks the store for the shared
 * token secret (proposing app->proposed_secret), installs it in the API
 * when it answers, else comes back later. Arm it with a zero timeout. */
void wr_app_secret_timer_cb(evutil_socket_t fd, short what, void *arg);

/* sync_timer's callback (arg: the app_t), once a second: secret_sync with
 * a fresh epoch marker (K31); a store found emptied has its declared
 * queues written back and its secrets adopted (see app_secret.c). */
void wr_app_sync_timer_cb(evutil_socket_t fd, short what, void *arg);

#endif
