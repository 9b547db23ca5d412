public import Foundation
import LarderSystem

/// Creates an empty directory `<prefix>-<UUID>` in the system's temporary directory;
/// the caller removes it (`FileManager.default.removeItem(at:)`).
public func makeTemporaryDirectory(prefix: String) throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)",
                                                                                  isDirectory: true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory
}

/// Writes `token` and a newline to `<directory>/token`, as an operator would, and returns its path.
public func writeTokenFile(_ token: String, in directory: URL) throws -> String {
    let path = directory.appendingPathComponent("token").path
    try (token + "\n").write(toFile: path, atomically: false, encoding: .utf8)
    try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)  // as an operator keeps it
    return path
}

/// Directories `removeAtExit(_:)` was given, removed by one `atexit` handler.
private let directoriesToRemoveAtExit = LockedValue<[URL]>([])

/// Removes `directory` when the test process exits: for one a static property made once for
/// the whole run, which no test can remove when it is done with it.
public func removeAtExit(_ directory: URL) {
    let first = directoriesToRemoveAtExit.withLock { directories in
        directories.append(directory)
        return directories.count == 1
    }
    guard first else { return }
    atexit {
        for directory in directoriesToRemoveAtExit.withLock({ $0 }) {
            try? FileManager.default.removeItem(at: directory)
        }
    }
}
