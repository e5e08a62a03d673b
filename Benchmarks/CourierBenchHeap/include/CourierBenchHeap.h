#ifndef COURIER_BENCH_HEAP_H
#define COURIER_BENCH_HEAP_H

#include <stddef.h>

/// Bytes the process's heap has handed out and not taken back (glibc's mallinfo2: small
/// allocations in use plus mmapped ones), or 0 where the C library does not say.
/// For the benchmark's memory figures: RSS also counts what the allocator keeps after frees.
size_t courier_bench_heap_in_use(void);

#endif
