#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a whole (small) file: the client CA file, hashed into the session context.
enum FileBytes {
    /// The file's bytes; nil when it cannot be opened or read.
    static func read(_ path: String) -> [UInt8]? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
            bytes += chunk.prefix(count)
            if count < chunk.count { return ferror(file) == 0 ? bytes : nil }
        }
    }
}
