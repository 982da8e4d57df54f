#ifndef C_FILE_SYSTEM_H
#define C_FILE_SYSTEM_H

/// Renames `from` to `to` only if `to` does not exist, atomically (Linux renameat2 with
/// RENAME_NOREPLACE, Darwin renamex_np with RENAME_EXCL). Returns 0, or -1 with errno set
/// (EEXIST when `to` exists; ENOSYS or EINVAL when the file system cannot do it).
int cfs_rename_noreplace(const char *from, const char *to);

#endif
