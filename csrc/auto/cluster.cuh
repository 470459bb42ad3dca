// Thread-block clusters (sm_90+), for the kernels whose slices of K add up in their cluster's
// shared memory instead of a workspace and a second launch (auto/pipelined_tile.cuh,
// auto/skinny.cuh). Torch-free, like the ladder's kernels.
#pragma once

#include <cstdint>

namespace gemmtiles {

// A barrier of all the cluster's threads, whose shared-memory writes before it are visible to
// every block of the cluster after it; this block's rank in its cluster; and a float4 of the
// shared memory of the cluster's block `rank`, at the offset that `local` has in this block's.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

__device__ __forceinline__ unsigned cluster_rank() {
  unsigned rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  return rank;
}

__device__ __forceinline__ float4 load_cluster4(const float4* local, unsigned rank) {
  const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(local));
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(address), "r"(rank));
  float4 v;
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(remote)
               : "memory");
  return v;
}

// The float4 at `local`'s offset summed over the cluster's blocks 0 .. blocks - 1, in rank
// order (a fixed order: the same bits on every run).
__device__ __forceinline__ float4 cluster_sum4(const float4* local, int blocks) {
  float4 sum = load_cluster4(local, 0);
  for (int r = 1; r < blocks; ++r) {
    const float4 x = load_cluster4(local, static_cast<unsigned>(r));
    sum.x += x.x, sum.y += x.y, sum.z += x.z, sum.w += x.w;
  }
  return sum;
}
#endif

}  // namespace gemmtiles
