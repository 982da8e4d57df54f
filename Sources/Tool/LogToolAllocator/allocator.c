// The allocator settings of the logtool executable, read by jemalloc when it starts (the
// executable links jemalloc when the package trait "Jemalloc" is on: `--traits Jemalloc`).
//
// Why jemalloc: a merge decodes millions of small values on one thread and frees them on
// another, and glibc's malloc spent about a quarter of the CPU of a 1M-change merge on that
// (Benchmarks/README.md, "The allocator"). No well-kept Swift library replaces the allocator;
// jemalloc is the one the Swift server ecosystem's benchmark tool links.
//
// One arena per core instead of jemalloc's default of four per core: the same speed, and the
// peak memory of a 1M-change merge fell from about 160 MB to about 135 MB (the same figures).
#include "LogToolAllocator.h"

const char *malloc_conf = "percpu_arena:phycpu";
