/*
 * script_reply.h - decodes what the Lua scripts of the Redis store
 * (src/store/redis/scripts/ *.lua) answer into store.h's result types. Pure: hiredis's
 * reply type only, no connection, no cache.
 *
 * Every decoder checks the reply's shape (an array of exactly the script's
 * element types, or one integer / bulk string) and the ranges of its
 * values; a reply Redis would never send for that script is WR_EPROTO.
 * The config part of an answer ({version, JSON or "" when the caller's
 * announced version is current}) is handed to the caller's resolver at the
 * point where it is needed, so the caller decides how configs are cached.
 * Replies are borrowed; results point into the caller's buffers or into the
 * reply, so they live as long as both.
 */
#ifndef WR_SCRIPT_REPLY_H
#define WR_SCRIPT_REPLY_H

#include <hiredis/hiredis.h>
#include <stdint.h>

#include "store/store.h"

/* Turns the config part of a reply into *out, a config borrowed from the
 * resolver (it lives at least until the caller's results are handed on:
 * an immutable snapshot, never a copy per answer): version as the script
 * sent it, json its bulk string (len 0 = not sent). WR_OK or WR_EPROTO. */
typedef wr_err_t (*wr_script_reply_config_fn)(void *ctx, long long version, const redisReply *json,
                                              const wr_queue_config_t **out);

/* entry.lua (join, status) and entry_group.lua: WR_OK with entry WAITING
 * (position, waiting), ADMITTED (jti, issued/expiry us) or PASSTHROUGH;
 * WR_EFULL with entry->waiting; WR_ECODE with entry->code_reason;
 * WR_ENOTFOUND; WR_ENOTINQUEUE; WR_EPROTO. On a queue with priority
 * groups, entry's group fields too. entry->config is the resolver's. */
wr_err_t wr_script_reply_entry(const redisReply *rep, wr_script_reply_config_fn resolve, void *ctx,
                               wr_entry_t *entry);

/* entry_batch.lua, the answers of n coalesced joins and statuses, read in
 * order: wr_script_reply_batch_begin() checks the whole reply ({version,
 * json, stock_left, then n answers, each its kind and the elements that kind uses, or
 * one error reply}; nothing after them) and returns WR_OK, or WR_EPROTO:
 * then no answer can be trusted. Each wr_script_reply_batch_next() then
 * decodes the next answer: the same results as wr_script_reply_entry for
 * entry.lua's reply, the reply's one config part (resolve) for each; an
 * error reply (the request raised an error in the script) is WR_EPROTO
 * with *error pointing to it (else NULL). it borrows rep. */
typedef struct {
    const redisReply *rep;
    size_t at; /* element of the next answer */
} wr_script_reply_batch_t;

wr_err_t wr_script_reply_batch_begin(wr_script_reply_batch_t *it, const redisReply *rep, size_t n);
wr_err_t wr_script_reply_batch_next(wr_script_reply_batch_t *it, const redisReply **error,
                                    wr_script_reply_config_fn resolve, void *ctx,
                                    wr_entry_t *entry);

/* admit.lua: WR_OK with *res (res->config the resolver's; res->waited_us
 * and res->pushes, when not NULL, are malloc'd and the caller frees them
 * after use; each push's user points into rep); WR_ENOTFOUND; WR_EPROTO. */
wr_err_t wr_script_reply_admit(const redisReply *rep, wr_script_reply_config_fn resolve, void *ctx,
                               wr_admit_t *res);

/* autotune.lua: WR_OK with *res; WR_ENOTFOUND (no queue); WR_EPROTO. */
wr_err_t wr_script_reply_autotune(const redisReply *rep, wr_autotune_state_rec_t *res);

/* token.lua (consume, verify) and release.lua: WR_OK (res->passthrough
 * when the queue is disabled); WR_ETOKEN with res->reason CONSUMED or
 * EXPIRED (token.lua) or NO_SESSION (release.lua, code -4); WR_ENOTFOUND;
 * WR_EPROTO. */
wr_err_t wr_script_reply_token(const redisReply *rep, wr_token_check_t *res);

/* queue_get.lua: WR_OK with info->config (the resolver's) and info->stats (the
 * caller sets info->name); WR_ENOTFOUND; WR_EPROTO. */
wr_err_t wr_script_reply_get(const redisReply *rep, wr_script_reply_config_fn resolve, void *ctx,
                             wr_queue_info_t *info);

/* leave.lua, queue_delete.lua: 0 WR_OK, -1 WR_ENOTFOUND, -3 WR_ENOTINQUEUE
 * when not_in_queue_ok (leave), else WR_EPROTO. */
wr_err_t wr_script_reply_code(const redisReply *rep, bool not_in_queue_ok);

/* config_put.lua: the new version (> 0): WR_OK; -5 (a priority group
 * that leaves the config still has people or live codes): WR_EGROUP;
 * else WR_EPROTO. */
wr_err_t wr_script_reply_put(const redisReply *rep);

/* codes.lua: WR_OK with *res (the counts per group of the config);
 * WR_ENOTFOUND (no queue), WR_EINVAL (a group not in the config, a hash
 * kept already), WR_ECODE (revoke: no such code) with *res too; WR_EPROTO. */
wr_err_t wr_script_reply_codes(const redisReply *rep, wr_store_codes_t *res);

/* secret.lua: WR_OK with *secret (points into rep) and *len (1 ..
 * WR_SECRET_MAX bytes), else WR_EPROTO. */
wr_err_t wr_script_reply_secret(const redisReply *rep, const uint8_t **secret, size_t *len);

/* secret_sync.lua: WR_OK with *res (its pointers into rep; secret present
 * exactly when with_secret), else WR_EPROTO. */
wr_err_t wr_script_reply_sync(const redisReply *rep, bool with_secret, wr_store_sync_t *res);

#endif
