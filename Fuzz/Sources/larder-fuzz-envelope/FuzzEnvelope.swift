import LarderFuzzTargets

/// libFuzzer target `envelope` (see FuzzTarget.envelope); replays a corpus when built without -sanitize=fuzzer.
@main
enum FuzzEnvelope {
    static func main() { FuzzDriver.main(.envelope) }
}
