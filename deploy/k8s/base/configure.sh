#!/bin/sh
# The init step of every pod: writes the cluster file this pod's daemon
# reads (/etc/mr/cluster.toml, an in-memory emptyDir) from the ConfigMap's
# template, then waits until the pod's own name resolves (its daemon binds
# 0.0.0.0, but its peers dial the name).
#   - the token from the Secret mr-token (mounted at /etc/mr-token);
#   - where the template has `worker_token = "@WORKER_TOKEN@"` (overlays
#     that give the workers an identity of their own): the Secret
#     mr-worker-token's token (mounted at /etc/mr-worker-token, in the
#     master's and the workers' pods only);
#   - on a worker (NODE_NAME set): the rack of its own [[workers]] entry,
#     the zone label (topology.kubernetes.io/zone) of the node it was
#     scheduled on. The downward API cannot read a node's labels, so this
#     asks the API server, as the ServiceAccount mr-worker, which may only
#     `get` nodes (rbac.yaml). A node without the label gives rack
#     "default".
#   - on a worker with MR_TLS_SECRET set (overlays with TLS): the CA's
#     certificate and the pod's own POD_NAME.pem and POD_NAME.key, read out
#     of that Secret through the API into /etc/mr/tls (memory, mode 0400).
#     The Secret holds every worker's pair and is never mounted, so no
#     other worker's key reaches this node or the worker's container.
# Needs sh, sed, nslookup and kubectl: the image mr-kubectl
# (kustomization images: maps it to one that has them).
set -eu
plain() { # what, token
  case "$2" in
    *[!A-Za-z0-9._~+/=-]*|"") echo "configure: the $1 must be non-empty, without spaces or quotes" >&2; exit 1 ;;
  esac
}
token=$(cat /etc/mr-token/token)
plain token "$token"
wtoken=""
if grep -q '@WORKER_TOKEN@' /etc/mr-template/cluster.toml; then
  [ -f /etc/mr-worker-token/token ] || {
    echo "configure: the cluster file has worker_token = \"@WORKER_TOKEN@\" but no Secret mr-worker-token is mounted at /etc/mr-worker-token" >&2
    exit 1
  }
  wtoken=$(cat /etc/mr-worker-token/token)
  plain worker_token "$wtoken"
  [ "$wtoken" != "$token" ] || { echo "configure: the worker_token must differ from the token (make each with openssl rand -hex 16)" >&2; exit 1; }
fi
rack_edit=""
if [ -n "${NODE_NAME:-}" ]; then
  zone=$(kubectl get node "$NODE_NAME" \
    -o go-template='{{index .metadata.labels "topology.kubernetes.io/zone"}}')
  [ -n "$zone" ] && [ "$zone" != "<no value>" ] || zone=default
  # A rack is a plain word in the cluster file.
  rack=$(printf '%s' "$zone" | tr -c 'A-Za-z0-9._-' '_')
  grep -qx "name = \"$POD_NAME\"" /etc/mr-template/cluster.toml || {
    echo "configure: $POD_NAME has no [[workers]] entry in the cluster file: scale the StatefulSet and the file together" >&2
    exit 1
  }
  rack_edit="/^name = \"$POD_NAME\"\$/,/^rack = /s/^rack = .*/rack = \"$rack\"/"
  echo "configure: $POD_NAME on node $NODE_NAME, zone $zone: rack $rack"
fi
if [ -n "${MR_TLS_SECRET:-}" ]; then
  mkdir -p /etc/mr/tls
  for f in ca.pem "$POD_NAME.pem" "$POD_NAME.key"; do
    # base64decode: kubectl's template function; an absent key prints nothing.
    kubectl get secret "$MR_TLS_SECRET" \
      -o "go-template={{with index .data \"$f\"}}{{base64decode .}}{{end}}" > "/etc/mr/tls/$f.new"
    [ -s "/etc/mr/tls/$f.new" ] || {
      echo "configure: the Secret $MR_TLS_SECRET has no $f: run \`mr config init --tls\` with $POD_NAME in the cluster file and list its files in the overlay" >&2
      exit 1
    }
    chmod 0400 "/etc/mr/tls/$f.new"
    mv "/etc/mr/tls/$f.new" "/etc/mr/tls/$f"
  done
  echo "configure: $POD_NAME's certificate and key, and the CA's certificate, from $MR_TLS_SECRET"
fi
sed -e "s|@TOKEN@|$token|" ${wtoken:+-e "s|@WORKER_TOKEN@|$wtoken|"} ${rack_edit:+-e "$rack_edit"} /etc/mr-template/cluster.toml > /etc/mr/cluster.toml.new
mv /etc/mr/cluster.toml.new /etc/mr/cluster.toml
for _ in $(seq 1 120); do
  nslookup "$SELF_DNS" >/dev/null 2>&1 && exit 0
  sleep 1
done
echo "configure: $SELF_DNS does not resolve after 120 s" >&2
exit 1
