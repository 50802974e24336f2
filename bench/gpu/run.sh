#!/bin/sh
# The GPU benchmark, on a machine with nothing but a GPU driver, a Vulkan loader (libvulkan1) and this folder:
# WebLLM's real kernels on the GPU through Dawn, with weights made up from the model library's metadata.
#   ./run.sh                 MemAgent's sizes on a hardware GPU, a few tokens on a software one
#   ./run.sh --help          the options
# Uses node 20.3 or later from PATH (or $NODE); otherwise the node carried here as node.xz, unpacked with xz or python3.
set -eu
here=$(cd "$(dirname "$0")" && pwd)

recent() {
  "$1" -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 3) ? 0 : 1)' 2>/dev/null
}

node_bin=${NODE:-}
if [ -z "$node_bin" ] && command -v node >/dev/null 2>&1 && recent node; then
  node_bin=node
fi
if [ -z "$node_bin" ]; then
  if [ ! -f "$here/node.xz" ]; then
    echo "This benchmark needs node 20.3 or later, and this bundle carries none: install node, or set NODE=/path/to/node." >&2
    exit 1
  fi
  unpacked="$here/unpacked"
  mkdir -p "$unpacked" 2>/dev/null && [ -w "$unpacked" ] || unpacked="${TMPDIR:-/tmp}/memagent-gpu-bench-node"
  mkdir -p "$unpacked"
  if [ ! -x "$unpacked/node" ]; then
    echo "Unpacking the node carried in this folder ($(cat "$here/node.version"))…" >&2
    if command -v xz >/dev/null 2>&1; then
      xz -dc "$here/node.xz" >"$unpacked/node.tmp"
    elif command -v python3 >/dev/null 2>&1; then
      python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' "$here/node.xz" "$unpacked/node.tmp"
    else
      echo "No node 20.3 or later here, and neither xz nor python3 to unpack the one in this folder: install one of the three." >&2
      exit 1
    fi
    chmod +x "$unpacked/node.tmp"
    mv "$unpacked/node.tmp" "$unpacked/node"
  fi
  node_bin="$unpacked/node"
fi
exec "$node_bin" "$here/launch.mjs" "$@"
