/*
 * freelist.c - the bounded free list (freelist.h): a singly linked stack
 * of kept blocks, each block's first pointer-sized bytes holding the next
 * one (memcpy, so no alignment or aliasing assumption beyond malloc's).
 */
#include "base/freelist.h"

#include <stdlib.h>
#include <string.h>

void wr_freelist_init(wr_freelist_t *fl, size_t size, size_t max)
{
    fl->head = NULL;
    fl->n = 0;
    fl->max = max;
    fl->size = size < sizeof(void *) ? sizeof(void *) : size;
}

void *wr_freelist_take(wr_freelist_t *fl)
{
    void *p = fl->head;
    if (!p)
        return calloc(1, fl->size);
    memcpy(&fl->head, p, sizeof(void *));
    fl->n--;
    memset(p, 0, fl->size);
    return p;
}

void wr_freelist_give(wr_freelist_t *fl, void *p)
{
    if (!p)
        return;
    if (fl->n >= fl->max) {
        free(p);
        return;
    }
    memcpy(p, &fl->head, sizeof(void *));
    fl->head = p;
    fl->n++;
}

void wr_freelist_clear(wr_freelist_t *fl)
{
    while (fl->head) {
        void *p = fl->head;
        memcpy(&fl->head, p, sizeof(void *));
        free(p);
    }
    fl->n = 0;
}
