/*
 * app_notify.h - telling the service manager how the start went
 * (systemd's notify protocol, without libsystemd): the unit is
 * Type=notify, so `systemctl start` returns, and `systemctl reload` may
 * send its SIGHUP, only once waitroomd listens (K43: a reload right after
 * the start used to arrive while the dynamic loader ran, before any of
 * waitroomd's own code could block it).
 */
#ifndef WR_APP_NOTIFY_H
#define WR_APP_NOTIFY_H

/* Sends state ("READY=1", "STOPPING=1", ...; newline-separated
 * assignments) to the socket $NOTIFY_SOCKET names (a path, or "@name" for
 * an abstract socket), as one datagram. No-op without the variable; a
 * failure is logged (warn) and otherwise ignored. */
void wr_app_notify(const char *state);

#endif
