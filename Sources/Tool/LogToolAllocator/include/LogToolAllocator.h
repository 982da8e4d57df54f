// jemalloc reads this when the process starts; nothing else uses it.
extern const char *malloc_conf;
