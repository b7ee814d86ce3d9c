# Sourced by bin/matte. glibc's malloc tuned for memory, not speed: with MATTE_LOW_MEMORY=1 (or
# MATTE_MALLOC_TUNING=1 alone) blocks over 1 MiB are mapped and given back when freed, in two arenas, instead
# of kept for later: about 350-450 MiB less at a worker's peak, for more CPU outside the model
# (docs/performance.md, "Memory"). Those mappings are asked for as transparent huge pages
# (glibc.malloc.hugetlb=1, glibc 2.35+; granted where the kernel's THP mode is "madvise" or "always"): without
# onnxruntime's arena the model's ~950 MiB of activations are mapped afresh at every run, and faulting them in
# 4 KiB at a time doubled the model's time. By default (the arena on) glibc is left as it is.
# Values the operator set win; other C libraries ignore them. MATTE_MALLOC_TUNING=0 never tunes.
if [ "${MATTE_MALLOC_TUNING:-${MATTE_LOW_MEMORY:-0}}" = 1 ]; then
  : "${MALLOC_ARENA_MAX:=2}" "${MALLOC_MMAP_THRESHOLD_:=1048576}"
  export MALLOC_ARENA_MAX MALLOC_MMAP_THRESHOLD_
  case ":${GLIBC_TUNABLES:-}:" in
    *:glibc.malloc.hugetlb=*) ;;
    ::) GLIBC_TUNABLES=glibc.malloc.hugetlb=1 ;;
    *) GLIBC_TUNABLES="$GLIBC_TUNABLES:glibc.malloc.hugetlb=1" ;;
  esac
  export GLIBC_TUNABLES
fi
