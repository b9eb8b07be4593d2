/*
 * report.h - the human side of a simulator run: the terminal summary of one
 * run, the side-by-side comparison of a run without the line and one with
 * it, and the SVG chart (line length, admissions per second and shop
 * concurrency over time, without | with), which names the admission mode
 * and the poll timing of the run with the line.
 *
 * Inputs are the run objects waitroom-sim writes (see docs/BENCHMARKS.md for
 * the fields); they are borrowed and never modified.
 */
#ifndef WR_REPORT_H
#define WR_REPORT_H

#include <stdio.h>

#include <jansson.h>

/* One line saying which admission mode ran ("rate only: 175/s, no
 * maxActive", "one in, one out: ...", noting a server that refused
 * sessionSeconds) into buf (always terminated). */
void wr_report_describe_mode(char *buf, size_t cap, const json_t *run);

/* One line saying which poll timing ran (the server's default bands or
 * the bands given, and the jitter) into buf (always terminated). */
void wr_report_describe_polls(char *buf, size_t cap, const json_t *run);

/* One line about a sale opening (--opens-in): when (UTC, and seconds after
 * the first arrival), the pre-queue's size and the later arrivals; "no
 * sale opening" for a run without one. Into buf (always terminated). */
void wr_report_describe_opening(char *buf, size_t cap, const json_t *run);

/* demo.sh --public-log: adds to the run with the line what waitroom-verify
 * --json said of its public log (verify, a reference taken): logEvents (the
 * checked checkpoint's size), overtakes, drawChecked (true or false; null
 * when the log has no draw) and logVerify (the verifier's whole object). */
void wr_report_add_log(json_t *with, json_t *verify);

/* One line: the verifier's statement on the run's public log (events,
 * joined, admitted, held returns, left, overtakes, the draw, the verdict),
 * or "no public log" for a run without logVerify. Into buf (always
 * terminated). */
void wr_report_describe_log(char *buf, size_t cap, const json_t *run);

/* The next three are in sale_report.c (the presale run, issue 41, and
 * the server's own report of the run). */

/* report --server-report PATH (demo.sh: OUT/server-report.json, saved
 * from GET /v1/admin/queues/Q/report after the run): names PATH's file
 * and its .csv sibling, when present, in with's serverReport ("file",
 * "csv": the SVG links them) and says whether the file's totals are the
 * run's ("fileAgrees"). -1 (message printed) when PATH is not a report or
 * the run has no serverReport. */
int wr_report_link_server_report(json_t *with, const char *path);

/* One line: the server's report's totals and whether the simulator's
 * counts agree, or "no server report". Into buf (always terminated). */
void wr_report_describe_server_report(char *buf, size_t cap, const json_t *run);

/* One line: the presale run's people, the standard line's lowest share of
 * a second and both lines' p50 waits, or "no presale". Into buf. */
void wr_report_describe_presale(char *buf, size_t cap, const json_t *run);

/* Prints the summary of one run to f (with the opening's figures when the
 * run had one). */
void wr_report_print_run(FILE *f, const json_t *run);

/* Prints a two-column table, without the line | with it, to f. */
void wr_report_print_compare(FILE *f, const json_t *without, const json_t *with);

/* Writes the SVG chart to path. Returns 0, or -1 when the file cannot be
 * written. */
int wr_report_write_svg(const char *path, const json_t *without, const json_t *with);

#endif
