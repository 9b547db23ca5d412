import Foundation
import LarderTestSupport

/// Headless Chromium (Debian package `chromium`, installed by scripts/install-deps.sh)
/// for checking that HTML reports render.
enum Chromium {
    struct Missing: Error, CustomStringConvertible {
        var description: String { "chromium not found on PATH; install it with scripts/install-deps.sh (Debian package chromium)" }
    }

    static func executable() throws -> URL {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            for name in ["chromium", "chromium-browser"] {
                let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent(name)
                if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            }
        }
        throw Missing()
    }

    /// The DOM of `file` after its scripts ran (`--dump-dom`); a generous timeout for a loaded machine.
    static func dumpDOM(of file: URL, timeoutSeconds: Double = 180) throws -> String {
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("larder-chromium-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: profile) }
        let process = SpawnedProcess()
        process.executableURL = try executable()
        process.arguments = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
                             "--user-data-dir=\(profile.path)", "--dump-dom", file.absoluteString]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let reader = DispatchQueue(label: "chromium-output")
        nonisolated(unsafe) var data = Data()
        let done = DispatchSemaphore(value: 0)
        reader.async {
            data = output.fileHandleForReading.readDataToEndOfFile()
            done.signal()
        }
        if done.wait(timeout: .now() + timeoutSeconds) == .timedOut {
            process.terminate()
            _ = done.wait(timeout: .now() + 10)
        }
        if process.exitStatus(waitingUpTo: 30) == nil { process.killAndReap() }
        return String(decoding: data, as: UTF8.self)
    }
}
