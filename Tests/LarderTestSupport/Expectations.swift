public import LarderWire
public import Testing

/// Expects `body` to fail with `code`; returns the error for message checks.
@discardableResult
public func expectStatus(_ code: StatusCode, sourceLocation: SourceLocation = #_sourceLocation,
                         _ body: () async throws -> some Any) async -> RPCError? {
    do {
        _ = try await body()
        Issue.record("expected \(code.name), got OK", sourceLocation: sourceLocation)
        return nil
    } catch let error as RPCError {
        #expect(error.code == code, "message: \(error.message)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected RPCError \(code.name), got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// Polls `condition` every `interval` until it holds or `seconds` have passed (a bound
/// generous for a loaded machine); returns its last answer.
///
/// Time this task could not run does not count: a sleep that overshoots its `interval`
/// (both pool threads blocked, or a CPU hog holding both cores) moves the deadline by the
/// overshoot, up to `seconds` more in all. So a condition that other starved jobs are about
/// to make true (a reply queued behind this task's wake-up) still gets its polls.
public func eventually(seconds: Int = 60, every interval: Duration = .milliseconds(50),
                       _ condition: () async throws -> Bool) async rethrows -> Bool {
    let clock = ContinuousClock()
    var deadline = clock.now.advanced(by: .seconds(seconds))
    var granted = Duration.zero
    while clock.now < deadline {
        if try await condition() { return true }
        let asleep = clock.now
        try? await Task.sleep(for: interval)
        let overshoot = asleep.duration(to: clock.now) - interval
        if overshoot > interval, granted < .seconds(seconds) {
            let moved = min(overshoot, .seconds(seconds) - granted)
            granted += moved
            deadline = deadline.advanced(by: moved)
        }
    }
    return try await condition()
}
