public import Foundation
import CLarderSystem
import LarderSystem

/// A child process for tests, started with `posix_spawn` and reaped with `waitpid`: the parts
/// of Foundation's `Process` the tests use, without Foundation's `Process`.
///
/// On this toolchain (Swift 6.3, Linux) `Process.run()` crashed the whole test process now and
/// then: it copies each `/proc/self/fd` entry's full 256-byte name out of glibc's readdir
/// buffer, reading past its end (swift-corelibs-foundation#5472; SIGSEGV in `memcpy` under
/// `Process.run()` in a local run of the suite). Its reaper also races our own `waitpid`.
///
/// Set the properties, then `run()`. Each standard stream is a `FileHandle` (dup'ed into the
/// child), a `Pipe` (its child end dup'ed in and closed here after the spawn), or nil (inherited).
/// The child starts with no signal blocked and every signal at its default action, as from a
/// shell, and with no descriptor of this process but its three streams.
///
/// `@unchecked Sendable`: the properties are set by one thread before `run()`; the exit status
/// is behind a lock.
public final class SpawnedProcess: @unchecked Sendable {
    public var executableURL: URL?
    public var arguments: [String] = []
    /// The child's whole environment; nil inherits this process's.
    public var environment: [String: String]?
    public var currentDirectoryURL: URL?
    public var standardInput: Any?
    public var standardOutput: Any?
    public var standardError: Any?
    /// The child's pid once `run()` returned; 0 before.
    public private(set) var processIdentifier: Int32 = 0
    /// What `terminationStatus` reports once the child was reaped; nil while it runs.
    private let reaped = LockedValue<Int32?>(nil)

    public init() {}

    /// Why a child could not be started.
    public struct SpawnError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Starts the child.
    public func run() throws {
        guard let executableURL else { throw SpawnError(description: "no executable to run") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (stream, target) in [(standardInput, Int32(0)), (standardOutput, 1), (standardError, 2)] {
            guard let stream else { continue }
            if let pipe = stream as? Pipe {
                let end = target == 0 ? pipe.fileHandleForReading : pipe.fileHandleForWriting
                posix_spawn_file_actions_adddup2(&actions, end.fileDescriptor, target)
            } else if let handle = stream as? FileHandle {
                if handle === FileHandle.nullDevice || handle.fileDescriptor < 0 {
                    posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_RDWR, 0)
                } else {
                    posix_spawn_file_actions_adddup2(&actions, handle.fileDescriptor, target)
                }
            } else {
                throw SpawnError(description: "a standard stream must be a FileHandle or a Pipe, not \(type(of: stream))")
            }
        }
        posix_spawn_file_actions_addclosefrom_np(&actions, 3)
        if let currentDirectoryURL {
            posix_spawn_file_actions_addchdir_np(&actions, currentDirectoryURL.path)
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let path = executableURL.path
        let argv = ([path] + arguments).map { strdup($0) }
        defer { argv.forEach { free($0) } }
        let envp = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } }
        defer { envp?.forEach { free($0) } }
        var pid: pid_t = 0
        let result = if let envp {
            posix_spawn(&pid, path, &actions, &attributes, argv + [nil], envp + [nil])
        } else {
            posix_spawn(&pid, path, &actions, &attributes, argv + [nil], environ)
        }
        guard result == 0 else {
            throw SpawnError(description: "cannot run \(path): \(String(cString: strerror(result)))")
        }
        processIdentifier = pid
        // The child has its copies: the ends of pipes it uses are closed here, as Process does,
        // so that a reader sees end of file once the child is gone.
        for (stream, isInput) in [(standardInput, true), (standardOutput, false), (standardError, false)] {
            guard let pipe = stream as? Pipe else { continue }
            try? (isInput ? pipe.fileHandleForReading : pipe.fileHandleForWriting).close()
        }
    }

    /// Whether the child still runs (reaping it when it has ended).
    public var isRunning: Bool { exitStatus(waitingUpTo: 0) == nil }

    /// The child's exit code, or the number of the signal that ended it; 0 while it runs.
    public var terminationStatus: Int32 { exitStatus(waitingUpTo: 0) ?? 0 }

    /// Waits up to `seconds` for the child to end and returns its exit code, or the signal that
    /// killed it; nil while it still runs.
    public func exitStatus(waitingUpTo seconds: Double = 300) -> Int32? {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while true {
            let status = reaped.withLock { status -> Int32? in
                if status == nil, processIdentifier > 0 {
                    var raw: Int32 = 0
                    if waitpid(processIdentifier, &raw, WNOHANG) == processIdentifier {
                        let signal = raw & 0x7f
                        status = signal == 0 ? (raw >> 8) & 0xff : signal
                    }
                }
                return status
            }
            if status != nil || ContinuousClock.now >= deadline { return status }
            usleep(5_000)
        }
    }

    /// Waits for the child to end, however long it takes.
    public func waitUntilExit() {
        while exitStatus(waitingUpTo: 3600) == nil {}
    }

    /// Sends SIGTERM, unless the child was reaped already (its pid may be another's by now).
    public func terminate() { signal(SIGTERM) }

    /// Sends SIGINT, unless the child was reaped already.
    public func interrupt() { signal(SIGINT) }

    /// Sends `number`, unless the child was reaped already.
    public func signal(_ number: Int32) {
        reaped.withLock { status in
            if status == nil, processIdentifier > 0 { _ = kill(processIdentifier, number) }
        }
    }

    /// Kills the child (SIGKILL) and reaps it.
    public func killAndReap() {
        signal(SIGKILL)
        _ = exitStatus(waitingUpTo: 60)
    }

    deinit {
        // Nobody waits for it any more: reap it when it ends, so it leaves no zombie.
        guard processIdentifier > 0, reaped.withLock({ $0 }) == nil else { return }
        let pid = processIdentifier
        _ = SystemThread(name: "larder-test-reap") {
            var raw: Int32 = 0
            while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
        }
    }
}
