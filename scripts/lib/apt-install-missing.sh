# Sourced by the install scripts: apt_install_missing TAG [--no-start] PACKAGE...
# installs the packages dpkg does not list as installed (nothing when all are), as root
# or through sudo. --no-start keeps the packages' system services from starting on
# install (a policy-rc.d for the duration): the scripts run their own instances.
apt_install_missing() {
  local tag=$1; shift
  local no_start=false
  if [[ ${1:-} == --no-start ]]; then no_start=true; shift; fi
  local missing=() pkg
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  (( ${#missing[@]} > 0 )) || return 0
  local sudo=""; [[ $(id -u) -ne 0 ]] && sudo="sudo"
  echo "$tag: apt-get install ${missing[*]}" >&2
  $sudo apt-get update -qq
  local added_policy=false
  if $no_start && [[ ! -e /usr/sbin/policy-rc.d ]]; then
    printf '#!/bin/sh\nexit 101\n' | $sudo tee /usr/sbin/policy-rc.d >/dev/null
    $sudo chmod +x /usr/sbin/policy-rc.d
    added_policy=true
  fi
  local status=0
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null || status=$?
  if $added_policy; then $sudo rm -f /usr/sbin/policy-rc.d; fi
  return $status
}
