/* Module images built by the real nvcc: a fat binary and a bare cubin give
 * their globals' real sizes (from the ELF symbol table) and zeroed backing
 * memory that copies reach; an image the driver cannot read (PTX text) still
 * loads, and its globals get the 64 KiB default.
 *
 * usage: drv_image FATBIN CUBIN */
#include "drv_test.h"

#include <string.h>

static char *read_file(const char *path)
{
  FILE *f = fopen(path, "rb");
  CHECK(f);
  CHECK(fseek(f, 0, SEEK_END) == 0);
  long n = ftell(f);
  CHECK(n > 0);
  rewind(f);
  char *buf = malloc((size_t)n + 1);
  CHECK(buf && fread(buf, 1, (size_t)n, f) == (size_t)n);
  buf[n] = 0;
  fclose(f);
  return buf;
}

static void check_image(const void *image, size_t want_small, size_t want_big)
{
  CUmodule m;
  CUdeviceptr small, big, again;
  size_t small_size = 0, big_size = 0;
  CHECK_CU(cuModuleLoadData(&m, image));
  CHECK_CU(cuModuleGetGlobal(&small, &small_size, m, "device_table"));
  CHECK_CU(cuModuleGetGlobal(&big, &big_size, m, "big_table"));
  CHECK(small_size == want_small && big_size == want_big);
  CHECK_CU(cuModuleGetGlobal(&again, NULL, m, "device_table"));
  CHECK(again == small);
  float in[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8] = {0};
  CHECK_CU(cuMemcpyDtoH(out, small, sizeof out));
  CHECK(out[0] == 0 && out[7] == 0);
  CHECK_CU(cuMemcpyHtoD(small, in, sizeof in));
  CHECK_CU(cuMemcpyDtoH(out, small, sizeof out));
  CHECK(!memcmp(in, out, sizeof in));
  unsigned int type = 0;
  CHECK_CU(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, big + want_big - 1));
  CHECK(type == CU_MEMORYTYPE_DEVICE);
  CUfunction f;
  const char *name;
  CHECK_CU(cuModuleGetFunction(&f, m, "_Z13touch_globalsv"));
  CHECK_CU(cuFuncGetName(&name, f));
  CHECK(!strcmp(name, "_Z13touch_globalsv"));
  CHECK_CU(cuModuleUnload(m));
  CHECK_RESULT(cuModuleGetFunction(&f, m, "_Z13touch_globalsv"), CUDA_ERROR_INVALID_HANDLE);
}

int main(int argc, char **argv)
{
  if (argc != 3) {
    fprintf(stderr, "usage: drv_image FATBIN CUBIN\n");
    return 2;
  }
  test_init();
  check_image(read_file(argv[1]), 32, 8000);
  check_image(read_file(argv[2]), 32, 8000);
  check_image(".version 8.0\n.target sm_90\n.address_size 64\n", 65536, 65536);
  CUmodule m;
  CHECK_RESULT(cuModuleLoad(&m, "/nonexistent/module.cubin"), CUDA_ERROR_FILE_NOT_FOUND);
  CHECK_CU(cuModuleLoad(&m, argv[2]));
  puts("drv_image ok");
  return 0;
}
