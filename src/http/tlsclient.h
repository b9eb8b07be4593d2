/*
 * tlsclient.h - outgoing HTTPS through libevent's HTTP client: the client
 * TLS settings (peer verified against the system's CAs, TLS 1.2 at least)
 * and a connection whose certificate must name the URL's host. For the
 * server's own requests to third parties: the Web Push sender
 * (pushsend.c) and the API's client (api_client.c: the CAPTCHA
 * siteverify, the draw's beacon).
 */
#ifndef WR_TLSCLIENT_H
#define WR_TLSCLIENT_H

#include <event2/dns.h>
#include <event2/event.h>
#include <event2/http.h>
#include <openssl/ssl.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * A client context: SSL_VERIFY_PEER, TLS >= 1.2, released buffers, the
 * CAs of ca_file (PEM; for tests) or, when NULL, OpenSSL's default verify
 * paths (so SSL_CERT_FILE / SSL_CERT_DIR work). NULL when OpenSSL fails or
 * the CAs cannot be loaded. Free with SSL_CTX_free.
 */
SSL_CTX *wr_tlsclient_context(const char *ca_file);

/*
 * An HTTP connection over TLS to connect_host:port (a name resolved with
 * dns, or a numeric address with dns NULL: then no lookup at all) whose
 * certificate must name `name`: an IP address when name_is_ip, else a DNS
 * name, also sent as SNI. NULL on failure (nothing to free).
 */
struct evhttp_connection *wr_tlsclient_connection(struct event_base *base, struct evdns_base *dns,
                                                  SSL_CTX *ctx, const char *name, bool name_is_ip,
                                                  const char *connect_host, uint16_t port);

#endif
