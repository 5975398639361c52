// Fixture shared-bank-conflicts: a matrix transpose through a 32x32 shared tile without
// padding. Each warp writes a row of the tile and reads a column of it: the 32 lanes of a
// column read hit one bank, a 32-way conflict. (CUDA C: Triton pads and swizzles its shared
// layouts, so a Triton kernel does not show this reliably.)
#include <cstdio>
#include <cuda_runtime.h>

constexpr int kTile = 32;

__global__ void bank_conflicts_kernel(const float* in, float* out, int n) {
  __shared__ float tile[kTile][kTile];
  int x = blockIdx.x * kTile + threadIdx.x;
  for (int j = threadIdx.y; j < kTile; j += blockDim.y) {
    tile[j][threadIdx.x] = in[(blockIdx.y * kTile + j) * n + x];
  }
  __syncthreads();
  int tx = blockIdx.y * kTile + threadIdx.x;
  for (int j = threadIdx.y; j < kTile; j += blockDim.y) {
    out[(blockIdx.x * kTile + j) * n + tx] = tile[threadIdx.x][j];
  }
}

int main() {
  const int n = 8192;
  float *in = nullptr, *out = nullptr;
  cudaMalloc(&in, sizeof(float) * n * n);
  cudaMalloc(&out, sizeof(float) * n * n);
  cudaMemset(in, 0, sizeof(float) * n * n);
  dim3 grid(n / kTile, n / kTile), block(kTile, 8);
  for (int i = 0; i < 3; ++i) bank_conflicts_kernel<<<grid, block>>>(in, out, n);
  cudaError_t err = cudaDeviceSynchronize();
  std::printf("bank_conflicts: %s\n", cudaGetErrorString(err));
  cudaFree(in);
  cudaFree(out);
  return err == cudaSuccess ? 0 : 1;
}
