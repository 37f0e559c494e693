#!/usr/bin/env bash
# Everything Skiff needs on a machine besides Node and npm. Idempotent; quiet when all is present.
# The dev preset runs simulated containers, so today this only checks kubectl (used by the tests and
# the walkthrough). Presets with real runtimes (containerd, runc, CNI plugins) will install their
# Debian packages here.
set -euo pipefail
need_node_major=20
node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt "$need_node_major" ]; then
  echo "skiff needs Node >= 20.19 (found $(node -v))" >&2
  exit 1
fi
if ! command -v kubectl >/dev/null 2>&1; then
  echo "installing kubectl from Debian packages" >&2
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq kubernetes-client; else sudo apt-get update -qq && sudo apt-get install -y -qq kubernetes-client; fi
fi
