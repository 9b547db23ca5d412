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
public func eventually(seconds: Int = 60, every interval: Duration = .milliseconds(50),
                       _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now.advanced(by: .seconds(seconds))
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: interval)
    }
    return try await condition()
}
