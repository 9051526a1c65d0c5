#!/usr/bin/env bash
# Test of deploy/k8s, offline: no Kubernetes cluster is needed or used.
# Under a minute (64 s on a loaded 2-core machine). On a copy of deploy/k8s:
#  1. checks both cluster files with the real parser (`mr config init`),
#     and makes the example overlay's secret inputs as a user would: a
#     token, and the CA and every certificate with `mr config init --tls`;
#  2. runs the init step (base/configure.sh) against a stub kubectl and
#     nslookup: the token and the node's zone land in the pod's own entry
#     only, and the result loads; a pod with no entry is refused;
#  3. validates every manifest of the base one by one, then the rendered
#     base and example overlay (`kubectl kustomize`), against the
#     Kubernetes JSON schemas (kubernetes-validate --strict: unknown
#     fields are errors), for the newest schema it ships and for 1.30;
#  4. checks what the schemas cannot: the overlay's namespace reaches the
#     RBAC subject, worker replicas equal the cluster file's entries, every
#     referenced ConfigMap, Secret, port and image is there, the
#     PodDisruptionBudget selects the workers with maxUnavailable 1; the
#     master's Secret holds its own key and no other, no worker mounts a
#     key, and only the workers' ServiceAccount may read their Secret;
#     the workers' identity (the Secret mr-worker-token) reaches the
#     master's and the workers' init steps and no other container;
#  5. runs a worker's init step on the rendered overlay's Secret (a stub
#     API server answering with the real kubectl's template): the pod gets
#     the CA's certificate and its own pair, nothing else, and its cluster
#     file both tokens; without mr-worker-token mounted, or with it equal
#     to the admin's token, the step refuses;
#  6. proves the validation bites: copies with an unknown field, a wrong
#     type and a missing required field must each be refused, naming it,
#     and copies that mount the workers' keys in the workers, or their
#     worker token in a worker's daemon, are refused.
# Needs kubectl (for kustomize) and kubernetes-validate (PyPI), which
# scripts/install-deps.sh installs; skips without them (fails under CI=true).
#   scripts/k8s-validate.sh [--keep]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
# shellcheck source=scripts/skip.sh
. "$ROOT/scripts/skip.sh"
KEEP=0
[ "${1:-}" = --keep ] && KEEP=1

command -v kubectl >/dev/null || skip k8s-validate "no kubectl (scripts/install-deps.sh installs kubernetes-client)"
# The kustomizations use `labels:` and `replicas:`, which the kustomize of
# kubectl 1.21 and later understands (Debian 12's kubernetes-client is 1.20).
minor=$(kubectl version --client -o json 2>/dev/null \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["clientVersion"]["minor"].rstrip("+"))' 2>/dev/null || echo 0)
[ "${minor:-0}" -ge 21 ] 2>/dev/null || skip k8s-validate "kubectl 1.$minor: its kustomize is too old (1.21 or later needed)"
KV=$(command -v kubernetes-validate || true)
[ -n "$KV" ] || [ ! -x /opt/mr-venv/bin/kubernetes-validate ] || KV=/opt/mr-venv/bin/kubernetes-validate
[ -n "$KV" ] || skip k8s-validate "no kubernetes-validate (pip install kubernetes-validate; scripts/install-deps.sh does)"
PY=$(head -n1 "$KV" | sed -n 's/^#!//p')
"$PY" -c 'import yaml' 2>/dev/null || PY=python3

MR_BIN_DIR=${MR_BIN_DIR:-$ROOT/target/debug}
MR="$MR_BIN_DIR/mr"
case "$MR" in /*) ;; *) MR="$ROOT/$MR" ;; esac # docs/deploy.md's steps run from the overlay
[ -x "$MR" ] || cargo build -p cli --bin mr

TMP=$(mktemp -d /tmp/mr-k8s-validate.XXXXXX)
COPY=""
cleanup() {
  local rc=$?
  [ -z "$COPY" ] || rm -rf "$COPY"
  if [ $rc -ne 0 ] || [ "$KEEP" = 1 ]; then echo "k8s-validate: files kept in $TMP"; else rm -rf "$TMP"; fi
  exit $rc
}
trap cleanup EXIT
fail() { echo "k8s-validate: FAIL: $*" >&2; exit 1; }
ok() { echo "   ok: $*"; }
step() { echo "-- $*"; }
K="$TMP/k8s"
cp -r "$ROOT/deploy/k8s" "$K"
# The newest schema kubernetes-validate ships, and an older release still
# in use, so that the manifests hold on both.
VERSIONS=("" "1.30.0")
validate() { # file...
  local v
  for v in "${VERSIONS[@]}"; do
    "$KV" --strict --quiet ${v:+-k "$v"} "$@" || return 1
  done
}

step "cluster files through the real parser; the overlay's token and certificates"
"$MR" -c "$K/base/cluster.toml" config init >"$TMP/log" 2>&1 || { cat "$TMP/log" >&2; fail "base/cluster.toml does not load"; }
grep -q "valid, 4 workers" "$TMP/log" || fail "base/cluster.toml: $(cat "$TMP/log")"
O="$K/overlays/example"
od -An -N16 -tx1 /dev/urandom | tr -d ' \n' > "$O/token"
od -An -N16 -tx1 /dev/urandom | tr -d ' \n' > "$O/worker-token"
"$MR" -c "$O/cluster.toml" config init --tls >"$TMP/log" 2>&1 || { cat "$TMP/log" >&2; fail "mr config init --tls on the overlay's cluster file"; }
grep -q "mr-worker-5 .*mr-worker-5.mr-worker" "$TMP/log" || fail "mr-worker-5's certificate does not name mr-worker-5.mr-worker: $(cat "$TMP/log")"
grep -q "^master .*mr-master" "$TMP/log" || fail "the master's certificate does not name mr-master"
[ -f "$O/ca.key" ] && [ ! -f "$O/tls/ca.key" ] || fail "the CA key is not kept apart from tls/"
ok "both files load (4 and 6 workers); certificates name the Services' DNS names; the CA key stays out of the Secret"

step "the init step: token and rack from a stub API server"
mkdir -p "$TMP/stub" "$TMP/pod/template" "$TMP/pod/etc" "$TMP/pod/token" "$TMP/pod/wtoken"
cat > "$TMP/stub/kubectl" <<'EOF'
#!/bin/sh
# Answers `kubectl get node NODE -o go-template=...` as the API server would.
[ "$1 $2" = "get node" ] || exit 1
case "$3" in node-a) printf 'eu-west-1a' ;; node-b) printf 'zone b/2' ;; *) printf '<no value>' ;; esac
EOF
printf '#!/bin/sh\nexit 0\n' > "$TMP/stub/nslookup"
chmod +x "$TMP/stub/kubectl" "$TMP/stub/nslookup"
cp "$K/base/cluster.toml" "$TMP/pod/template/"
printf 's3cr3t' > "$TMP/pod/token/token"
# The script's absolute paths point into the pod's volumes.
sed -e "s|/etc/mr-template|$TMP/pod/template|g; s|/etc/mr-token|$TMP/pod/token|g; s|/etc/mr-worker-token|$TMP/pod/wtoken|g; s|/etc/mr/|$TMP/pod/etc/|g" \
  "$K/base/configure.sh" > "$TMP/configure.sh"
runinit() { env PATH="$TMP/stub:$PATH" "$@" sh "$TMP/configure.sh"; }
runinit POD_NAME=mr-worker-2 NODE_NAME=node-b SELF_DNS=x >/dev/null || fail "configure.sh failed for a worker"
cp "$TMP/pod/etc/cluster.toml" "$TMP/w2.toml"
"$PY" - "$TMP/w2.toml" <<'PY' || fail "the worker's rendered cluster file is wrong"
import sys, tomllib
c = tomllib.load(open(sys.argv[1], "rb"))
assert c["token"] == "s3cr3t", c["token"]
racks = {w["name"]: w["rack"] for w in c["workers"]}
assert racks == {"mr-worker-0": "unset", "mr-worker-1": "unset", "mr-worker-2": "zone_b_2", "mr-worker-3": "unset"}, racks
PY
"$MR" -c "$TMP/w2.toml" config init >/dev/null || fail "the worker's rendered cluster file does not load"
runinit POD_NAME=mr-worker-0 NODE_NAME=node-z SELF_DNS=x >/dev/null || fail "configure.sh failed on a node without a zone"
grep -A3 '^name = "mr-worker-0"' "$TMP/pod/etc/cluster.toml" | grep -q '^rack = "default"' || fail "a node without a zone label did not give rack default"
runinit SELF_DNS=mr-master >/dev/null || fail "configure.sh failed for the master"
! grep -q '@TOKEN@' "$TMP/pod/etc/cluster.toml" || fail "the master's file still holds the placeholder"
! runinit POD_NAME=mr-worker-9 NODE_NAME=node-a SELF_DNS=x >/dev/null 2>&1 || fail "a pod with no [[workers]] entry was let through"
ok "the worker's own entry gets its node's zone (made a plain word), the others keep theirs; no zone: default; a pod with no entry is refused"

step "every base manifest, and both renderings, against the schemas (strict)"
for f in "$K"/base/*.yaml "$O/namespace.yaml"; do
  [ "$(basename "$f")" = kustomization.yaml ] && continue
  validate "$f" >"$TMP/log" 2>&1 || { cat "$TMP/log" >&2; fail "$f does not validate"; }
done
kubectl kustomize "$K/base" > "$TMP/base.yaml" || fail "kubectl kustomize base failed"
kubectl kustomize "$O" > "$TMP/example.yaml" || fail "kubectl kustomize overlays/example failed"
for f in base example; do
  validate "$TMP/$f.yaml" >"$TMP/log" 2>&1 || { cat "$TMP/log" >&2; fail "the rendered $f does not validate"; }
done
ok "$(grep -c '^kind:' "$TMP/base.yaml") objects in the base, $(grep -c '^kind:' "$TMP/example.yaml") in the example overlay, valid for the newest schema shipped and for 1.30"

step "docs/deploy.md's steps on a copy of the overlay, as a user makes one"
# "Run on Kubernetes": copied beside the example, so that `../../base`
# still resolves, and its secret inputs made in the copy.
COPY="$K/overlays/k8s-validate-copy-$$"
cp -r "$O" "$COPY"
rm -rf "$COPY/token" "$COPY/worker-token" "$COPY/ca.key" "$COPY/tls"
( cd "$COPY" &&
  od -An -N16 -tx1 /dev/urandom | tr -d ' \n' > token &&
  od -An -N16 -tx1 /dev/urandom | tr -d ' \n' > worker-token &&
  "$MR" -c cluster.toml config init --tls --san localhost >"$TMP/log" 2>&1 &&
  kubectl kustomize . > "$TMP/copy.yaml" ) || { cat "$TMP/log" >&2; fail "docs/deploy.md's overlay steps on a copy fail"; }
[ "$(grep -c '^kind:' "$TMP/copy.yaml")" = "$(grep -c '^kind:' "$TMP/example.yaml")" ] || fail "the copy renders $(grep -c '^kind:' "$TMP/copy.yaml") objects, the example $(grep -c '^kind:' "$TMP/example.yaml")"
grep -q '^cp -r deploy/k8s/overlays/example deploy/k8s/overlays/' docs/deploy.md || fail "the copy step in docs/deploy.md is not the one checked here"
rm -rf "$COPY"
# A copy elsewhere cannot find the base: docs/deploy.md must not suggest one.
cp -r "$O" "$TMP/elsewhere"
! kubectl kustomize "$TMP/elsewhere" >/dev/null 2>&1 || fail "a copy outside overlays/ rendered: docs/deploy.md's step may be loosened"
ok "a copy beside the example renders the same $(grep -c '^kind:' "$TMP/copy.yaml") objects; one elsewhere does not render"

step "what the schemas do not check"
cat > "$TMP/check.py" <<'PY'
import sys, tomllib, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
want_workers = int(sys.argv[2])
by = {(d["kind"], d["metadata"]["name"]): d for d in docs}
kinds = lambda k: [d for d in docs if d["kind"] == k]
cluster_scoped = {"Namespace", "ClusterRole", "ClusterRoleBinding"}
for d in docs:
    if d["kind"] not in cluster_scoped:
        assert d["metadata"].get("namespace") == "mr", (d["kind"], d["metadata"])
crb = kinds("ClusterRoleBinding")[0]
assert crb["subjects"][0]["namespace"] == "mr", crb["subjects"]
role = by[("ClusterRole", crb["roleRef"]["name"])]
assert role["rules"] == [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get"]}], role["rules"]
cms = {d["metadata"]["name"]: d for d in kinds("ConfigMap")}
secrets = {d["metadata"]["name"]: d for d in kinds("Secret")}
sts = {d["metadata"]["name"]: d for d in kinds("StatefulSet")}
master, worker = sts["mr-master"], sts["mr-worker"]
assert master["spec"]["replicas"] == 1
assert worker["spec"]["replicas"] == want_workers, worker["spec"]["replicas"]
cluster = next(v for k, v in cms.items() if k.startswith("mr-cluster-"))["data"]["cluster.toml"]
parsed = tomllib.loads(cluster)
names = [w["name"] for w in parsed["workers"]]
assert names == [f"mr-worker-{i}" for i in range(want_workers)], names
assert parsed["tls"] == {"ca": "tls/ca.pem", "dir": "tls"}, parsed.get("tls")
assert parsed["worker_token"] == "@WORKER_TOKEN@", parsed.get("worker_token")
# Each process gets its own key only: the master's Secret holds the
# master's pair; the workers' is mounted nowhere, read by each worker's
# init step (its own pair) as the one ServiceAccount allowed to.
tls_m = next(v for k, v in secrets.items() if k.startswith("mr-tls-master-"))
assert set(tls_m["data"]) == {"ca.pem", "master.pem", "master.key"}, set(tls_m["data"])
tls_w = secrets["mr-tls-workers"]
want = {"ca.pem"} | {f"mr-worker-{i}.{e}" for i in range(want_workers) for e in ("pem", "key")}
assert set(tls_w["data"]) == want, set(tls_w["data"]) ^ want
assert not any("client.key" in s.get("data", {}) for s in secrets.values()), "the client's key is in a Secret"
for s in sts.values():
    pod = s["spec"]["template"]["spec"]
    assert s["spec"]["selector"]["matchLabels"].items() <= s["spec"]["template"]["metadata"]["labels"].items()
    assert any(c["metadata"]["name"] == "data" for c in s["spec"]["volumeClaimTemplates"])
    for v in pod["volumes"]:
        if "configMap" in v:
            assert v["configMap"]["name"] in cms, v
        if "secret" in v:
            assert v["secret"]["secretName"] in secrets, v
    mounts = {v["name"] for v in pod["volumes"]} | {"data"}
    for c in pod["initContainers"] + pod["containers"]:
        assert "/" in c["image"] and ":" in c["image"], c["image"]
        for m in c.get("volumeMounts", []):
            assert m["name"] in mounts, (s["metadata"]["name"], m)
        ports = {p["name"] for p in c.get("ports", [])}
        for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
            if probe in c:
                assert c[probe]["httpGet"]["port"] in ports, (probe, c["name"])
        assert "resources" in c and "limits" in c["resources"], c["name"]
    svc = by[("Service", s["spec"]["serviceName"])]
    assert svc["spec"]["clusterIP"] == "None" and svc["spec"]["publishNotReadyAddresses"]
    assert svc["spec"]["selector"].items() <= s["spec"]["template"]["metadata"]["labels"].items()
w = worker["spec"]["template"]["spec"]["containers"][0]
assert w["readinessProbe"]["httpGet"]["path"] == "/readyz" and w["livenessProbe"]["httpGet"]["path"] == "/healthz"
assert worker["spec"]["template"]["spec"]["serviceAccountName"] == crb["subjects"][0]["name"]
m = master["spec"]["template"]["spec"]["containers"][0]
assert m["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http", "scheme": "HTTPS"}, m["livenessProbe"]
pdb = kinds("PodDisruptionBudget")[0]
assert pdb["spec"]["maxUnavailable"] == 1
assert pdb["spec"]["selector"]["matchLabels"].items() <= worker["spec"]["template"]["metadata"]["labels"].items()
def secret_volumes(pod):
    names = set()
    for v in pod["volumes"]:
        names |= {v["secret"]["secretName"]} if "secret" in v else set()
        for src in v.get("projected", {}).get("sources", []):
            names |= {src["secret"]["name"]} if "secret" in src else set()
    return names
wpod, mpod = worker["spec"]["template"]["spec"], master["spec"]["template"]["spec"]
token = {s for s in secrets if s.startswith("mr-token-")}
wtoken = {s for s in secrets if s.startswith("mr-worker-token-")}
assert len(token) == len(wtoken) == 1, (token, wtoken)
assert set(secrets[next(iter(wtoken))]["data"]) == {"token"}
assert secret_volumes(wpod) == token | wtoken, ("the workers mount", secret_volumes(wpod))
assert secret_volumes(mpod) == token | wtoken | {tls_m["metadata"]["name"]}, ("the master mounts", secret_volumes(mpod))
# The workers' identity reaches the init steps only, never a daemon's
# container (whose cluster file is rendered from it).
for pod in (wpod, mpod):
    vol = next(v["name"] for v in pod["volumes"] if v.get("secret", {}).get("secretName") in wtoken)
    users = [c["name"] for c in pod["initContainers"] + pod["containers"]
             if any(m["name"] == vol for m in c.get("volumeMounts", []))]
    assert users == ["configure"], ("mr-worker-token is mounted in", users)
init = next(c for c in wpod["initContainers"] if c["name"] == "configure")
assert {"name": "MR_TLS_SECRET", "value": "mr-tls-workers"} in init["env"], init["env"]
readers = [r for r in kinds("Role") if any("secrets" in x["resources"] for x in r["rules"])]
assert len(readers) == 1 and readers[0]["rules"] == [
    {"apiGroups": [""], "resources": ["secrets"], "resourceNames": ["mr-tls-workers"], "verbs": ["get"]}], readers
rb = [b for b in kinds("RoleBinding") if b["roleRef"]["name"] == readers[0]["metadata"]["name"]]
assert [s["name"] for b in rb for s in b["subjects"]] == [wpod["serviceAccountName"]], rb
PY
"$PY" "$TMP/check.py" "$TMP/example.yaml" 6 || fail "the rendered overlay is inconsistent"
ok "namespace mr everywhere (the RBAC subject too); 6 replicas = 6 entries; every ConfigMap, Secret, volume, probe port and image resolves; PDB maxUnavailable 1 on the workers; the master mounts its own key only, the workers none, and only their ServiceAccount reads their Secret; mr-worker-token reaches the two init steps only"

step "a worker's init step with TLS: its own key, from the rendered Secret"
mkdir -p "$TMP/secrets"
"$PY" - "$TMP/example.yaml" "$TMP/secrets" <<'PY'
import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d["kind"] == "Secret":
        yaml.safe_dump(d, open(f"{sys.argv[2]}/{d['metadata']['name']}.yaml", "w"))
PY
# `kubectl get secret NAME -o go-template=T` as the API server and kubectl
# answer it: the real kubectl runs the template on the rendered Secret.
cat > "$TMP/stub/kubectl" <<EOF
#!/bin/sh
case "\$1 \$2" in
  "get node") printf 'zone-a' ;;
  "get secret")
    [ -f "$TMP/secrets/\$3.yaml" ] || { echo "Error from server (NotFound): secrets \"\$3\" not found" >&2; exit 1; }
    [ "\$4" = -o ] || exit 1
    exec $(command -v kubectl) label --local -f "$TMP/secrets/\$3.yaml" stub=1 -o "\$5" ;;
  *) exit 1 ;;
esac
EOF
# The overlay's cluster file (six workers, worker_token, [tls]) as the
# template, the tokens the overlay's Secrets hold.
cp "$O/cluster.toml" "$TMP/pod/template/cluster.toml"
cp "$O/token" "$TMP/pod/token/token"
cp "$O/worker-token" "$TMP/pod/wtoken/token"
rm -rf "$TMP/pod/etc" && mkdir -p "$TMP/pod/etc"
runinit POD_NAME=mr-worker-4 NODE_NAME=node-a SELF_DNS=x MR_TLS_SECRET=mr-tls-workers >/dev/null \
  || fail "configure.sh with TLS failed for mr-worker-4"
[ "$(cd "$TMP/pod/etc/tls" && ls | tr '\n' ' ')" = "ca.pem mr-worker-4.key mr-worker-4.pem " ] \
  || fail "mr-worker-4's /etc/mr/tls holds $(ls "$TMP/pod/etc/tls"), not just ca.pem and its own pair"
for f in ca.pem mr-worker-4.pem mr-worker-4.key; do
  cmp -s "$TMP/pod/etc/tls/$f" "$O/tls/$f" || fail "$f differs from what mr config init --tls wrote"
  [ "$(stat -c %a "$TMP/pod/etc/tls/$f")" = 400 ] || fail "$f is mode $(stat -c %a "$TMP/pod/etc/tls/$f"), not 0400"
done
"$MR" -c "$TMP/pod/etc/cluster.toml" config init >/dev/null || fail "mr-worker-4's cluster file with its certificates does not load"
"$PY" - "$TMP/pod/etc/cluster.toml" "$O/token" "$O/worker-token" <<'PY' || fail "mr-worker-4's cluster file does not hold both tokens"
import sys, tomllib
c = tomllib.load(open(sys.argv[1], "rb"))
assert c["token"] == open(sys.argv[2]).read(), "token"
assert c["worker_token"] == open(sys.argv[3]).read(), "worker_token"
PY
rm -rf "$TMP/pod/etc" && mkdir -p "$TMP/pod/etc"
mv "$TMP/pod/wtoken/token" "$TMP/pod/wtoken/gone"
! runinit POD_NAME=mr-worker-4 NODE_NAME=node-a SELF_DNS=x MR_TLS_SECRET=mr-tls-workers >"$TMP/log" 2>&1 \
  || fail "a template with @WORKER_TOKEN@ and no mr-worker-token mounted was let through"
grep -q "no Secret mr-worker-token is mounted" "$TMP/log" || fail "the refusal does not name mr-worker-token: $(cat "$TMP/log")"
cp "$O/token" "$TMP/pod/wtoken/token"
! runinit POD_NAME=mr-worker-4 NODE_NAME=node-a SELF_DNS=x MR_TLS_SECRET=mr-tls-workers >"$TMP/log" 2>&1 \
  || fail "a worker_token equal to the token was let through"
grep -q "must differ from the token" "$TMP/log" || fail "the refusal does not say the tokens are equal: $(cat "$TMP/log")"
mv "$TMP/pod/wtoken/gone" "$TMP/pod/wtoken/token"
rm -rf "$TMP/pod/etc" && mkdir -p "$TMP/pod/etc"
rm -rf "$TMP/pod/etc" && mkdir -p "$TMP/pod/etc"
m_secret=$(cd "$TMP/secrets" && ls mr-tls-master-*.yaml | sed 's/\.yaml$//')
! runinit POD_NAME=mr-worker-4 NODE_NAME=node-a SELF_DNS=x MR_TLS_SECRET="$m_secret" >"$TMP/log" 2>&1 \
  || fail "a Secret without the pod's pair was let through"
grep -q "has no mr-worker-4.pem" "$TMP/log" || fail "the refusal does not say what is missing: $(cat "$TMP/log")"
ok "mr-worker-4 gets ca.pem, mr-worker-4.pem and mr-worker-4.key (mode 0400), the bytes mr config init wrote, and no other key, and both tokens; a Secret without its pair, a missing or reused worker_token are refused"

step "a manifest with a wrong field is refused"
broken() { # name sed-expression file-under-base expected-text
  rm -rf "$TMP/broken" && cp -r "$K" "$TMP/broken"
  sed -i "$2" "$TMP/broken/base/$3"
  cmp -s "$K/base/$3" "$TMP/broken/base/$3" && fail "the $1 edit changed nothing"
  kubectl kustomize "$TMP/broken/overlays/example" > "$TMP/broken.yaml" 2>"$TMP/log" || return 0
  if validate "$TMP/broken.yaml" >"$TMP/log" 2>&1; then
    fail "a rendering with $1 passed validation"
  fi
  grep -q "$4" "$TMP/log" || { cat "$TMP/log" >&2; fail "the refusal of $1 does not name $4"; }
  validate "$TMP/broken/base/$3" >/dev/null 2>&1 && fail "base/$3 with $1 passed validation alone"
  ok "$1: refused ($(grep -m1 -o "$4.*" "$TMP/log" | cut -c1-70))"
}
broken "an unknown field (podManagmentPolicy)" 's/podManagementPolicy:/podManagmentPolicy:/' worker.yaml podManagmentPolicy
broken "a wrong type (replicas: \"one\")" 's/^  replicas: 1$/  replicas: "one"/' master.yaml "'one' is not of type 'integer'"
broken "a missing required field (a container without a name)" 's/^        - name: master$/        - stdin: false/' master.yaml "'name' is a required property"
# What the schemas allow and the checks above refuse: every worker's key
# mounted in the workers.
rm -rf "$TMP/broken" && cp -r "$K" "$TMP/broken"
cat >> "$TMP/broken/overlays/example/tls-worker.yaml" <<'EOF'
      containers:
        - name: worker
          volumeMounts:
            - { name: tls, mountPath: /etc/mr/tls, readOnly: true }
      volumes:
        - name: tls
          secret: { secretName: mr-tls-workers }
EOF
kubectl kustomize "$TMP/broken/overlays/example" > "$TMP/broken.yaml" || fail "kubectl kustomize of the mounted-keys copy failed"
validate "$TMP/broken.yaml" >/dev/null 2>&1 || fail "the mounted-keys copy should be schema-valid (the checks must be what refuses it)"
! "$PY" "$TMP/check.py" "$TMP/broken.yaml" 6 >"$TMP/log" 2>&1 || fail "a rendering that mounts every worker's key in the workers passed the checks"
grep -q "mr-tls-workers" "$TMP/log" || { cat "$TMP/log" >&2; fail "the refusal of mounted keys does not name the Secret"; }
ok "every worker's key mounted in the workers: refused (schema-valid, caught by the checks)"
# And the workers' identity mounted in a worker's daemon container.
rm -rf "$TMP/broken" && cp -r "$K" "$TMP/broken"
cat >> "$TMP/broken/overlays/example/worker-token.yaml" <<'EOF'
      containers:
        - name: worker
          volumeMounts:
            - { name: worker-token, mountPath: /etc/mr-worker-token, readOnly: true }
EOF
kubectl kustomize "$TMP/broken/overlays/example" > "$TMP/broken.yaml" || fail "kubectl kustomize of the mounted-worker-token copy failed"
validate "$TMP/broken.yaml" >/dev/null 2>&1 || fail "the mounted-worker-token copy should be schema-valid"
! "$PY" "$TMP/check.py" "$TMP/broken.yaml" 6 >"$TMP/log" 2>&1 || fail "a rendering that mounts mr-worker-token in the worker daemon passed the checks"
grep -q "mr-worker-token is mounted in" "$TMP/log" || { cat "$TMP/log" >&2; fail "the refusal of a mounted worker token does not name it"; }
ok "mr-worker-token mounted in the worker's daemon: refused (schema-valid, caught by the checks)"
echo "k8s-validate: all passed"
