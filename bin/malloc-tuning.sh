# Sourced by bin/matte and `npm run bench` (so the bench's bare model runs with the same malloc as the server).
# glibc's malloc, for a process that holds the model (docs/performance.md, "Memory"): blocks over 128 KiB are
# mapped and given back when freed, in two arenas, instead of kept for later: about 450 MiB less at a
# worker's peak. Values the operator set win; other C libraries ignore them.
# MATTE_MALLOC_TUNING=0 leaves glibc's defaults.
if [ "${MATTE_MALLOC_TUNING:-1}" != 0 ]; then
  : "${MALLOC_ARENA_MAX:=2}" "${MALLOC_MMAP_THRESHOLD_:=131072}"
  export MALLOC_ARENA_MAX MALLOC_MMAP_THRESHOLD_
fi
