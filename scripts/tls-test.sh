#!/usr/bin/env bash
# Is the cluster token on the wire? Two network namespaces joined by a veth
# pair: mrtls-a holds the master (and worker w2), mrtls-b worker w1 and the
# client. tcpdump records the veth while the client puts a file, reads it
# back, runs a wordcount (shuffle between w1 and w2) and reads the web UI's
# API; then the capture is searched for the token: as raw bytes (HTTP/1.1
# headers) and as gRPC carries it, HPACK-Huffman-coded "Bearer TOKEN".
# Twice: in clear text, where the token must be found (or this test could
# not see a leak), and with `mr config init --tls`, where it must not.
#
#   scripts/tls-test.sh [--keep]      (--keep: leave the captures in /tmp)
#
# Needs root (namespaces, tcpdump; tcpdump and curl are installed with
# apt-get when missing). Without them it skips (exit 0), except that under
# CI=true a skip is a failure (exit 1). Binaries: $MR_BIN_DIR, else
# target/debug (built when missing). Removes its namespaces on exit.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
KEEP=0
[ "${1:-}" = --keep ] && KEEP=1

NS_A=mrtls-a NS_B=mrtls-b VA=mrtls-va VB=mrtls-vb
NET=10.79.250            # A = .1, B = .2 (a /24 inside the two namespaces only)
A_IP=$NET.1 B_IP=$NET.2
BIN=${MR_BIN_DIR:-$ROOT/target/debug}

skip() {
  echo "tls-test: SKIP: $*"
  if [ "${CI:-}" = true ]; then echo "tls-test: a skip is a failure under CI=true" >&2; exit 1; fi
  exit 0
}
fail() { echo "tls-test: FAIL: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || skip "needs root (network namespaces, tcpdump)"
command -v ip >/dev/null || skip "needs iproute2 (ip)"
ip netns list >/dev/null 2>&1 || skip "ip netns does not work here"
unshare --net true 2>/dev/null || skip "cannot make network namespaces here (no CAP_SYS_ADMIN?)"
for tool in tcpdump curl; do
  command -v "$tool" >/dev/null && continue
  { apt-get install -y "$tool" || { apt-get update && apt-get install -y "$tool"; }; } >/dev/null 2>&1 \
    || skip "needs $tool and could not install it"
done
command -v python3 >/dev/null || skip "needs python3"
if [ ! -x "$BIN/mr" ] || [ ! -x "$BIN/mr-master" ] || [ ! -x "$BIN/mr-worker" ]; then
  (cd "$ROOT" && cargo build --bins -p master -p worker -p cli)
fi

WORK=$(mktemp -d /tmp/mrtls-XXXXXX)
PIDS=()
cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  ip netns del "$NS_A" 2>/dev/null || true
  ip netns del "$NS_B" 2>/dev/null || true
  if [ "$KEEP" = 1 ]; then echo "tls-test: kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# A run killed before its trap ran leaves namespaces with our prefix behind.
ip netns del "$NS_A" 2>/dev/null || true
ip netns del "$NS_B" 2>/dev/null || true
ip netns add "$NS_A"
ip netns add "$NS_B"
ip -n "$NS_A" link set lo up
ip -n "$NS_B" link set lo up
ip -n "$NS_A" link add "$VA" type veth peer name "$VB" netns "$NS_B"
ip -n "$NS_A" addr add "$A_IP/24" dev "$VA"
ip -n "$NS_B" addr add "$B_IP/24" dev "$VB"
ip -n "$NS_A" link set "$VA" up
ip -n "$NS_B" link set "$VB" up

# Foreground only: `ip netns exec` runs straight after `&` instead, so that
# $! is the daemon's own pid (ip execs it) and the trap can kill it.
in_a() { ip netns exec "$NS_A" "$@"; }
in_b() { ip netns exec "$NS_B" "$@"; }

# Counts NEEDLE in FILE as raw bytes and HPACK-Huffman-coded (RFC 7541,
# the codes of the characters a "Bearer <hex token>" value holds).
count_token() { # file token -> "raw hpack"
  python3 - "$1" "$2" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
token = sys.argv[2]
codes = {" ": (0x14, 6), "0": (0x0, 5), "1": (0x1, 5), "2": (0x2, 5), "3": (0x19, 6),
         "4": (0x1a, 6), "5": (0x1b, 6), "6": (0x1c, 6), "7": (0x1d, 6), "8": (0x1e, 6),
         "9": (0x1f, 6), "B": (0x5d, 7), "a": (0x3, 5), "b": (0x23, 6), "c": (0x4, 5),
         "d": (0x24, 6), "e": (0x5, 5), "f": (0x25, 6), "r": (0x2c, 6)}
acc, n = 0, 0
for ch in "Bearer " + token:
    code, bits = codes[ch]
    acc, n = (acc << bits) | code, n + bits
whole = n // 8  # the bytes before the padded last one
huff = (acc >> (n - whole * 8)).to_bytes(whole, "big")
print(data.count(token.encode()), data.count(huff))
PY
}

RESULT=""
phase() { # clear|tls -> RESULT="bytes packets raw hpack" (in this shell: the trap sees PIDS)
  local mode=$1 d="$WORK/$1" token conf scheme=http curl_ca=() p
  mkdir -p "$d"
  token=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
  conf="$d/cluster.toml"
  cat > "$conf" <<EOF
token = "$token"

[master]
addr = "$A_IP:7070"
http_addr = "$A_IP:7080"
data_dir = "$d/master"

[dfs]
block_size = "1MiB"
replication = 2

[heartbeat]
interval = "200ms"
dead_after = 10

[[workers]]
name = "w1"
addr = "$B_IP:7101"
data_dir = "$d/w1"

[[workers]]
name = "w2"
addr = "$A_IP:7102"
data_dir = "$d/w2"
EOF
  if [ "$mode" = tls ]; then
    "$BIN/mr" --config "$conf" config init --tls >/dev/null
    scheme=https curl_ca=(--cacert "$d/tls/ca.pem")
  fi
  ip netns exec "$NS_A" tcpdump -i "$VA" -U -s 0 -w "$d/cap.pcap" tcp or udp port 9 >/dev/null 2>"$d/tcpdump.log" &
  local dump=$!
  PIDS+=("$dump")
  for _ in $(seq 1 100); do grep -q "listening on" "$d/tcpdump.log" && break; sleep 0.1; done
  grep -q "listening on" "$d/tcpdump.log" || fail "tcpdump did not start: $(cat "$d/tcpdump.log")"

  ip netns exec "$NS_A" "$BIN/mr-master" --config "$conf" >"$d/master.log" 2>&1 &
  PIDS+=($!)
  ip netns exec "$NS_A" "$BIN/mr-worker" --config "$conf" --name w2 --drain-timeout 0 >"$d/w2.log" 2>&1 &
  PIDS+=($!)
  ip netns exec "$NS_B" "$BIN/mr-worker" --config "$conf" --name w1 --drain-timeout 0 >"$d/w1.log" 2>&1 &
  PIDS+=($!)
  local alive=0
  for _ in $(seq 1 150); do
    alive=$(in_b "$BIN/mr" --config "$conf" cluster status --json 2>/dev/null \
      | python3 -c 'import json,sys; print(sum(w["state"]=="alive" for w in json.load(sys.stdin)["workers"]))' 2>/dev/null || echo 0)
    [ "$alive" = 2 ] && break
    sleep 0.2
  done
  [ "$alive" = 2 ] || fail "$mode: only $alive of 2 workers alive; $(tail -n 5 "$d"/*.log)"

  # The client, in B: a put and a get (blocks to w2 across the veth), a
  # job (w1 and w2 fetch each other's map output), the web UI's API.
  head -c 3145728 /dev/urandom > "$d/blob"
  in_b "$BIN/mr" --config "$conf" fs put "$d/blob" /blob >>"$d/client.log" 2>&1
  in_b "$BIN/mr" --config "$conf" fs get /blob "$d/back" >>"$d/client.log" 2>&1
  cmp -s "$d/blob" "$d/back" || fail "$mode: the file read back differs"
  python3 -c 'print("alpha beta gamma\n" * 200000, end="")' > "$d/words"
  in_b "$BIN/mr" --config "$conf" fs put "$d/words" /in/words >>"$d/client.log" 2>&1
  in_b "$BIN/mr" --config "$conf" job run wordcount --input /in --output /wc -r 2 --json \
    > "$d/job.json" 2>>"$d/client.log"
  grep -q '"succeeded"' "$d/job.json" || fail "$mode: the wordcount did not succeed: $(cat "$d/job.json")"
  local code
  code=$(in_b curl -sS -o /dev/null -w '%{http_code}' "${curl_ca[@]}" \
    -H "Authorization: Bearer $token" "$scheme://$A_IP:7080/api/workers")
  [ "$code" = 200 ] || fail "$mode: the web UI answered $code"
  if [ "$mode" = tls ]; then
    # TLS only: a clear-text request gets no HTTP answer. (Without the
    # token: a client sending it in clear would leak it itself.)
    code=$(in_b curl -s -o /dev/null -w '%{http_code}' --max-time 5 \
      "http://$A_IP:7080/" || true)
    [ "$code" != 200 ] || fail "tls: the web UI answered a clear-text request"
  fi

  for p in "${PIDS[@]:1}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]:1}"; do wait "$p" 2>/dev/null || true; done
  # tcpdump drops what it has not written yet when it is stopped: send a
  # marker after the last packet and stop it once the marker is written.
  local marker got=0
  marker="mrtls-end-$mode-$(od -An -tx1 -N8 /dev/urandom | tr -d ' \n')"
  for _ in $(seq 1 100); do
    in_b python3 -c 'import socket, sys; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(sys.argv[1].encode(), (sys.argv[2], 9))' "$marker" "$A_IP"
    if grep -q -a -F "$marker" "$d/cap.pcap"; then got=1; break; fi
    sleep 0.1
  done
  [ "$got" = 1 ] || fail "$mode: tcpdump did not write the end marker"
  kill -INT "$dump" 2>/dev/null || true
  wait "$dump" 2>/dev/null || true
  PIDS=()
  local bytes packets counts
  bytes=$(stat -c %s "$d/cap.pcap")
  packets=$(sed -nE 's/^([0-9]+) packets? captured.*/\1/p' "$d/tcpdump.log")
  counts=$(count_token "$d/cap.pcap" "$token")
  RESULT="$bytes ${packets:-?} $counts"
}

echo "tls-test: namespaces $NS_A ($A_IP: master, w2) and $NS_B ($B_IP: w1, client), capture on $VA"
phase clear
read -r c_bytes c_packets c_raw c_hpack <<<"$RESULT"
phase tls
read -r t_bytes t_packets t_raw t_hpack <<<"$RESULT"
printf '%-6s %12s %8s %12s %14s\n' mode "capture (B)" packets "token raw" "token HPACK" \
  clear "$c_bytes" "$c_packets" "$c_raw" "$c_hpack" \
  tls "$t_bytes" "$t_packets" "$t_raw" "$t_hpack"

# In clear text the token must be seen both ways, or the search is blind.
[ "$c_raw" -ge 1 ] || fail "clear: the token's raw bytes (web UI request) are not in the capture: the search is blind"
[ "$c_hpack" -ge 1 ] || fail "clear: the token's HPACK form (gRPC) is not in the capture: the search is blind"
# With TLS the traffic was there (3 MiB put across the veth), the token not.
[ "$t_bytes" -ge 3000000 ] || fail "tls: only $t_bytes bytes captured: the traffic did not cross the veth"
[ "$t_raw" = 0 ] || fail "tls: the token's raw bytes are in the capture ($t_raw times)"
[ "$t_hpack" = 0 ] || fail "tls: the token's HPACK form is in the capture ($t_hpack times)"
echo "tls-test: PASS: the token crosses the wire in clear text without TLS ($c_raw raw, $c_hpack HPACK) and never with it"
