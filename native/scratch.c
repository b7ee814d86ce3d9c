// Per-environment scratch memory for the kernels (scratch.h).
#include <stdlib.h>
#include "scratch.h"

void *matte_scratch(Scratch *s, ScratchSlot slot, size_t bytes) {
  if (s->size[slot] >= bytes && s->data[slot]) return s->data[slot];
  free(s->data[slot]);
  s->data[slot] = malloc(bytes ? bytes : 1);
  s->size[slot] = s->data[slot] ? bytes : 0;
  return s->data[slot];
}

void matte_scratch_release(Scratch *s) {
  for (int i = 0; i < SCRATCH_SLOTS; i++) {
    free(s->data[i]);
    s->data[i] = NULL;
    s->size[i] = 0;
  }
}
