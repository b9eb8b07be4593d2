/*
 * report.h - the human side of a simulator run: the terminal summary of one
 * run, the side-by-side comparison of a run without the line and one with
 * it, and the SVG chart (line length, admissions per second and shop
 * concurrency over time, without | with).
 *
 * Inputs are the run objects waitroom-sim writes (see docs/BENCHMARKS.md for
 * the fields); they are borrowed and never modified.
 */
#ifndef WR_REPORT_H
#define WR_REPORT_H

#include <stdio.h>

#include <jansson.h>

/* Prints the summary of one run to f. */
void wr_report_print_run(FILE *f, const json_t *run);

/* Prints a two-column table, without the line | with it, to f. */
void wr_report_print_compare(FILE *f, const json_t *without, const json_t *with);

/* Writes the SVG chart to path. Returns 0, or -1 when the file cannot be
 * written. */
int wr_report_write_svg(const char *path, const json_t *without, const json_t *with);

#endif
