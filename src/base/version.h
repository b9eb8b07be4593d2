/*
 * version.h - the waitroomd release number, defined once: --version prints
 * "waitroomd " WR_VERSION and the --help text names it.
 */
#ifndef WR_VERSION_H
#define WR_VERSION_H

#define WR_VERSION "1.3.0" /* MAJOR.MINOR.PATCH */

#endif
