#ifndef C_PREFETCH_H
#define C_PREFETCH_H

/// Asks the processor to bring the cache line holding `address` closer, for reading. A hint
/// only: it never faults, whatever the address, and has no effect a program can observe except
/// time. Swift has no way to issue it.
static inline void cpf_prefetch(const void *address) { __builtin_prefetch(address, 0, 3); }

#endif
