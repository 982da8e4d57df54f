// The allocator settings of the logtool executable, read by jemalloc when it starts (the
// executable links jemalloc when the package trait "Jemalloc" is on: `--traits Jemalloc`).
//
// Why jemalloc: a merge decodes millions of small values on some threads and frees them on
// another. With glibc's malloc, allocating and freeing them took about a quarter of the CPU of
// a 1M-change merge; with jemalloc, the same code merged it 12% faster (Benchmarks/README.md,
// "The allocator"). No well-kept Swift library replaces the allocator, and jemalloc
// is the one the Swift server ecosystem's benchmark tool links.
//
// One arena for the process: the threads' caches serve most allocations, and on the 2-core
// machine one arena was as fast as jemalloc's default of four per core while its peak memory
// was the lowest measured (about 133 MB against about 160 MB for that 1M-change merge).
#include "LogToolAllocator.h"

const char *malloc_conf = "narenas:1";
