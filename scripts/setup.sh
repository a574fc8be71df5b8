#!/usr/bin/env bash
# Set up everything on a fresh Debian machine: system packages (lavapipe Vulkan driver, Chromium,
# clang/lld for the WASM kernels), a virtual environment with the package and its test tools, and the
# browser assets (Pyodide core, pure wheels, TF.js for bench/browser_transformer.py) in build/web/.
# Idempotent: a second run is quick.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
dpkg -s mesa-vulkan-drivers >/dev/null 2>&1 || need+=(mesa-vulkan-drivers libvulkan1)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v clang >/dev/null 2>&1 || need+=(clang lld)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[desktop,test]"
.venv/bin/python scripts/fetch_web_assets.py
# The JupyterLite site (build/jupyterlite/: pinned jupyterlite in build/jlite-venv, Pyodide, the kernel's
# wheels, trueno_web and examples/trueno_web_tour.ipynb, and the kernel's start-up snapshot, made in headless
# Chromium); quick when up to date.
.venv/bin/python scripts/build_jupyterlite.py
echo "setup done: .venv ready"
