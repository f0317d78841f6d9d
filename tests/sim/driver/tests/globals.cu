// Module globals of known sizes, for drv_image (compiled to a fat binary and a
// cubin by nvcc; never run).
__device__ float device_table[8];
__device__ double big_table[1000];
__global__ void touch_globals() { device_table[0] = (float)big_table[1]; }
