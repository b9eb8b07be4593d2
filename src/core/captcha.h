/*
 * captcha.h - the CAPTCHA hook's pure part (docs/API.md 1.2, "A place
 * costs work": the captcha field): the queue config object `captcha`
 * (Cloudflare Turnstile or hCaptcha: provider, site key, write-only
 * secret, verify URL, fallback policy), its parsing with errors that name
 * the member ("captcha.siteKey") and its rendering (the secret only in the
 * stores' form), the verify URL's parts, the widget script and the
 * Content-Security-Policy sources of a provider, the siteverify form body
 * and the reading of its answer.
 *
 * Both providers verify a widget's response the same way: a form POST to
 * `siteverify` with `secret`, `response` and optionally `remoteip`, and a
 * JSON answer with a boolean `success` and `error-codes`. The HTTP call
 * itself is http/api_captcha.c's (libevent's client); nothing here does
 * I/O, reads a clock or allocates except the JSON rendering.
 */
#ifndef WR_CAPTCHA_H
#define WR_CAPTCHA_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

#define WR_CAPTCHA_SITE_KEY_MAX 100 /* captcha.siteKey bytes, without NUL */
#define WR_CAPTCHA_SECRET_MAX   200 /* captcha.secret bytes, without NUL */
#define WR_CAPTCHA_URL_MAX      500 /* captcha.verifyUrl bytes, without NUL */
#define WR_CAPTCHA_RESPONSE_MAX                                                                    \
    3800                              /* a widget response (captchaResponse) bytes: the join       \
                                         body is at most 4 KiB; Turnstile's are at most 2048 */
#define WR_CAPTCHA_FALLBACK_BITS 18   /* captcha.fallbackBits' default */
#define WR_CAPTCHA_HOST_MAX      255  /* a verify URL's host, without brackets or NUL */
#define WR_CAPTCHA_ORIGIN_MAX    300  /* a verify URL's origin, without NUL */
#define WR_CAPTCHA_SCRIPT_MAX    400  /* a widget script URL, without NUL */
#define WR_CAPTCHA_CSP_MAX       200  /* the CSP sources of a provider, without NUL */
#define WR_CAPTCHA_ANSWER_MAX    8192 /* bytes of a siteverify answer read at most */
#define WR_CAPTCHA_HOSTNAME_MAX  253  /* captcha.hostname bytes, without NUL */
#define WR_CAPTCHA_FORM_MAX                                                                        \
    (3 * (WR_CAPTCHA_SECRET_MAX + WR_CAPTCHA_RESPONSE_MAX + WR_CAPTCHA_SITE_KEY_MAX + 64) + 64)
#define WR_CAPTCHA_ERROR_CODES_MAX 128 /* the error codes kept from an answer, without NUL */

typedef enum {
    WR_CAPTCHA_TURNSTILE = 0, /* "turnstile": Cloudflare Turnstile */
    WR_CAPTCHA_HCAPTCHA = 1,  /* "hcaptcha" */
} wr_captcha_provider_t;

/* What a join gets when the provider does not answer (timeout, 5xx, an
 * answer that is not its JSON): the policy of the field `fallback`. */
typedef enum {
    WR_CAPTCHA_FALLBACK_CHALLENGE = 0, /* "challenge": a proof of work instead (challengeBits, or
                                          fallbackBits when challengeBits is 0) */
    WR_CAPTCHA_FALLBACK_REFUSE = 1,    /* "refuse": 403 CHALLENGE_REQUIRED, captchaUnavailable */
} wr_captcha_fallback_t;

/*
 * The queue config's `captcha` (null = set false, the default). Plain
 * data, copied by value inside wr_queue_config_t. verify_url is always the
 * URL in use: the provider's default when none was given. Strings are
 * NUL-terminated, of printable ASCII without spaces or quotes.
 */
typedef struct {
    bool set;
    wr_captcha_provider_t provider;
    char site_key[WR_CAPTCHA_SITE_KEY_MAX + 1];
    char secret[WR_CAPTCHA_SECRET_MAX + 1]; /* write-only in the API */
    char verify_url[WR_CAPTCHA_URL_MAX + 1];
    wr_captcha_fallback_t fallback;
    uint32_t fallback_bits; /* 1..32: the proof of work of the fallback when challengeBits is 0 */
    /* the host name the widget must have been solved on (the answer's
     * `hostname`, compared without case); "" = not checked */
    char hostname[WR_CAPTCHA_HOSTNAME_MAX + 1];
} wr_captcha_config_t;

/* "turnstile" or "hcaptcha". */
const char *wr_captcha_provider_name(wr_captcha_provider_t p);

/* The provider's siteverify URL: https://challenges.cloudflare.com/turnstile/v0/siteverify
 * or https://api.hcaptcha.com/siteverify. */
const char *wr_captcha_default_verify_url(wr_captcha_provider_t p);

/*
 * Parses v, the value of `captcha` (present; null unsets it), onto *c.
 * The object's members: provider ("turnstile" | "hcaptcha", required),
 * siteKey (required), secret (required; "set" keeps the secret *c already
 * has, so what GET shows can be sent back), verifyUrl (optional, null =
 * the provider's; an https:// URL, or http:// to a loopback host only:
 * 127.0.0.0/8, [::1], localhost), fallback ("challenge" (default) |
 * "refuse"), fallbackBits (1..32, default 18), hostname (optional, null =
 * not checked; a DNS name of 1..253 letters, digits, '-' and '.', kept in
 * lower case). Unknown members are
 * refused. On error returns WR_EINVAL with the member's path
 * ("captcha.siteKey", at most field_len bytes with NUL) and a message, and
 * *c is untouched.
 */
wr_err_t wr_captcha_parse(const json_t *v, wr_captcha_config_t *c, char *field, size_t field_len,
                          char *msg, size_t msg_len);

/* Renders c: JSON null when not set, else the object with every member;
 * the secret itself only with secrets (the stores' form), else "set".
 * New reference, or NULL on allocation failure. */
json_t *wr_captcha_to_json(const wr_captcha_config_t *c, bool secrets);

/* A verify URL's parts, for the connection. */
typedef struct {
    bool https;
    /* the host without brackets: "127.0.0.1", "::1", "api.hcaptcha.com" */
    char host[WR_CAPTCHA_HOST_MAX + 1];
    uint16_t port; /* 443 / 80 when not given */
    /* from the first '/' (query included); "/" when none */
    char path[WR_CAPTCHA_URL_MAX + 1];
    char origin[WR_CAPTCHA_ORIGIN_MAX + 1]; /* canonical ("http://127.0.0.1:8080") */
    bool loopback;                          /* the host is 127.0.0.0/8, ::1 or localhost */
} wr_captcha_url_t;

/* Splits url (NUL-terminated) into *out; false when it is not an allowed
 * verify URL (the rule of wr_captcha_parse), *out then undefined. */
bool wr_captcha_url_parse(const char *url, wr_captcha_url_t *out);

/*
 * The widget script the queue page loads for c (set): the provider's
 * (https://challenges.cloudflare.com/turnstile/v0/api.js,
 * https://js.hcaptcha.com/1/api.js), or - when the verify URL is an
 * http:// loopback URL, a test's stand-in - the same path on the verify
 * URL's origin. Into buf (cap bytes); its length, or -1 when it does not
 * fit or c is not set.
 */
int wr_captcha_script_url(const wr_captcha_config_t *c, char *buf, size_t cap);

/*
 * The Content-Security-Policy sources the queue page of a queue with c
 * (set) adds, and to which directives beyond script-src and frame-src
 * (*dirs: WR_CAPTCHA_CSP_* bits), as each provider documents: Turnstile's
 * origin (https://challenges.cloudflare.com) to script-src and frame-src;
 * hCaptcha's (https://hcaptcha.com and its subdomains) also to
 * style-src and connect-src; a loopback stand-in's origin (an http://
 * loopback verify URL) also to connect-src. Writes the space-separated
 * sources to buf (cap bytes); returns the length, or -1.
 */
#define WR_CAPTCHA_CSP_STYLE   0x1u /* style-src too */
#define WR_CAPTCHA_CSP_CONNECT 0x2u /* connect-src too */
int wr_captcha_csp_sources(const wr_captcha_config_t *c, char *buf, size_t cap, unsigned *dirs);

/* Whether s (len bytes) may be sent as a widget response: 1 to
 * WR_CAPTCHA_RESPONSE_MAX printable ASCII bytes without space. */
bool wr_captcha_response_ok(const char *s, size_t len);

/*
 * The siteverify form body:
 * secret=...&response=...[&remoteip=...][&sitekey=...], each value
 * percent-encoded (application/x-www-form-urlencoded; unreserved bytes as
 * they are). remoteip or sitekey NULL or "" leaves it out (hCaptcha takes
 * the site key the response must have been solved under: its secret is
 * the account's, shared by its site keys). Into buf (cap bytes,
 * WR_CAPTCHA_FORM_MAX always fits valid values); returns the length, or
 * -1 when it does not fit.
 */
int wr_captcha_form(char *buf, size_t cap, const char *secret, const char *response,
                    const char *remoteip, const char *sitekey);

/* What a siteverify exchange said. */
typedef enum {
    WR_CAPTCHA_PASSED = 0, /* success: true */
    WR_CAPTCHA_REFUSED,    /* success: false (invalid, expired or reused response...) */
    WR_CAPTCHA_BAD_ANSWER, /* not the provider's JSON (no boolean success), or a 3xx/5xx
                              status: the provider did not answer */
} wr_captcha_verdict_t;

/*
 * Reads a siteverify answer: HTTP status and body (len bytes, not
 * NUL-terminated; at most WR_CAPTCHA_ANSWER_MAX are looked at). A 2xx or
 * 4xx status with a JSON object whose `success` is a boolean is PASSED or
 * REFUSED by it; anything else is BAD_ANSWER. A success is REFUSED all the
 * same when it is not for expect (NULL: not checked): an answer that names
 * a site key (`sitekey`) other than expect's, or, when expect has a
 * hostname, one whose `hostname` is not that name (any case; missing
 * counts as another). codes (cap bytes, may be NULL) gets the answer's
 * `error-codes` joined by ',' (cut to fit), "" when none, or
 * "sitekey-mismatch" / "hostname-mismatch".
 */
wr_captcha_verdict_t wr_captcha_verdict(int status, const char *body, size_t len,
                                        const wr_captcha_config_t *expect, char *codes, size_t cap);

#endif
