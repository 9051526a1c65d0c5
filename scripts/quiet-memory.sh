# Sourced by the benchmarks: keeps this machine's free memory where a
# benchmark can use it at the speed of memory.
#
# On a VM whose hypervisor takes back free guest memory (virtio-balloon's
# free page reporting, Linux's `page_reporting`), every page the guest
# frees in runs of 2^order pages is handed back to the host, and the next
# use of it faults it in again on the host: writing 1 GiB into the page
# cache then took 1.6-2.2 s of system time instead of 0.16-0.20 s (dd,
# 2026-11-26, right after a process had freed 3 GiB). A job that runs right
# after the floor (whose 2 GiB of heap it frees at exit) or after its own
# deleted map outputs paid that at random, which is most of the spread the
# engine rows had. While a benchmark runs, reporting is held off (the
# order set past the largest, as the kernel reads it) and the free memory
# is touched once; the old order is put back on exit. Without root or
# without `page_reporting`, nothing changes and the benchmark says so.
# MR_BENCH_PAGE_REPORTING=on leaves reporting as it is (to measure what
# it costs).
#   quiet_memory_on          # call once; sets an EXIT trap helper
#   quiet_memory_restore     # call from the script's EXIT trap
QM_PARAM=/sys/module/page_reporting/parameters/page_reporting_order
QM_OLD=

quiet_memory_on() {
  if [ "${MR_BENCH_PAGE_REPORTING:-off}" = on ]; then
    echo "bench: free page reporting left as it is (MR_BENCH_PAGE_REPORTING=on)"
  elif [ -w "$QM_PARAM" ]; then
    QM_OLD=$(cat "$QM_PARAM")
    echo 11 > "$QM_PARAM"
    echo "bench: free page reporting held off (page_reporting_order $QM_OLD -> 11) until the end"
  elif [ -e "$QM_PARAM" ]; then
    echo "bench: free page reporting is on and not writable here (needs root): the jobs' figures will spread" >&2
  fi
  python3 - <<'PY'
import mmap
free = next(int(l.split()[1]) for l in open("/proc/meminfo") if l.startswith("MemFree:")) * 1024
n = max(free - (1 << 30), 0) // mmap.PAGESIZE * mmap.PAGESIZE
if n:
    m = mmap.mmap(-1, n)
    for off in range(0, n, mmap.PAGESIZE):
        m[off] = 1
    m.close()
print(f"bench: touched {n >> 20} MiB of free memory once", flush=True)
PY
}

quiet_memory_restore() {
  if [ -n "$QM_OLD" ] && [ -w "$QM_PARAM" ]; then
    echo "$QM_OLD" > "$QM_PARAM"
  fi
}
