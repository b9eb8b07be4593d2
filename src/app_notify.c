/*
 * app_notify.c - systemd's notify protocol (app_notify.h): one datagram on
 * the AF_UNIX socket $NOTIFY_SOCKET names, sent from the loop at start
 * ("READY=1" once listening) and at stop ("STOPPING=1"). Kept to the few
 * lines the protocol needs instead of linking libsystemd.
 */
#include "app_notify.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/log.h"

void wr_app_notify(const char *state)
{
    const char *path = getenv("NOTIFY_SOCKET");
    if (!path || !path[0] || !state)
        return;
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    size_t n = strlen(path);
    if ((path[0] != '/' && path[0] != '@') || n >= sizeof sa.sun_path) {
        wr_warn("NOTIFY_SOCKET: not a socket path (%zu bytes); the service manager is not told", n);
        return;
    }
    memcpy(sa.sun_path, path, n);
    if (path[0] == '@')
        sa.sun_path[0] = '\0'; /* an abstract socket */
    socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa, len) < 0)
        wr_warn("NOTIFY_SOCKET %s: cannot send '%s': %s", path, state, strerror(errno));
    if (fd >= 0)
        close(fd);
}
