#if canImport(Glibc)
import Glibc
#endif

/// The room left on the file system holding a path.
enum FreeSpace {
    /// Bytes this process may still write at `path` (blocks free to it: all free blocks for
    /// root, which may use the reserved ones); nil when unknown, or when the file system
    /// reports no sizes at all (some FUSE and virtual file systems report 0 blocks).
    static func bytes(at path: String) -> UInt64? {
        var space = statvfs()
        guard statvfs(path, &space) == 0, space.f_blocks > 0 else { return nil }
        let blocks = geteuid() == 0 ? space.f_bfree : space.f_bavail
        return UInt64(blocks) &* UInt64(space.f_frsize)
    }
}
