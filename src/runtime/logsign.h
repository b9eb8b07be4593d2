/*
 * logsign.h - the public log's checkpoint signer (docs/API.md 1.3, "A
 * line anyone can check", "Checkpoints"): the log key (an Ed25519 seed,
 * --log-key or the one kept in the store) and name (--log-name), the
 * verifier key text, and a timer that once a second signs the tree head
 * of every log with leaves no checkpoint covers (store.h log_unsigned,
 * log_head, log_publish), so a checkpoint follows an append within about
 * a second and each queue is signed at most once a second. The store
 * keeps only a checkpoint whose size is not below the kept one and whose
 * root is the root of that many of its leaves: nothing smaller or forked
 * is ever published. A log the store finds shorter than its checkpoint,
 * or not giving its root, is not signed again: logged (error) and counted
 * (waitroom_log_broken_total).
 *
 * One signer per instance. The embedded store is one process; a store
 * shared by several instances would need the signing to be leased to one
 * of them (not needed yet: only the embedded store keeps a log).
 */
#ifndef WR_LOGSIGN_H
#define WR_LOGSIGN_H

#include <event2/event.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/crypto.h"
#include "base/metrics.h"
#include "base/note.h"
#include "store/store.h"

typedef struct wr_logsign wr_logsign_t;

/* A signer for store on base under name (--log-name; copied); metrics may
 * be NULL. NULL on ENOMEM. Signs nothing until it has a key. */
wr_logsign_t *wr_logsign_new(struct event_base *base, wr_store_t *store, wr_metrics_t *metrics,
                             const char *name);

/* Installs the key (seed) and starts the once-a-second timer. WR_OK,
 * WR_EIO (OpenSSL), WR_ENOMEM. */
wr_err_t wr_logsign_start(wr_logsign_t *ls, const uint8_t seed[WR_CRYPTO_ED25519_SEED]);

/* True once a key is installed. */
bool wr_logsign_ready(const wr_logsign_t *ls);

/* The log's name, and the verifier key text "<name>+<id>+<base64>" (""
 * before a key). Borrowed. */
const char *wr_logsign_name(const wr_logsign_t *ls);
const char *wr_logsign_vkey(const wr_logsign_t *ls);

/* Signs queue's log now if it has leaves its checkpoint does not cover
 * (or no checkpoint yet), then calls cb with the head after (as
 * log_head's answer; err as log_head or log_publish). WR_OK (cb will be
 * called once), or an error (cb never called). */
wr_err_t wr_logsign_queue(wr_logsign_t *ls, const char *queue, wr_store_log_cb cb, void *arg);

/* Called once a round for each queue whose opening waits for its beacon
 * (store.h log_unsigned): fetch url's round and hand it to the store
 * (log_beacon). */
typedef void (*wr_logsign_beacon_fn)(void *arg, const char *queue, const char *url, uint64_t round);
void wr_logsign_set_beacon(wr_logsign_t *ls, wr_logsign_beacon_fn fn, void *arg);

/* Stops the timer and frees ls. Close the store first: its close
 * answers the signs in flight (WR_ECANCELED), and their callbacks still
 * reach ls (main.c does so). NULL is fine. */
void wr_logsign_free(wr_logsign_t *ls);

/* A log found broken (shorter than its checkpoint) or forked (its leaves
 * no longer give the checkpoint's root) by whoever read its head (the
 * signer's round, or a log route: the store then leaves it out of the
 * signer's rounds): logged as an error and counted in
 * waitroom_log_broken_total, once per log and process (the first 64 logs
 * remembered). Nothing when res is neither. */
void wr_logsign_broken(wr_logsign_t *ls, const char *queue, const wr_log_answer_t *res);

#endif
