/*
 * test_pushaddr.c - where a Web Push may go: the endpoint grammar (table),
 * the allow list, the URL checks (scheme, port, IP literals) and the
 * address rule for every refused range of "Push, safely" with its edges
 * (the first and last address of each range refused, the neighbours
 * outside it allowed), IPv6 forms that embed an IPv4.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/pushaddr.h"
#include "unit_main.h"

static void test_parse(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        int ok;
        bool https;
        const char *host;
        unsigned port;
        const char *origin, *authority, *target;
    } rows[] = {
        {"https://fcm.googleapis.com/fcm/send/abc:def", 1, true, "fcm.googleapis.com", 443,
         "https://fcm.googleapis.com", "fcm.googleapis.com", "/fcm/send/abc:def"},
        {"HTTPS://Push.Example.NET:443/w/?token=x", 1, true, "push.example.net", 443,
         "https://push.example.net", "push.example.net", "/w/?token=x"},
        {"https://push.example.net:8443", 1, true, "push.example.net", 8443,
         "https://push.example.net:8443", "push.example.net:8443", "/"},
        {"https://push.example.net?x=1", 1, true, "push.example.net", 443,
         "https://push.example.net", "push.example.net", "/?x=1"},
        {"http://127.0.0.1:8080/p/1", 1, false, "127.0.0.1", 8080, "http://127.0.0.1:8080",
         "127.0.0.1:8080", "/p/1"},
        {"http://push.test/p", 1, false, "push.test", 80, "http://push.test", "push.test", "/p"},
        {"https://[2001:DB8::1]:8443/x", 1, true, "2001:db8::1", 8443, "https://[2001:db8::1]:8443",
         "[2001:db8::1]:8443", "/x"},
        {"https://[::1]/x", 1, true, "::1", 443, "https://[::1]", "[::1]", "/x"},
        {"ftp://push.example.net/", 0, false, NULL, 0, NULL, NULL, NULL},
        {"https:/push.example.net/", 0, false, NULL, 0, NULL, NULL, NULL},
        {"//push.example.net/", 0, false, NULL, 0, NULL, NULL, NULL},
        {"https://", 0, false, NULL, 0, NULL, NULL, NULL},
        {"https:///x", 0, false, NULL, 0, NULL, NULL, NULL},
        {"https://user@push.example.net/", 0, false, NULL, 0, NULL, NULL, NULL},
        {"https://push.example.net:0/", 0, false, NULL, 0, NULL, NULL, NULL},
        {"https://push.example.net:65536/", 0, false, NULL, 0, NULL, NULL, NULL},
        {"https://push.example.net:08/", 0, false, NULL, 0, NULL, NULL, NULL},
        {"https://push.example.net:/", 0, false, NULL, 0, NULL, NULL, NULL},
        {"https://push.example.net/a b", 0, false, NULL, 0, NULL, NULL, NULL},
        {"https://push.example.net/#frag", 0, false, NULL, 0, NULL, NULL, NULL},
        {"https://push.example.net/a\\b", 0, false, NULL, 0, NULL, NULL, NULL},
        {"https://push..example.net/", 0, false, NULL, 0, NULL, NULL, NULL},
        {"https://.example.net/", 0, false, NULL, 0, NULL, NULL, NULL},
        {"https://p%75sh.example.net/", 0, false, NULL, 0, NULL, NULL, NULL},
        {"https://127.1/", 0, false, NULL, 0, NULL, NULL, NULL},
        {"https://2130706433/", 0, false, NULL, 0, NULL, NULL, NULL},
        {"https://0x7f.0.0.1/", 0, false, NULL, 0, NULL, NULL, NULL},
        {"https://1.2.3.4./", 0, false, NULL, 0, NULL, NULL, NULL},
        {"https://[fe80::1%25eth0]/", 0, false, NULL, 0, NULL, NULL, NULL},
        {"https://[::1/", 0, false, NULL, 0, NULL, NULL, NULL},
        {"https://ex\xc3\xa4mple.net/", 0, false, NULL, 0, NULL, NULL, NULL},
        {"", 0, false, NULL, 0, NULL, NULL, NULL},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        wr_pushaddr_url_t u;
        wr_err_t e = wr_pushaddr_parse(rows[i].in, &u);
        if ((e == WR_OK) != rows[i].ok)
            fail_msg("row %zu (%s): got %d", i, rows[i].in, e);
        if (!rows[i].ok)
            continue;
        assert_int_equal(u.https, rows[i].https);
        assert_string_equal(u.host, rows[i].host);
        assert_int_equal(u.port, rows[i].port);
        assert_string_equal(u.origin, rows[i].origin);
        assert_string_equal(u.authority, rows[i].authority);
        assert_string_equal(u.target, rows[i].target);
    }
    /* the length limit: 1,024 bytes pass, 1,025 do not */
    char longu[WR_PUSHADDR_ENDPOINT_MAX + 2];
    memset(longu, 'a', sizeof longu);
    memcpy(longu, "https://p.example/", 18);
    longu[WR_PUSHADDR_ENDPOINT_MAX] = '\0';
    wr_pushaddr_url_t u;
    assert_int_equal(wr_pushaddr_parse(longu, &u), WR_OK);
    longu[WR_PUSHADDR_ENDPOINT_MAX] = 'a';
    longu[WR_PUSHADDR_ENDPOINT_MAX + 1] = '\0';
    assert_int_equal(wr_pushaddr_parse(longu, &u), WR_EINVAL);
    assert_int_equal(wr_pushaddr_parse(NULL, &u), WR_EINVAL);
}

static int addr_of(const char *s, uint8_t *a)
{
    if (inet_pton(AF_INET, s, a) == 1)
        return 4;
    assert_int_equal(inet_pton(AF_INET6, s, a), 1);
    return 6;
}

static void test_address_rule(void **state)
{
    (void)state;
    static const struct {
        const char *addr;
        const char *why; /* NULL: allowed */
    } rows[] = {
        /* IPv4: each refused range's edges, and its neighbours */
        {"0.0.0.0", "unspecified"},
        {"0.255.255.255", "unspecified"},
        {"1.0.0.0", NULL},
        {"9.255.255.255", NULL},
        {"10.0.0.0", "private"},
        {"10.255.255.255", "private"},
        {"11.0.0.0", NULL},
        {"100.63.255.255", NULL},
        {"100.64.0.0", "shared"},
        {"100.127.255.255", "shared"},
        {"100.128.0.0", NULL},
        {"126.255.255.255", NULL},
        {"127.0.0.1", "loopback"},
        {"127.255.255.255", "loopback"},
        {"128.0.0.0", NULL},
        {"169.253.255.255", NULL},
        {"169.254.0.0", "linkLocal"},
        {"169.254.169.254", "linkLocal"},
        {"169.255.0.0", NULL},
        {"172.15.255.255", NULL},
        {"172.16.0.0", "private"},
        {"172.31.255.255", "private"},
        {"172.32.0.0", NULL},
        {"191.255.255.255", NULL},
        {"192.0.0.0", "ietfProtocol"},
        {"192.0.0.255", "ietfProtocol"},
        {"192.0.1.0", NULL},
        {"192.167.255.255", NULL},
        {"192.168.0.0", "private"},
        {"192.168.255.255", "private"},
        {"192.169.0.0", NULL},
        {"198.17.255.255", NULL},
        {"198.18.0.0", "benchmark"},
        {"198.19.255.255", "benchmark"},
        {"198.20.0.0", NULL},
        {"223.255.255.255", NULL},
        {"224.0.0.0", "multicast"},
        {"239.255.255.255", "multicast"},
        {"240.0.0.0", "reserved"},
        {"255.255.255.255", "reserved"},
        {"8.8.8.8", NULL},
        {"142.250.74.10", NULL},
        /* IPv6 */
        {"::", "unspecified"},
        {"::1", "loopback"},
        {"::2", "embeddedV4"}, /* ::0.0.0.2 */
        {"2001:4860:4860::8888", NULL},
        {"2a00:1450:4001::200e", NULL},
        {"fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", NULL},
        {"fc00::", "uniqueLocal"},
        {"fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "uniqueLocal"},
        {"fe00::", NULL},
        {"fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", NULL},
        {"fe80::", "linkLocal"},
        {"febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "linkLocal"},
        {"fec0::", NULL},
        {"ff00::", "multicast"},
        {"ff02::1", "multicast"},
        /* forms that embed an IPv4: refused exactly when it is */
        {"::ffff:127.0.0.1", "embeddedV4"},
        {"::ffff:10.1.2.3", "embeddedV4"},
        {"::ffff:169.254.169.254", "embeddedV4"},
        {"::ffff:8.8.8.8", NULL},
        {"64:ff9b::7f00:1", "embeddedV4"},
        {"64:ff9b::c0a8:101", "embeddedV4"},
        {"64:ff9b::808:808", NULL},
        {"2002:7f00:1::", "embeddedV4"},
        {"2002:a00:1::1", "embeddedV4"},
        {"2002:c612:1::", "embeddedV4"},
        {"2002:808:808::1", NULL},
        {"::127.0.0.1", "embeddedV4"},
        {"::8.8.8.8", NULL},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        uint8_t a[16];
        int fam = addr_of(rows[i].addr, a);
        const char *why = wr_pushaddr_refused(fam, a);
        if ((why == NULL) != (rows[i].why == NULL) || (why && strcmp(why, rows[i].why) != 0))
            fail_msg("%s: got %s, want %s", rows[i].addr, why ? why : "allowed",
                     rows[i].why ? rows[i].why : "allowed");
    }
    uint8_t a[16] = {0};
    assert_string_equal(wr_pushaddr_refused(5, a), "family");
    assert_string_equal(wr_pushaddr_refused(4, NULL), "family");
}

static void test_allow_and_checks(void **state)
{
    (void)state;
    wr_pushaddr_allow_t al;
    memset(&al, 0, sizeof al);
    assert_int_equal(wr_pushaddr_allow_add(&al, "127.0.0.1:8080"), WR_OK);
    assert_int_equal(wr_pushaddr_allow_add(&al, "Push.Test"), WR_OK);
    assert_int_equal(wr_pushaddr_allow_add(&al, "[::1]:8443"), WR_OK);
    assert_int_equal(wr_pushaddr_allow_add(&al, "fd00::5"), WR_OK);
    assert_int_equal(al.n, 4);
    assert_string_equal(al.e[1].host, "push.test");
    assert_int_equal(al.e[1].port, 0);
    assert_string_equal(al.e[2].host, "::1");
    assert_int_equal(al.e[2].port, 8443);
    assert_string_equal(al.e[3].host, "fd00::5");
    static const char *bad[] = {"",     ":80",    "host:",     "host:0", "host:70000", "a b",
                                "[::1", "[::1]:", "user@host", "127.1",  "http://host"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (wr_pushaddr_allow_add(&al, bad[i]) != WR_EINVAL)
            fail_msg("allow %s accepted", bad[i]);
    assert_int_equal(al.n, 4);

    static const struct {
        const char *url;
        wr_pushaddr_verdict_t want;
    } rows[] = {
        {"https://fcm.googleapis.com/x", WR_PUSHADDR_OK},
        {"http://fcm.googleapis.com/x", WR_PUSHADDR_SCHEME},
        {"https://fcm.googleapis.com:8443/x", WR_PUSHADDR_PORT},
        {"https://fcm.googleapis.com:443/x", WR_PUSHADDR_OK},
        {"https://10.0.0.1/x", WR_PUSHADDR_ADDRESS},
        {"https://[::ffff:7f00:1]/x", WR_PUSHADDR_ADDRESS},
        {"https://8.8.8.8/x", WR_PUSHADDR_OK},
        {"http://127.0.0.1:8080/x", WR_PUSHADDR_OK},     /* listed with its port */
        {"https://127.0.0.1:8080/x", WR_PUSHADDR_OK},    /* the port is listed */
        {"http://127.0.0.1:8081/x", WR_PUSHADDR_SCHEME}, /* another port: not listed */
        {"https://127.0.0.1/x", WR_PUSHADDR_ADDRESS},
        {"http://push.test/x", WR_PUSHADDR_OK},  /* listed without port: 80 for http */
        {"https://push.test/x", WR_PUSHADDR_OK}, /* and 443 for https */
        {"https://push.test:9000/x", WR_PUSHADDR_PORT},
        {"http://[::1]:8443/x", WR_PUSHADDR_OK},
        {"https://[fd00::5]/x", WR_PUSHADDR_OK},
        {"https://[fd00::6]/x", WR_PUSHADDR_ADDRESS},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        wr_pushaddr_url_t u;
        assert_int_equal(wr_pushaddr_parse(rows[i].url, &u), WR_OK);
        wr_pushaddr_verdict_t v = wr_pushaddr_check_url(&al, &u);
        if (v != rows[i].want)
            fail_msg("%s: got %s, want %s", rows[i].url, wr_pushaddr_verdict_name(v),
                     wr_pushaddr_verdict_name(rows[i].want));
    }
    /* the resolved addresses: a listed host passes with any, another not */
    uint8_t lo[4] = {127, 0, 0, 1}, pub[4] = {8, 8, 4, 4}, rfc1918[4] = {192, 168, 1, 1};
    wr_pushaddr_url_t u;
    assert_int_equal(wr_pushaddr_parse("http://push.test/x", &u), WR_OK);
    assert_int_equal(wr_pushaddr_check_ip(&al, &u, 4, lo), WR_PUSHADDR_OK);
    assert_int_equal(wr_pushaddr_parse("https://push.example.net/x", &u), WR_OK);
    assert_int_equal(wr_pushaddr_check_ip(&al, &u, 4, pub), WR_PUSHADDR_OK);
    assert_int_equal(wr_pushaddr_check_ip(&al, &u, 4, lo), WR_PUSHADDR_ADDRESS);
    assert_int_equal(wr_pushaddr_check_ip(&al, &u, 4, rfc1918), WR_PUSHADDR_ADDRESS);
    assert_int_equal(wr_pushaddr_check_ip(NULL, &u, 4, pub), WR_PUSHADDR_OK);
    assert_int_equal(wr_pushaddr_parse("https://push.example.net:444/x", &u), WR_OK);
    assert_int_equal(wr_pushaddr_check_ip(NULL, &u, 4, pub), WR_PUSHADDR_PORT);

    /* the list is bounded */
    wr_pushaddr_allow_t full;
    memset(&full, 0, sizeof full);
    for (int i = 0; i < WR_PUSHADDR_ALLOW_MAX; i++)
        assert_int_equal(wr_pushaddr_allow_add(&full, "h.test"), WR_OK);
    assert_int_equal(wr_pushaddr_allow_add(&full, "h.test"), WR_ELIMIT);
}

#define TESTS(X)                                                                                   \
    X(test_parse)                                                                                  \
    X(test_address_rule)                                                                           \
    X(test_allow_and_checks)
WR_UNIT_MAIN(NULL, NULL, TESTS)
