#!/usr/bin/env bash
# Installs what the HA scripts (scripts/ha-cluster.sh, scripts/ha-failover.sh)
# need on top of scripts/install-deps.sh: Patroni, etcd and HAProxy from Debian.
# Idempotent; skips apt when everything is already there. Not needed to build
# or test Larder itself.
set -euo pipefail

APT_PACKAGES=(patroni python3-etcd etcd-server etcd-client haproxy postgresql)
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if (( ${#missing[@]} > 0 )); then
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  echo "install-ha-deps: apt-get install ${missing[*]}" >&2
  $SUDO apt-get update -qq
  # The packages start system-wide services on install (etcd on 2379, haproxy on
  # 80/443 configs); policy-rc.d keeps them from starting: the HA scripts run their own.
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
    $SUDO chmod +x /usr/sbin/policy-rc.d
    trap '$SUDO rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
echo "install-ha-deps: done" >&2
