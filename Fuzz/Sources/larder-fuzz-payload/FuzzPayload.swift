import LarderFuzzTargets

/// libFuzzer target `payload` (see FuzzTarget.payload); replays a corpus when built without -sanitize=fuzzer.
@main
enum FuzzPayload {
    static func main() { FuzzDriver.main(.payload) }
}
