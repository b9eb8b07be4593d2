/*
 * redis_conn_cmd.c - a command of redis_conn (redis_conn.h): its one
 * allocation (argv, lengths and argument bytes), the arguments appended to
 * it, what the router reads of it (its key, age, redirects), the deep copy
 * of a reply that a WAIT holds, and the text of a script as it is sent
 * (its prefix files, then the script). The connection's life, sending and
 * replies are redis_conn.c's.
 */
#include "store/redis/redis_conn.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/embed.h"
#include "base/strbuf.h"
#include "store/redis/redis_conn_internal.h"

/* ---------------------------------------------------------------- replies */

/* Frees a reply built by reply_copy (not by hiredis). */
void wr_redis_conn__reply_free(redisReply *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->elements && r->element; i++)
        wr_redis_conn__reply_free(r->element[i]);
    free(r->element);
    free(r->str);
    free(r);
}

/* Deep copy of a hiredis reply (type, integer, string, elements), or NULL
 * on allocation failure or nesting deeper than 4 (our scripts answer flat
 * arrays). */
redisReply *wr_redis_conn__reply_copy(const redisReply *src, int depth)
{
    if (!src || depth > 4)
        return NULL;
    redisReply *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->type = src->type;
    r->integer = src->integer;
    if (src->str) {
        r->str = malloc(src->len + 1);
        if (!r->str)
            goto fail;
        memcpy(r->str, src->str, src->len);
        r->str[src->len] = '\0';
        r->len = src->len;
    }
    if (src->type == REDIS_REPLY_ARRAY && src->elements > 0) {
        r->element = calloc(src->elements, sizeof *r->element);
        if (!r->element)
            goto fail;
        r->elements = src->elements;
        for (size_t i = 0; i < src->elements; i++) {
            if (src->element[i] &&
                !(r->element[i] = wr_redis_conn__reply_copy(src->element[i], depth + 1)))
                goto fail;
        }
    }
    return r;
fail:
    wr_redis_conn__reply_free(r);
    return NULL;
}

/* ------------------------------------------------------------- commands */

/* Freed commands kept for reuse, up to KEEP_CMDS of at most KEEP_BYTES
 * each: a command is one allocation of 1-2 KB for a poll's batch, past
 * glibc's thread cache, so each malloc went through _int_malloc and
 * consolidated the fast bins the replies had filled (about 4,000
 * instructions a poll). Any kept one at least as large is reused (the
 * layout is redone). One loop, one thread, as the module. */
#define KEEP_CMDS  16
#define KEEP_BYTES (16 * 1024)
static wr_redis_conn_cmd_t *kept[KEEP_CMDS];
static int n_kept;

static wr_redis_conn_cmd_t *cmd_alloc(size_t bytes)
{
    for (int i = n_kept - 1; i >= 0; i--) {
        if (kept[i]->alloc >= bytes) {
            wr_redis_conn_cmd_t *cmd = kept[i];
            kept[i] = kept[--n_kept];
            return cmd;
        }
    }
    wr_redis_conn_cmd_t *cmd = malloc(bytes);
    if (cmd)
        cmd->alloc = bytes;
    return cmd;
}

size_t wr_redis_conn_cmd_kept(void)
{
    return (size_t)n_kept;
}

wr_redis_conn_cmd_t *wr_redis_conn_cmd_new_args(int script, int max_args, size_t cap)
{
    if (max_args < 3 || max_args > WR_REDIS_CONN_MAX_ARGS_CAP)
        return NULL;
    size_t n = (size_t)max_args;
    /* only the header zeroed: argc says which arguments are set (a poll's
     * batch asks for about 1 KB it mostly never uses) */
    wr_redis_conn_cmd_t *cmd =
        cmd_alloc(sizeof *cmd + n * (sizeof *cmd->argv + sizeof *cmd->argvlen) + cap);
    if (!cmd)
        return NULL;
    size_t alloc = cmd->alloc;
    memset(cmd, 0, sizeof *cmd);
    cmd->alloc = alloc;
    cmd->argv = (const char **)(cmd + 1);
    cmd->argvlen = (size_t *)(cmd->argv + n);
    cmd->buf = (char *)(cmd->argvlen + n);
    cmd->max_args = max_args;
    cmd->buf_cap = cap;
    cmd->script = script;
    if (script != WR_REDIS_CONN_NO_SCRIPT)
        cmd->argc = 2; /* EVALSHA sha | EVAL text: filled at send time */
    return cmd;
}

wr_redis_conn_cmd_t *wr_redis_conn_cmd_new(int script, size_t cap)
{
    return wr_redis_conn_cmd_new_args(script, WR_REDIS_CONN_MAX_ARGS, cap);
}

void wr_redis_conn_cmd_free(wr_redis_conn_cmd_t *cmd)
{
    if (!cmd)
        return;
    wr_redis_conn__reply_free(cmd->held);
    if (n_kept < KEEP_CMDS && cmd->alloc <= KEEP_BYTES)
        kept[n_kept++] = cmd;
    else
        free(cmd);
}

void wr_redis_conn_cmd_clear_kept(void)
{
    while (n_kept > 0)
        free(kept[--n_kept]);
}

bool wr_redis_conn_cmd_arg(wr_redis_conn_cmd_t *cmd, const void *p, size_t n)
{
    if (cmd->argc >= cmd->max_args || cmd->buf_cap - cmd->buf_used < n + 1)
        return false;
    char *dst = cmd->buf + cmd->buf_used;
    memcpy(dst, p, n);
    dst[n] = '\0';
    cmd->argv[cmd->argc] = dst;
    cmd->argvlen[cmd->argc] = n;
    cmd->argc++;
    cmd->buf_used += n + 1;
    return true;
}

bool wr_redis_conn_cmd_str(wr_redis_conn_cmd_t *cmd, const char *s)
{
    return wr_redis_conn_cmd_arg(cmd, s, strlen(s));
}

bool wr_redis_conn_cmd_u64(wr_redis_conn_cmd_t *cmd, uint64_t v)
{
    char tmp[24];
    wr_strbuf_t b = wr_strbuf_init(tmp, sizeof tmp);
    wr_strbuf_u64(&b, v);
    return wr_strbuf_ok(&b) && wr_redis_conn_cmd_arg(cmd, tmp, b.n);
}

bool wr_redis_conn_cmd_cat(wr_redis_conn_cmd_t *cmd, const char *a, const char *b, const char *c)
{
    char tmp[256];
    wr_strbuf_t sb = wr_strbuf_init(tmp, sizeof tmp);
    wr_strbuf_str(&sb, a);
    if (b)
        wr_strbuf_str(&sb, b);
    if (c)
        wr_strbuf_str(&sb, c);
    return wr_strbuf_ok(&sb) && wr_redis_conn_cmd_arg(cmd, tmp, sb.n);
}

bool wr_redis_conn_cmd_block(wr_redis_conn_cmd_t *cmd, const char *bytes, const size_t *lens, int n)
{
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += lens[i] + 1;
    if (n < 0 || cmd->max_args - cmd->argc < n || cmd->buf_cap - cmd->buf_used < total)
        return false;
    char *dst = cmd->buf + cmd->buf_used;
    memcpy(dst, bytes, total);
    for (int i = 0; i < n; i++) {
        cmd->argv[cmd->argc] = dst;
        cmd->argvlen[cmd->argc] = lens[i];
        cmd->argc++;
        dst += lens[i] + 1;
    }
    cmd->buf_used += total;
    return true;
}

bool wr_redis_conn_cmd_fmt(wr_redis_conn_cmd_t *cmd, const char *fmt, ...)
{
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof tmp)
        return false;
    return wr_redis_conn_cmd_arg(cmd, tmp, (size_t)n);
}

const char *wr_redis_conn_cmd_key(const wr_redis_conn_cmd_t *cmd, size_t *len)
{
    /* a script: EVALSHA sha numkeys KEYS...; a plain command: NAME KEY ... */
    int at = cmd->script != WR_REDIS_CONN_NO_SCRIPT ? 3 : 1;
    if (cmd->script != WR_REDIS_CONN_NO_SCRIPT &&
        (cmd->argc < 3 || (cmd->argvlen[2] == 1 && cmd->argv[2][0] == '0')))
        at = cmd->argc; /* numkeys 0 */
    if (at >= cmd->argc) {
        *len = 0;
        return NULL;
    }
    *len = cmd->argvlen[at];
    return cmd->argv[at];
}

int64_t wr_redis_conn_cmd_born_ms(const wr_redis_conn_cmd_t *cmd)
{
    return cmd->born_ms;
}

int wr_redis_conn_cmd_redirects(const wr_redis_conn_cmd_t *cmd)
{
    return cmd->redirects;
}

char *wr_redis_conn_script_text(const wr_redis_conn_script_t *def, size_t *len)
{
    enum { NPART = WR_REDIS_CONN_SCRIPT_PREFIX + 1 };
    const wr_embed_file_t *parts[NPART] = {NULL};
    size_t n = 0;
    for (int i = 0; i < NPART; i++) {
        const char *name = i < NPART - 1 ? def->prefix[i] : def->file;
        if (!name)
            continue;
        if (!(parts[i] = wr_embed_find(name)))
            return NULL;
        n += parts[i]->len + 1;
    }
    char *text = malloc(n + 1);
    if (!text)
        return NULL;
    size_t at = 0;
    for (int i = 0; i < NPART; i++) {
        if (!parts[i])
            continue;
        memcpy(text + at, parts[i]->data, parts[i]->len);
        at += parts[i]->len;
        if (i < NPART - 1)
            text[at++] = '\n';
    }
    text[at] = '\0';
    *len = at;
    return text;
}
