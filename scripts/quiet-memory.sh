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
# is touched once; the old order is put back on exit. That is a kernel
# setting, so it is opt-in: a benchmark measures the machine as a user has
# it unless asked (`--hold-page-reporting` on the scripts that source this,
# or MR_BENCH_HOLD_PAGE_REPORTING=1), and says which it measured. Without
# root or without `page_reporting`, nothing changes and the benchmark says
# so. One holder at a time (a lock in /tmp): a second benchmark started
# meanwhile neither changes nor restores the setting.
#   quiet_memory_on          # call once, after installing an EXIT trap that
#   quiet_memory_restore     #   calls this (a kill in between restores too)
#   $QM_STATE                # after quiet_memory_on: machine | held | unavailable
QM_PARAM=/sys/module/page_reporting/parameters/page_reporting_order
QM_OLD=

QM_STATE=machine

quiet_memory_on() {
  if [ "${MR_BENCH_HOLD_PAGE_REPORTING:-0}" != 1 ]; then
    QM_STATE=machine
    if [ -e "$QM_PARAM" ]; then
      echo "bench: free page reporting as the machine has it (page_reporting_order $(cat "$QM_PARAM")): freed memory goes back to the host and jobs after a big free pay to fault it in; --hold-page-reporting holds it off while the benchmark runs"
    fi
    return 0
  fi
  exec 9>/tmp/mr-page-reporting.lock
  if ! flock -n 9; then
    QM_STATE=machine
    echo "bench: another benchmark holds free page reporting: this one leaves the setting to it" >&2
    return 0
  fi
  if [ -w "$QM_PARAM" ]; then
    QM_OLD=$(cat "$QM_PARAM")
    echo 11 > "$QM_PARAM"
    QM_STATE=held
    echo "bench: free page reporting held off on request (page_reporting_order $QM_OLD -> 11) until the end"
  else
    QM_STATE=unavailable
    [ ! -e "$QM_PARAM" ] || echo "bench: free page reporting is on and not writable here (needs root): left as it is" >&2
    return 0
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
    QM_OLD=
  fi
}
