#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `main` of every fuzz executable.
///
/// Built with `-sanitize=fuzzer` (scripts/fuzz.sh), the binary contains
/// libFuzzer and hands it the command line. Built normally, it replays the
/// files and directories it is given (`--write-seeds DIR` writes the seed
/// corpus instead), so the same target runs a corpus without libFuzzer.
public enum FuzzDriver {
    /// The target libFuzzer's C callback runs; set once, before fuzzing starts.
    nonisolated(unsafe) private static var current = FuzzTarget.frames

    private typealias TestOneInput = @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
    private typealias RunDriver = @convention(c) (
        UnsafeMutablePointer<Int32>, UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
        TestOneInput) -> Int32

    /// Fuzzes (or replays, or writes seeds for) `target` and exits.
    public static func main(_ target: FuzzTarget) -> Never {
        current = target
        // libFuzzer's entry point, present only in a -sanitize=fuzzer build (exported by scripts/fuzz.sh).
        if let symbol = dlsym(dlopen(nil, RTLD_NOW), "LLVMFuzzerRunDriver") {
            let runDriver = unsafeBitCast(symbol, to: RunDriver.self)
            var argc = CommandLine.argc
            var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
            exit(runDriver(&argc, &argv) { data, size in
                do {
                    try FuzzDriver.current.run(UnsafeRawBufferPointer(start: data, count: size))
                } catch {
                    fatalError("fuzz property broken: \(error)")
                }
                return 0
            })
        }
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "--write-seeds", arguments.count == 2 {
            exit(FuzzCorpus.writeSeeds(of: target, to: arguments[1]) ? 0 : 1)
        }
        guard !arguments.isEmpty, !arguments.contains(where: { $0.hasPrefix("-") }) else {
            print("""
                usage: \(CommandLine.arguments[0]) FILE|DIR...   replay inputs (no libFuzzer in this build)
                       \(CommandLine.arguments[0]) --write-seeds DIR
                build with scripts/fuzz.sh to fuzz
                """)
            exit(2)
        }
        exit(FuzzCorpus.replay(target, paths: arguments) ? 0 : 1)
    }
}
