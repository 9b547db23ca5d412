#!/usr/bin/env bash
# Installs what the HA scripts (scripts/ha-cluster.sh, scripts/ha-failover.sh)
# need on top of scripts/install-deps.sh: Patroni, etcd and HAProxy from Debian.
# Idempotent; skips apt when everything is already there. Not needed to build
# or test Larder itself.
set -euo pipefail

APT_PACKAGES=(patroni python3-etcd etcd-server etcd-client haproxy postgresql)
# The packages start system-wide services on install (etcd on 2379, haproxy's own
# configs): --no-start keeps them from starting, the HA scripts run their own.
source "$(dirname "$0")/lib/apt-install-missing.sh"
apt_install_missing install-ha-deps --no-start "${APT_PACKAGES[@]}"
echo "install-ha-deps: done" >&2
