# Sourced by bin/matte: glibc's malloc set for what the process does (MATTE_MALLOC_TUNING; docs/performance.md,
# "glibc's malloc"). Values the operator set win; other C libraries ignore them.
# - By default (`reuse`): one arena; blocks up to 64 MiB taken from the heap, and up to 256 MiB of freed memory
#   kept at its top, in transparent huge pages (glibc.malloc.hugetlb=1, glibc 2.35+; granted where the kernel's THP
#   mode is "madvise" or "always"). A photo's large buffers (a 2000x2000 photo decodes to 12 MB, its cut-out is
#   16 MB and the PNG encoder's copy as much again) then reuse memory an earlier photo faulted in, where glibc
#   would map them afresh and give them back at every photo: 2,500-4,400 page faults a 2000x2000 photo, at about
#   12 us each on a virtual machine (an AMD EPYC here: 30-50 ms of CPU), with the same peak memory.
# - With MATTE_LOW_MEMORY=1 or MATTE_MALLOC_TUNING=1 (`memory`): blocks over 1 MiB mapped and given back when
#   freed, in two arenas, in huge pages: about 350-450 MiB less at a worker's peak, without onnxruntime's arena
#   (whose ~950 MiB of activations are then mapped afresh at every run; faulting them in 4 KiB at a time doubled
#   the model's time).
# - MATTE_MALLOC_TUNING=0: glibc as it is.
case "${MATTE_MALLOC_TUNING:-}" in
  0) matte_malloc= ;;
  1) matte_malloc=memory ;;
  *) if [ "${MATTE_LOW_MEMORY:-0}" = 1 ]; then matte_malloc=memory; else matte_malloc=reuse; fi ;;
esac
if [ "$matte_malloc" = memory ]; then
  : "${MALLOC_ARENA_MAX:=2}" "${MALLOC_MMAP_THRESHOLD_:=1048576}"
  export MALLOC_ARENA_MAX MALLOC_MMAP_THRESHOLD_
elif [ "$matte_malloc" = reuse ]; then
  : "${MALLOC_ARENA_MAX:=1}" "${MALLOC_MMAP_THRESHOLD_:=67108864}" "${MALLOC_TRIM_THRESHOLD_:=268435456}"
  export MALLOC_ARENA_MAX MALLOC_MMAP_THRESHOLD_ MALLOC_TRIM_THRESHOLD_
fi
if [ -n "$matte_malloc" ]; then
  case ":${GLIBC_TUNABLES:-}:" in
    *:glibc.malloc.hugetlb=*) ;;
    ::) GLIBC_TUNABLES=glibc.malloc.hugetlb=1 ;;
    *) GLIBC_TUNABLES="$GLIBC_TUNABLES:glibc.malloc.hugetlb=1" ;;
  esac
  export GLIBC_TUNABLES
fi
unset matte_malloc
