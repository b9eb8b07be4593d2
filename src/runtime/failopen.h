/*
 * failopen.h - degraded mode (docs/API.md 1.1, "the store is unreachable"):
 * this instance's spent set of passes, and the burns it owes the store.
 *
 * While the store is unreachable the API lets passes through without it
 * (a fail-open pass, or an ordinary token under the limited/open fail
 * policy). Each pass let through is spent here (the local spent set: queue
 * + jti -> expiry, so this instance never lets it through twice) and its
 * burn is queued: once the store answers again, a fail-open pass is burned
 * in the store's burned set (wr_store_burn) and an ordinary token is
 * consumed (wr_store_consume of its user and jti; the answer is logged at
 * debug, never told to anyone), so neither can be spent again on any
 * instance after recovery.
 *
 * Replay: a timer (every 250 ms while burns are queued) sends them, at most
 * 64 in flight; a burn that fails as a store failure (unavailable, timeout)
 * goes back to the front of the queue for the next try; any other answer
 * settles it. The first call refused at once (breaker open) ends the round.
 *
 * The set also holds passes the store answered as spent while it was
 * reachable (wr_failopen_note_spent, no burn owed), so this instance's
 * answers agree with the store's after it becomes unreachable again (K33).
 *
 * Bounds: at most WR_FAILOPEN_MAX spent passes. Expired ones (exp <= now)
 * are dropped when the set is full and every 10 s; a queued burn whose
 * pass has expired is dropped unsent (the store could not spend it
 * anymore). A full set of live passes refuses new spends (WR_ELIMIT).
 *
 * Time: exp and now in seconds since the epoch (the JWT's clock). Needs
 * libevent (its timer); not thread-safe.
 */
#ifndef WR_FAILOPEN_H
#define WR_FAILOPEN_H

#include <event2/event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "store/store.h"
#include "core/token.h"

#define WR_FAILOPEN_MAX 65536 /* spent passes kept per instance */

typedef struct wr_failopen wr_failopen_t;

/* Creates the spent set and its replay timer on base for store (both
 * borrowed; the store must be closed before wr_failopen_free). Returns
 * WR_OK or WR_ENOMEM. */
wr_err_t wr_failopen_new(struct event_base *base, wr_store_t *store, wr_failopen_t **out);

/* Frees; burns still queued are lost (logged). A burn in flight keeps the
 * object alive until its callback (close the store first). NULL is ok. */
void wr_failopen_free(wr_failopen_t *f);

/* True when the pass of claims (queue, jti; user for a note) was spent on
 * this instance, or noted spent by the store for the same user
 * (wr_failopen_note_spent), and has not expired at now_s. */
bool wr_failopen_spent(const wr_failopen_t *f, const wr_token_claims_t *claims, int64_t now_s);

/*
 * Spends the pass of claims (queue, user, jti, exp, fail_open) on this
 * instance at now_s and queues its burn for the store. Returns WR_OK;
 * WR_ETOKEN when it was spent here already; WR_ELIMIT when the set is full
 * of live passes; WR_ENOMEM. Nothing is recorded on error.
 */
wr_err_t wr_failopen_spend(wr_failopen_t *f, const wr_token_claims_t *claims, int64_t now_s);

/*
 * Records that the store answered the pass of claims (queue, jti, user,
 * exp) as spent (K33): this instance then refuses it (for that user: the
 * store's answer is about one user's token) while the store is
 * unreachable too (wr_failopen_spent), so its verify never lets through,
 * in degraded mode, a pass its store already called spent. No burn is
 * owed (the store has it). Returns WR_OK (also when it was recorded
 * already); WR_ELIMIT when the set is half full (notes never take the
 * room of passes spent during an outage) or full of live passes;
 * WR_ENOMEM.
 */
wr_err_t wr_failopen_note_spent(wr_failopen_t *f, const wr_token_claims_t *claims, int64_t now_s);

/* Number of burns queued or in flight (tests, metrics). */
size_t wr_failopen_pending(const wr_failopen_t *f);

/* Number of spent passes held. */
size_t wr_failopen_count(const wr_failopen_t *f);

#endif
