# Sourced by the scripts: environment for running Ringside's MPI jobs on this machine.

# Open MPI refuses to start as root unless told; the README's commands run as root on fresh machines.
if [[ $(id -u) -eq 0 ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
# More ranks than cores is allowed (a 1-core machine can still run the 2-rank job).
export OMPI_MCA_rmaps_base_oversubscribe=1

# OpenBLAS 0.3.21 does not recognise some virtual CPUs and falls back to its slowest x86-64
# kernel ("Prescott", ~30 GFLOP/s per core here, against ~150 with the SkylakeX kernel). Where the
# CPU has AVX-512 and the user chose nothing, pick the AVX-512 kernel.
if [[ -z "${OPENBLAS_CORETYPE:-}" ]] && grep -qw avx512f /proc/cpuinfo 2>/dev/null; then
  export OPENBLAS_CORETYPE=SkylakeX
fi
