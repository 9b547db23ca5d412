import LarderFuzzTargets

/// libFuzzer target `frames` (see FuzzTarget.frames); replays a corpus when built without -sanitize=fuzzer.
@main
enum FuzzFrames {
    static func main() { FuzzDriver.main(.frames) }
}
