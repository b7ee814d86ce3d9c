# Sourced by bin/matte and `npm run bench` (so the bench's bare model runs with the same malloc as the server).
# glibc's malloc, for a process that holds the model (docs/performance.md, "Memory"): blocks over 1 MiB are
# mapped and given back when freed, in two arenas, instead of kept for later: about 350-450 MiB less at a
# worker's peak (128 KiB gave the same peak for 25% more CPU outside the model:
# bench/results/cpu-optimization-ab.md). Those mappings are asked for as transparent huge pages
# (glibc.malloc.hugetlb=1, glibc 2.35+; granted where the kernel's THP mode is "madvise" or "always"): the
# model's ~950 MiB of activations are mapped afresh at every run, and faulting them in 4 KiB at a time doubled
# the model's time (4.6 s a run against 2.1 s).
# Values the operator set win; other C libraries ignore them. MATTE_MALLOC_TUNING=0 leaves glibc's defaults.
if [ "${MATTE_MALLOC_TUNING:-1}" != 0 ]; then
  : "${MALLOC_ARENA_MAX:=2}" "${MALLOC_MMAP_THRESHOLD_:=1048576}"
  export MALLOC_ARENA_MAX MALLOC_MMAP_THRESHOLD_
  case ":${GLIBC_TUNABLES:-}:" in
    *:glibc.malloc.hugetlb=*) ;;
    ::) GLIBC_TUNABLES=glibc.malloc.hugetlb=1 ;;
    *) GLIBC_TUNABLES="$GLIBC_TUNABLES:glibc.malloc.hugetlb=1" ;;
  esac
  export GLIBC_TUNABLES
fi
