// Swift cannot call renameat2 directly: glibc declares it only under _GNU_SOURCE.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include "CFileSystem.h"
#if defined(__linux__)
#include <linux/openat2.h>
#include <sys/syscall.h>
#endif

int cfs_rename_noreplace(const char *from, const char *to) {
#if defined(__APPLE__)
    return renamex_np(from, to, RENAME_EXCL);
#elif defined(RENAME_NOREPLACE)
    return renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE);
#else
    errno = ENOSYS;
    return -1;
#endif
}

int cfs_rename_exchange(const char *a, const char *b) {
#if defined(__APPLE__)
    return renamex_np(a, b, RENAME_SWAP);
#elif defined(RENAME_EXCHANGE)
    return renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE);
#else
    errno = ENOSYS;
    return -1;
#endif
}

int cfs_renameat_noreplace(int fromdir, const char *from, int todir, const char *to) {
#if defined(__APPLE__)
    return renameatx_np(fromdir, from, todir, to, RENAME_EXCL);
#elif defined(RENAME_NOREPLACE)
    return renameat2(fromdir, from, todir, to, RENAME_NOREPLACE);
#else
    errno = ENOSYS;
    return -1;
#endif
}

int cfs_open_unnamed(int dir) {
#if defined(O_TMPFILE)
    return openat(dir, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);
#else
    (void)dir;
    errno = EOPNOTSUPP;
    return -1;
#endif
}

int cfs_link_unnamed(int fd, int dir, const char *name) {
#if defined(__linux__)
    // linkat with AT_EMPTY_PATH needs a capability; the /proc link of the descriptor does not.
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    return linkat(AT_FDCWD, path, dir, name, AT_SYMLINK_FOLLOW);
#else
    (void)fd; (void)dir; (void)name;
    errno = EOPNOTSUPP;
    return -1;
#endif
}

int cfs_open_beneath(int dir, const char *path, int flags) {
#if defined(__linux__) && defined(SYS_openat2)
    // glibc has no wrapper before 2.41, and Swift cannot call the variadic syscall(2).
    struct open_how how = {.flags = (unsigned long long)flags, .mode = 0, .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH};
    return (int)syscall(SYS_openat2, dir, path, &how, sizeof how);
#elif defined(__APPLE__) && defined(O_NOFOLLOW_ANY)
    return openat(dir, path, flags | O_NOFOLLOW_ANY);
#else
    (void)dir; (void)path; (void)flags;
    errno = ENOSYS;
    return -1;
#endif
}
