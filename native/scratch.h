// Memory the kernels keep from one call to the next, one set per Node.js environment (the main thread
// and each worker thread has its own: kernels.c holds it as the module's instance data and frees it
// with the environment). A photo's grid planes and deflate tokens then land on pages that the last
// photo already touched. Fresh memory costs a page fault per 4 KiB page on first touch: measured in a
// band thread on a 2000x2000 photo, about 8,000 faults and 12 ms of system time a photo.
#ifndef MATTE_SCRATCH_H
#define MATTE_SCRATCH_H
#include <stddef.h>

typedef enum { SCRATCH_REFINE_GRID, SCRATCH_REFINE_COLUMNS, SCRATCH_DEFLATE_TOKENS, SCRATCH_REDUCE, SCRATCH_REDUCE_TAPS, SCRATCH_SLOTS } ScratchSlot;

typedef struct {
  void *data[SCRATCH_SLOTS];
  size_t size[SCRATCH_SLOTS];
} Scratch;

/**
 * At least `bytes` of memory for `slot`, contents undefined: the slot's memory from the last call when
 * it is large enough, else new memory (the old is freed). NULL when out of memory. One user of a slot at
 * a time: a kernel takes its slots for the length of one call.
 */
void *matte_scratch(Scratch *s, ScratchSlot slot, size_t bytes);

/** Frees every slot's memory (the set stays usable). */
void matte_scratch_release(Scratch *s);

#endif
