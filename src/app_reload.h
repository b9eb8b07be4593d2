/*
 * app_reload.h - SIGHUP: the configuration loaded again and applied
 * (app_reload.c).
 */
#ifndef WR_APP_RELOAD_H
#define WR_APP_RELOAD_H

#include "app.h"

/* Loads the config again from app's flags, file and environment; applies
 * what can change without a restart and syncs the declared queues, or logs
 * (error) why nothing changed. Runs on the loop, one at a time. */
void wr_app_reload(app_t *app);

#endif
