#!/usr/bin/env bash
# Makes .gpu-carry/ in the repo root: what tests/gpu/cuda_check.sh needs on a GPU machine
# that has CUDA, pip's torch, CMake and a compiler but none of our Debian packages and no
# network (the device machine lent to some sessions). Run here, on Debian, from the repo root:
#
#   tests/gpu/prepare.sh GLOO_SRC      GLOO_SRC: a checkout of github.com/pytorch/gloo
#
# It holds MPICH's Hydra (mpiexec.hydra, hydra_pmi_proxy and the libraries they load, their
# RUNPATH pointed at each other), a CMake prefix with fmt, yaml-cpp, CLI11, nlohmann_json and
# Catch2 from this machine's packages, and Gloo's headers with the gloo/config.h its CMake
# writes for torch's build (TCP transport, torch's dtypes): pip's torch ships no Gloo headers.
set -euo pipefail
gloo=${1:?usage: tests/gpu/prepare.sh GLOO_SRC (a checkout of github.com/pytorch/gloo)}
[ -f "$gloo/gloo/config.h.in" ] || { echo "prepare.sh: $gloo/gloo/config.h.in: no such file" >&2; exit 2; }
command -v patchelf >/dev/null || { echo "prepare.sh: needs patchelf (apt-get install patchelf)" >&2; exit 2; }
out=.gpu-carry arch=/usr/lib/x86_64-linux-gnu
rm -rf "$out"
mkdir -p "$out"/bin "$out"/lib "$out"/deps/include "$out"/deps/lib/cmake "$out"/deps/share/cmake \
  "$out"/deps/lib/x86_64-linux-gnu/cmake

cp /usr/bin/mpiexec.hydra /usr/bin/hydra_pmi_proxy "$out"/bin/
ln -s mpiexec.hydra "$out"/bin/mpiexec
for lib in libhwloc.so.15 libslurm.so.38 libudev.so.1; do cp -L "$arch/$lib" "$out"/lib/; done
for f in "$out"/bin/mpiexec.hydra "$out"/bin/hydra_pmi_proxy; do patchelf --set-rpath '$ORIGIN/../lib' "$f"; done
for f in "$out"/lib/*.so.*; do patchelf --set-rpath '$ORIGIN' "$f"; done

cp -r /usr/include/{fmt,yaml-cpp,CLI,nlohmann,catch2} "$out"/deps/include/
cp -r "$arch"/cmake/{fmt,yaml-cpp} "$out"/deps/lib/x86_64-linux-gnu/cmake/
cp -a "$arch"/libfmt.so* "$arch"/libyaml-cpp.so* "$arch"/libyaml-cpp.a "$out"/deps/lib/x86_64-linux-gnu/
cp -r /usr/share/cmake/{CLI11,nlohmann_json} "$out"/deps/share/cmake/
cp -r /usr/lib/cmake/Catch2 "$out"/deps/lib/cmake/ && cp /usr/lib/libCatch2WithMain.a "$out"/deps/lib/

(cd "$gloo" && find gloo -name '*.h' -print0 | tar --null -cf - -T -) | tar -xf - -C "$out"/deps/include
version() { sed -n "s/^set(GLOO_VERSION_$1 \([0-9]*\))/\1/p" "$gloo/CMakeLists.txt"; }
sed -e "s/@GLOO_VERSION_MAJOR@/$(version MAJOR)/; s/@GLOO_VERSION_MINOR@/$(version MINOR)/" \
    -e "s/@GLOO_VERSION_PATCH@/$(version PATCH)/" \
    -e 's/#cmakedefine01 \(GLOO_HAVE_TRANSPORT_TCP\|GLOO_USE_TORCH_DTYPES\)$/#define \1 1/' \
    -e 's/#cmakedefine01 \([A-Z_]*\)/#define \1 0/' "$gloo/gloo/config.h.in" >"$out"/deps/include/gloo/config.h
echo "prepare.sh: $out ($(du -sh "$out" | cut -f1)); on the GPU machine: bash tests/gpu/cuda_check.sh"
