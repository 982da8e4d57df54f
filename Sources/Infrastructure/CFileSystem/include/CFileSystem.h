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

/// `cfs_rename_noreplace` for names relative to two open folders: neither name's last component
/// is followed if it is a link.
int cfs_renameat_noreplace(int fromdir, const char *from, int todir, const char *to);

/// Opens an unnamed regular file on the file system of folder `dir` (Linux O_TMPFILE): nothing
/// appears in the folder until `cfs_link_unnamed` names it, and a crash leaves nothing behind.
/// Returns a descriptor, or -1 with errno set (EOPNOTSUPP, EISDIR or EINVAL where the file system
/// or platform cannot do it).
int cfs_open_unnamed(int dir);

/// Gives the unnamed file `fd` the name `name` in folder `dir`; fails with EEXIST, replacing
/// nothing, when the name is taken.
int cfs_link_unnamed(int fd, int dir, const char *name);

/// Opens `path` (`/`-separated names) below folder `dir` with `flags`, following no link at
/// any of its names and never leaving `dir`, in one call (Linux openat2 with
/// RESOLVE_NO_SYMLINKS and RESOLVE_BENEATH; Darwin openat with O_NOFOLLOW_ANY). Returns a
/// descriptor, or -1 with errno set: ELOOP at a link, whichever name it is; ENOSYS, EPERM,
/// EINVAL, E2BIG or EAGAIN when the system cannot resolve it this way (an older kernel, a
/// filter, a concurrent rename), and the caller opens one name at a time instead.
int cfs_open_beneath(int dir, const char *path, int flags);

#endif
