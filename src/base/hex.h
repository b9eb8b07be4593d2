/*
 * hex.h - lowercase hexadecimal, strict: the public log's ids, hashes and
 * key ids (note.c, logleaf.c, logreplay.c). No allocation.
 */
#ifndef WR_HEX_H
#define WR_HEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The n bytes at in as 2n lowercase hex digits and a NUL into out (2n + 1
 * bytes). */
void wr_hex_encode(const uint8_t *in, size_t n, char *out);

/* Decodes exactly 2n lowercase hex digits (s, len characters) into the n
 * bytes at out; false (out partly written) for another length or any
 * other character (upper case included: one spelling per value). */
bool wr_hex_decode(const char *s, size_t len, uint8_t *out, size_t n);

#endif
