import LarderFuzzTargets

/// libFuzzer target `http2` (see FuzzTarget.http2); replays a corpus when built without -sanitize=fuzzer.
@main
enum FuzzHTTP2 {
    static func main() { FuzzDriver.main(.http2) }
}
