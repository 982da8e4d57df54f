#ifndef C_FILE_SYSTEM_H
#define C_FILE_SYSTEM_H

/// Renames `from` to `to` only if `to` does not exist, atomically (Linux renameat2 with
/// RENAME_NOREPLACE, Darwin renamex_np with RENAME_EXCL). Returns 0, or -1 with errno set
/// (EEXIST when `to` exists; ENOSYS or EINVAL when the file system cannot do it).
int cfs_rename_noreplace(const char *from, const char *to);

/// Swaps `a` and `b` atomically, both of which must exist (Linux renameat2 with
/// RENAME_EXCHANGE, Darwin renamex_np with RENAME_SWAP). Returns 0, or -1 with errno set
/// (ENOSYS or EINVAL when the file system cannot do it).
int cfs_rename_exchange(const char *a, const char *b);

#endif
