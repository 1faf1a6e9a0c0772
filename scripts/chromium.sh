#!/bin/sh
# Installs Debian's Chromium for the render tests and the benchmark when it is missing, then
# prints its version. Safe to run again.
set -eu

if [ ! -x /usr/bin/chromium ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "chromium is missing and installing it needs root: sudo $0" >&2
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update
    apt-get install -y chromium
fi

# The Debian wrapper prints a harmless 'unexpected operator' line on stderr.
/usr/bin/chromium --version 2>/dev/null
