#!/usr/bin/env bash
# Runs the life of real public Helm charts against a Skiff cluster with helm 4: install --wait, upgrade (a value
# change, checked on the object) --wait, rollback --wait (checked), uninstall --wait, then checks that nothing of
# the release is left. By hand, not CI: charts come from local git mirrors of their GitHub repositories and are
# never committed.
#
#   scripts/public-charts.sh [--mirrors DIR] [--charts DIR] [--only a,b] [--workarounds] [--timeout 120s]
#
# Without KUBECONFIG it starts `npx skiff up` in a fresh data dir (stopped at the end); with KUBECONFIG it uses
# that cluster. Logs (helm --debug per step, skiff's stderr) stay in the work dir printed at the end.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HELM="${HELM:-$ROOT/.tools/helm/helm}"
KUBECTL="${KUBECTL:-$ROOT/.tools/kubectl-1.36/kubectl}"
MIRRORS="${SKIFF_CHART_MIRRORS:-/work/.mirror}"
CHARTS=""
ONLY=""
WORKAROUNDS=0
TIMEOUT="120s"
LOG_LEVEL="debug"
LEFTOVER_WAIT=30

# name | GitHub repository | chart path | namespace | install flags (kept on upgrade) | upgrade flags (the change) |
# what the change shows: object, JSONPath, value after install, after upgrade ("-": empty) |
# what --workarounds adds: helm flags, or the name of a chart patch in patch_chart
TABLE=(
  "kube-state-metrics|prometheus-community/helm-charts|charts/kube-state-metrics|monitoring||--set replicas=2|deployment/kube-state-metrics {.spec.replicas} 1 2|"
  "node-exporter|prometheus-community/helm-charts|charts/prometheus-node-exporter|monitoring||--set podAnnotations.skiff-upgrade=two|daemonset/node-exporter-prometheus-node-exporter {.spec.template.metadata.annotations.skiff-upgrade} - two|--set hostNetwork=false"
  "ingress-nginx|kubernetes/ingress-nginx|charts/ingress-nginx|ingress||--set controller.replicaCount=2|deployment/ingress-nginx-controller {.spec.replicas} 1 2|--set controller.admissionWebhooks.enabled=false"
  "bitnami-nginx|bitnami/charts|bitnami/nginx|web||--set replicaCount=2|deployment/bitnami-nginx {.spec.replicas} 1 2|--set resourcesPreset=none"
  "argo-rollouts|argoproj/argo-helm|charts/argo-rollouts|rollouts||--set controller.replicas=3|deployment/argo-rollouts {.spec.replicas} 2 3|"
  "cert-manager|jetstack/cert-manager|deploy/charts/cert-manager|cert-manager|--set installCRDs=true|--set replicaCount=2|deployment/cert-manager {.spec.replicas} 1 2|patch:printer-columns"
)

usage() {
  sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
  cat <<EOF

  --mirrors DIR    git mirrors, one per repository: DIR/<owner>+<name>/repo (bare or with .git), DIR/<owner>+<name>
                   or DIR/<name> (default: $MIRRORS, or \$SKIFF_CHART_MIRRORS)
  --charts DIR     exported charts as DIR/<owner>+<name>/<path>; a chart already there is used as it is, a
                   missing one is exported from its mirror's HEAD (default: a folder in the work dir)
  --only NAMES     comma-separated chart names from the list below
  --workarounds    add each chart's workaround for a known Skiff gap (docs/helm.md), to reach the later steps
  --timeout D      helm --timeout of every step (default: $TIMEOUT)
  --log-level L    skiff up --log-level (default: $LOG_LEVEL)
  HELM, KUBECTL    binaries (default: .tools/helm/helm, .tools/kubectl-1.36/kubectl)

charts:
EOF
  local row name repo path
  for row in "${TABLE[@]}"; do
    IFS='|' read -r name repo path _ <<<"$row"
    printf '  %-20s %s:%s\n' "$name" "$repo" "$path"
  done
}

while [ $# -gt 0 ]; do
  case "$1" in
    --mirrors) MIRRORS="$2"; shift 2 ;;
    --charts) CHARTS="$2"; shift 2 ;;
    --only) ONLY="$2"; shift 2 ;;
    --workarounds) WORKAROUNDS=1; shift ;;
    --timeout) TIMEOUT="$2"; shift 2 ;;
    --log-level) LOG_LEVEL="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "public-charts: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

for tool in "$HELM" "$KUBECTL"; do
  [ -x "$tool" ] || { echo "public-charts: $tool is missing: run \`bash scripts/install-system-deps.sh\`" >&2; exit 2; }
done

WORK="$(mktemp -d "${TMPDIR:-/tmp}/skiff-public-charts-XXXXXX")"
LOGS="$WORK/logs"
mkdir -p "$LOGS"
[ -n "$CHARTS" ] || CHARTS="$WORK/charts"
export HELM_CACHE_HOME="$WORK/helm/cache" HELM_CONFIG_HOME="$WORK/helm/config" HELM_DATA_HOME="$WORK/helm/data"
SKIFF_PID=""

stop_skiff() {
  [ -n "$SKIFF_PID" ] || return 0
  kill -INT -- "-$SKIFF_PID" 2>/dev/null
  for _ in $(seq 1 100); do kill -0 "$SKIFF_PID" 2>/dev/null || break; sleep 0.1; done
  kill -KILL -- "-$SKIFF_PID" 2>/dev/null
  SKIFF_PID=""
}
trap stop_skiff EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------------------------------------------- the charts

git_dir_of() { # owner/name → a git dir under $MIRRORS, or nothing
  local owner="${1%%/*}" name="${1#*/}" candidate
  for candidate in "$MIRRORS/$owner+$name/repo" "$MIRRORS/$owner+$name/repo/.git" "$MIRRORS/$owner+$name" \
    "$MIRRORS/$owner+$name/.git" "$MIRRORS/$name" "$MIRRORS/$name/.git"; do
    if [ -d "$candidate" ] && git --git-dir="$candidate" rev-parse --verify -q HEAD >/dev/null 2>&1; then
      echo "$candidate"
      return 0
    fi
  done
}

export_path() { # repo path → exports $CHARTS/<owner>+<name>/<path> from the mirror's HEAD unless it is there
  local repo="$1" path="$2" dest="$CHARTS/${1/\//+}" git_dir
  [ -d "$dest/$path" ] && return 0
  git_dir="$(git_dir_of "$repo")"
  [ -n "$git_dir" ] || { echo "no git mirror of $repo under $MIRRORS (fetch github:$repo)"; return 1; }
  mkdir -p "$dest"
  git --git-dir="$git_dir" archive HEAD "$path" | tar -x -C "$dest" || { echo "git archive $repo:$path failed"; return 1; }
  git --git-dir="$git_dir" log -1 --format="%H %cs" HEAD >"$dest/.commit"
}

# Chart-specific preparation, the smallest that makes a chart installable offline, as its own release would be.
prepare_chart() { # name repo path → prints the chart folder
  local name="$1" repo="$2" path="$3" dir="$CHARTS/${2/\//+}/$3"
  export_path "$repo" "$path" >&2 || return 1
  case "$name" in
    bitnami-nginx)
      # The `common` library chart comes from an OCI registry upstream; the same chart lives in the repository.
      if [ ! -d "$dir/charts/common" ]; then
        export_path "$repo" bitnami/common >&2 || return 1
        mkdir -p "$dir/charts" && cp -r "$CHARTS/${repo/\//+}/bitnami/common" "$dir/charts/common"
      fi
      ;;
    cert-manager)
      # Its release tooling concatenates deploy/crds/crd-*.yaml into templates/crds.yaml behind installCRDs.
      if [ ! -f "$dir/templates/crds.yaml" ]; then
        export_path "$repo" deploy/crds >&2 || return 1
        {
          echo '{{- if .Values.installCRDs }}'
          local first=1 crd
          for crd in "$CHARTS/${repo/\//+}"/deploy/crds/crd-*.yaml; do
            [ $first = 1 ] || echo '---'
            first=0
            cat "$crd"
          done
          echo '{{- end }}'
        } >"$dir/templates/crds.yaml"
      fi
      ;;
  esac
  echo "$dir"
}

# A workaround that edits the chart works on a copy, so the exported chart stays as upstream ships it.
patch_chart() { # name patch dir → prints the patched copy
  local copy="$WORK/patched/$1"
  rm -rf "$copy" && mkdir -p "$WORK/patched" && cp -r "$3" "$copy"
  case "$2" in
    printer-columns)
      # Skiff's printer columns take no JSONPath filter: show the first condition instead of the Ready one.
      grep -rl '\[?(@' "$copy" --include='*.yaml' | xargs -r sed -i 's/\[?(@\.type=="Ready")\]/[0]/g'
      ;;
    *) echo "unknown chart patch $2" >&2; return 1 ;;
  esac
  echo "$copy"
}

# ---------------------------------------------------------------------------------------------------- the cluster

if [ -n "${KUBECONFIG:-}" ]; then
  echo "cluster: KUBECONFIG=$KUBECONFIG"
else
  DATA_DIR="$WORK/skiff-data"
  (cd "$ROOT" && exec setsid npx skiff up --data-dir "$DATA_DIR" --port 0 --log-level "$LOG_LEVEL") \
    >"$WORK/skiff.out" 2>"$WORK/skiff.log" &
  SKIFF_PID=$!
  for _ in $(seq 1 600); do
    grep -q '^ready: ' "$WORK/skiff.out" 2>/dev/null && break
    kill -0 "$SKIFF_PID" 2>/dev/null || break
    sleep 0.1
  done
  if ! grep -q '^ready: ' "$WORK/skiff.out" 2>/dev/null; then
    echo "skiff up did not become ready; its output:" >&2
    cat "$WORK/skiff.out" "$WORK/skiff.log" >&2
    exit 1
  fi
  export KUBECONFIG
  KUBECONFIG="$(sed -n 's/^kubeconfig: //p' "$WORK/skiff.out")"
  echo "cluster: $(sed -n 's/^ready: //p' "$WORK/skiff.out") — skiff up, data dir $DATA_DIR"
fi
kc() { "$KUBECTL" --cache-dir "$WORK/kube-cache" "$@"; }
echo "helm $("$HELM" version --short), kubectl $(kc version --client -o yaml | sed -n 's/^ *gitVersion: //p' | head -1)$([ $WORKAROUNDS = 1 ] && echo ', with workarounds')"
echo

# ---------------------------------------------------------------------------------------------------- the steps

RESULTS=() # chart|step|PASS/FAIL/SKIP|seconds|note
VERSIONS=() # chart|repo:path|version|commit
FAILED=0

record() { # chart step result seconds note
  RESULTS+=("$1|$2|$3|$4|$5")
  [ "$3" = FAIL ] && FAILED=$((FAILED + 1))
  printf '%-20s %-10s %-4s %7s  %s\n' "$1" "$2" "$3" "$4" "$5"
}

# step chart step-name command… → runs it with its output in a log, prints one line, returns its status
step() {
  local name="$1" what="$2" log="$LOGS/$1-$2.log" start status note=""
  shift 2
  start=$(date +%s%N)
  "$@" >"$log" 2>&1
  status=$?
  local seconds
  seconds="$(awk "BEGIN { printf \"%.1fs\", ($(date +%s%N) - $start) / 1e9 }")"
  if [ $status = 0 ]; then
    note="$(grep -m1 '^NOTE: ' "$log" | sed 's/^NOTE: //')"
    record "$name" "$what" PASS "$seconds" "$note"
  else
    note="$(grep -m1 -E '^(Error|error): |^FAIL: ' "$log" | sed 's/^FAIL: //' || true)"
    [ -n "$note" ] || note="$(tail -n1 "$log")"
    record "$name" "$what" FAIL "$seconds" "$note"
  fi
  return $status
}

helm_step() { "$HELM" --debug "$@"; }

# The value the upgrade changes, read from its object ("-": empty). expect_value object jsonpath expected namespace
expect_value() {
  local expected="$3" actual
  [ "$expected" = - ] && expected=""
  actual="$(kc -n "$4" get "$1" -o "jsonpath=$2" 2>&1)" || { echo "FAIL: kubectl get $1: $actual"; return 1; }
  if [ "$actual" != "$expected" ]; then
    echo "FAIL: $1 $2 is '$actual', expected '$expected'"
    return 1
  fi
  echo "NOTE: $1 $2 = '$actual'"
}
# helm, then the value check: checked_helm object jsonpath expected namespace helm-arguments…
checked_helm() { helm_step "${@:5}" && expect_value "$1" "$2" "$3" "$4"; }

# What of the release is still there after uninstall, by two measures: every object of `helm get manifest` taken
# before uninstall, and everything labelled app.kubernetes.io/instance=<release> (which also finds hook objects)
# or owner=helm,name=<release> (release records). Objects kept on purpose (helm.sh/resource-policy: keep) are
# named apart. Waits up to LEFTOVER_WAIT for stragglers such as pods of a deleted ReplicaSet.
leftovers() { # release namespace manifest-file
  local release="$1" namespace="$2" manifest="$3" left kept
  local one='{{.kind}}/{{.metadata.name}} {{with .metadata.annotations}}{{with index . "helm.sh/resource-policy"}}{{.}}{{end}}{{end}}{{"\n"}}'
  local template="{{range .items}}$one{{end}}"
  local deadline=$(($(date +%s) + LEFTOVER_WAIT))
  while :; do
    left="$({
      [ -s "$manifest" ] && kc -n "$namespace" get -f "$manifest" --ignore-not-found -o go-template="{{if .items}}$template{{else if .kind}}$one{{end}}" 2>&1 |
        grep -v -e 'no matches for kind' -e "doesn't have a resource type" -e 'the server could not find the requested resource'
      kc -n "$namespace" get all,cm,secret,sa,role,rolebinding,ingress,pvc,pdb,networkpolicy,job,cronjob \
        -l "app.kubernetes.io/instance=$release" -o go-template="$template"
      kc get clusterrole,clusterrolebinding,crd,ingressclass,validatingwebhookconfiguration,mutatingwebhookconfiguration \
        -l "app.kubernetes.io/instance=$release" -o go-template="$template"
      kc -n "$namespace" get secret -l "owner=helm,name=$release" -o go-template="$template"
    } 2>&1 | sed '/^ *$/d' | sort -u)"
    kept="$(grep ' keep$' <<<"$left")"
    left="$(grep -v ' keep$' <<<"$left" | sed 's/ $//')"
    [ -z "$left" ] && break
    [ "$(date +%s)" -ge "$deadline" ] && break
    sleep 1
  done
  [ -n "$kept" ] && echo "NOTE: kept by the chart's resource policy: $(cut -d' ' -f1 <<<"$kept" | tr '\n' ' ')"
  if [ -n "$left" ]; then
    echo "FAIL: left behind: $(tr '\n' ' ' <<<"$left")"
    return 1
  fi
  echo "nothing of $release left"
}

run_chart() { # a TABLE row
  local name repo path namespace install_flags upgrade_flags check workaround dir version
  IFS='|' read -r name repo path namespace install_flags upgrade_flags check workaround <<<"$1"
  if ! dir="$(prepare_chart "$name" "$repo" "$path" 2>"$LOGS/$name-prepare.log")"; then
    record "$name" prepare FAIL - "$(tail -n1 "$LOGS/$name-prepare.log")"
    return
  fi
  version="$(sed -n 's/^version: *//p' "$dir/Chart.yaml" | head -1)"
  VERSIONS+=("$name|$repo:$path|$version|$(cut -c1-12 <"$CHARTS/${repo/\//+}/.commit" 2>/dev/null)")
  if [ $WORKAROUNDS = 1 ] && [ -n "$workaround" ]; then
    if [[ "$workaround" == patch:* ]]; then
      dir="$(patch_chart "$name" "${workaround#patch:}" "$dir")" || return
    else
      install_flags="$install_flags $workaround"
    fi
  fi
  local release="$name" object jsonpath installed upgraded
  read -r object jsonpath installed upgraded <<<"$check"
  local common=(-n "$namespace" --wait --timeout "$TIMEOUT")
  # shellcheck disable=SC2086 # the flag columns are word lists
  if step "$name" install helm_step install "$release" "$dir" --create-namespace $install_flags "${common[@]}"; then
    # shellcheck disable=SC2086
    if step "$name" upgrade checked_helm "$object" "$jsonpath" "$upgraded" "$namespace" \
      upgrade "$release" "$dir" $install_flags $upgrade_flags "${common[@]}"; then
      step "$name" rollback checked_helm "$object" "$jsonpath" "$installed" "$namespace" \
        rollback "$release" 1 "${common[@]}"
    else
      record "$name" rollback SKIP - "upgrade failed"
    fi
  else
    record "$name" upgrade SKIP - "install failed"
    record "$name" rollback SKIP - "install failed"
  fi
  local manifest="$WORK/manifests/$name.yaml"
  mkdir -p "$WORK/manifests"
  "$HELM" get manifest "$release" -n "$namespace" >"$manifest" 2>/dev/null
  if "$HELM" status "$release" -n "$namespace" >/dev/null 2>&1; then
    step "$name" uninstall helm_step uninstall "$release" "${common[@]}"
  else
    record "$name" uninstall SKIP - "no release"
  fi
  step "$name" leftovers leftovers "$release" "$namespace" "$manifest"
}

for row in "${TABLE[@]}"; do
  name="${row%%|*}"
  if [ -n "$ONLY" ] && [[ ",$ONLY," != *",$name,"* ]]; then continue; fi
  run_chart "$row"
done

# ---------------------------------------------------------------------------------------------------- summary

STEPS=(install upgrade rollback uninstall leftovers)
echo
printf '%-20s %-58s %-9s %-13s' chart repository:path version commit
printf ' %-9s' "${STEPS[@]}"
echo
for row in "${VERSIONS[@]}"; do
  IFS='|' read -r name source version commit <<<"$row"
  printf '%-20s %-58s %-9s %-13s' "$name" "$source" "$version" "$commit"
  for s in "${STEPS[@]}"; do
    result="-"
    for r in "${RESULTS[@]}"; do
      IFS='|' read -r rn rs rr _ <<<"$r"
      [ "$rn" = "$name" ] && [ "$rs" = "$s" ] && result="$rr"
    done
    printf ' %-9s' "$result"
  done
  echo
done
echo
echo "$FAILED failed step(s); logs in $LOGS$([ -n "$SKIFF_PID" ] && echo ", skiff's log $WORK/skiff.log")"
[ "$FAILED" = 0 ]
