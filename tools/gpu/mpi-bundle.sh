#!/usr/bin/env bash
# tools/gpu/mpi-bundle.sh DIR: this machine's Open MPI (Debian's 4.1) as a
# folder that runs from anywhere, for a machine that has none (the GPU
# machines: issue 27's scaling table on their 16 cores). Open MPI relocates
# by OPAL_PREFIX: DIR mirrors Debian's layout under it (bin/mpirun and
# orted, lib/x86_64-linux-gnu/openmpi/lib/openmpi3/ its plugins,
# share/openmpi/ its help texts), and DIR/lib holds its libraries and every
# library they and the plugins need except the C and C++ runtimes. There:
#   . DIR/env.sh && mpirun --allow-run-as-root -np 4 ./model train ...
set -euo pipefail
dir="${1:?usage: mpi-bundle.sh DIR}"
command -v orterun >/dev/null || { echo "mpi-bundle.sh: no Open MPI here (openmpi-bin)" >&2; exit 1; }
version=$(orterun --version 2>&1 | head -n 1)
case "$version" in
  *") 4."*) ;;
  *) echo "mpi-bundle.sh: made for Open MPI 4 (Debian's layout), this is: $version" >&2; exit 1 ;;
esac
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
plugins="/usr/lib/$multiarch/openmpi/lib/openmpi3"
rm -rf "$dir"
mkdir -p "$dir/bin" "$dir/lib" "$dir/lib/$multiarch/openmpi/lib" "$dir/share" "$dir/etc"
cp "$(readlink -f "$(command -v orterun)")" "$dir/bin/mpirun"
cp "$(readlink -f "$(command -v orted)")" "$dir/bin/orted"
cp -r "$plugins" "$dir/lib/$multiarch/openmpi/lib/"
cp -r /usr/share/openmpi "$dir/share/"
[ -f /etc/openmpi/openmpi-mca-params.conf ] && cp /etc/openmpi/openmpi-mca-params.conf "$dir/etc/"
# libmpi (what a tfc binary dlopens) and every library of the programs,
# libmpi and the plugins, but the C and C++ runtimes (the GPU machine's own).
libmpi=$(readlink -f "/usr/lib/$multiarch/libmpi.so.40")
cp "$libmpi" "$dir/lib/libmpi.so.40"
for object in "$dir/bin/mpirun" "$dir/bin/orted" "$libmpi" "$plugins"/*.so; do
  ldd "$object" 2>/dev/null | awk '$3 ~ /^\// { print $1, $3 }'
done | sort -u | while read -r name path; do
  case "$name" in
    libc.so* | libm.so* | libpthread.so* | libdl.so* | librt.so* | ld-linux* | libstdc++.so* | \
      libgcc_s.so* | libresolv.so*) continue ;;
  esac
  [ -e "$dir/lib/$name" ] || cp -L "$path" "$dir/lib/$name"
done
cat >"$dir/env.sh" <<'ENV'
# Sourced: this Open MPI on the PATH, its libraries and plugins found here.
bundle="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export OPAL_PREFIX="$bundle" OPAL_SYSCONFDIR="$bundle/etc"
export PATH="$bundle/bin:$PATH" LD_LIBRARY_PATH="$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
ENV
echo "$version in $dir: $(du -sh "$dir" | cut -f1), $(ls "$dir/lib" | wc -l) libraries"
