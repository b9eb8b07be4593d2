/*
 * logreplay.h - the replay of a public log (docs/API.md, "The order, and
 * overtakes"): fed the leaves in log order, it keeps the line of each
 * group as the rules say it must be, checks every admission against it,
 * checks each opening's draw, and counts what a fairness statement
 * reports. waitroom-verify runs it over a whole log; the server's report
 * can run it over its own.
 *
 * The line: everyone with a `join` and no later `admit` or `leave`.
 * Within each group (the standard line is the group ""): pre-queue people
 * in draw order (ascending SHA-256(D || u)), then everyone else by `t`,
 * ties by log index. A pre-queue join made while an opening's `commit`
 * awaits its `draw` waits for it (unordered, not admissible); without a
 * commit (preQueueShuffle off) the pre-queue keeps arrival order. A
 * person is away from their `away` leaf until their `admit` or `leave`
 * (an `away` with `unseen` puts an admitted person back in the line,
 * away). An `admit` without `held` must name the first person of their
 * group who is not away; with `held`, a person who is away. Anything else
 * is an overtake.
 *
 * Costs: O(log n) per leaf (a binary heap per group with lazy deletion;
 * a hash of people by log id), one SHA-256 per drawn person; memory
 * O(joins), about 100 bytes each (a person who joins again gets a new
 * place; places are never freed before the replay), so a log's replay
 * takes about as much memory as its join leaves take bytes. Not
 * thread-safe; no I/O.
 */
#ifndef WR_LOGREPLAY_H
#define WR_LOGREPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "core/logleaf.h"

#define WR_LOGREPLAY_LISTED 10 /* overtakes and problems kept with their details */
#define WR_LOGREPLAY_GROUPS 16 /* groups (the standard line included) it follows */

/* Why an admission is an overtake. */
typedef enum {
    WR_LOGREPLAY_NOT_FIRST,   /* admit: someone else was first in the group */
    WR_LOGREPLAY_NOT_AWAY,    /* admit with held: the person was not away */
    WR_LOGREPLAY_NOT_IN_LINE, /* admit: the person had no place */
    WR_LOGREPLAY_UNDRAWN,     /* admit: a pre-queue person before the draw */
} wr_logreplay_why_t;

typedef struct wr_logreplay_overtake {
    uint64_t index; /* the admit leaf's log index */
    char u[WR_LOGLEAF_U_HEX + 1];
    char expected[WR_LOGLEAF_U_HEX + 1]; /* NOT_FIRST: who was first ("" when nobody) */
    char grp[WR_LOGLEAF_GROUP_MAX + 1];
    wr_logreplay_why_t why;
} wr_logreplay_overtake_t;

/* A leaf the replay could not apply (malformed, a second join of someone
 * in line, ...), or a draw that does not check. */
typedef struct wr_logreplay_problem {
    uint64_t index;
    char what[120];
} wr_logreplay_problem_t;

typedef struct wr_logreplay_stats {
    uint64_t leaves;       /* fed so far */
    uint64_t joined;       /* join leaves applied */
    uint64_t admitted;     /* admit leaves */
    uint64_t held_returns; /* admit leaves with held */
    uint64_t away;         /* away leaves applied */
    uint64_t left[WR_LOGLEAF_WHY_COUNT];
    uint64_t fail_open; /* sum of failOpen n */
    uint64_t waiting;   /* in the line now (away included) */
    uint64_t overtakes;
    wr_logreplay_overtake_t overtake[WR_LOGREPLAY_LISTED]; /* the first ones */
    uint64_t invalid; /* leaves that break the log's own rules */
    uint64_t stray;   /* leaves about someone not in the line (a leave, an away): ignored */
    wr_logreplay_problem_t
        problem[WR_LOGREPLAY_LISTED]; /* the first invalid leaves and draw failures */
    uint64_t problems;                /* invalid + draw_failures, as listed */
    uint64_t draws;                   /* draw leaves */
    uint64_t draw_failures;           /* draws that do not check (seed, n, beacon, no commit) */
    bool draw_independent; /* every draw used its beacon's randomness (true with no draws) */
    bool draw_pending;     /* a commit awaits its draw at the end */
} wr_logreplay_stats_t;

typedef struct wr_logreplay wr_logreplay_t;

/* A replay of an empty log, or NULL on ENOMEM. */
wr_logreplay_t *wr_logreplay_new(void);

/* Frees r; NULL is a no-op. */
void wr_logreplay_free(wr_logreplay_t *r);

/* Feeds the next leaf (len bytes, no newline): parsed, then applied. A
 * malformed leaf counts as invalid and changes nothing else. WR_OK, or
 * WR_ENOMEM (the replay is then unusable). */
wr_err_t wr_logreplay_feed(wr_logreplay_t *r, const char *leaf, size_t len);

/* Applies the next leaf, already parsed. WR_OK or WR_ENOMEM. */
wr_err_t wr_logreplay_apply(wr_logreplay_t *r, const wr_logleaf_t *l);

/* The counts so far (borrowed; valid until the next feed or free). */
const wr_logreplay_stats_t *wr_logreplay_stats(const wr_logreplay_t *r);

/* The name of an overtake's reason ("notFirst", ...). */
const char *wr_logreplay_why_name(wr_logreplay_why_t why);

#endif
