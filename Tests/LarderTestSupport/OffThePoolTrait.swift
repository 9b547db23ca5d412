public import Testing

/// Runs each test it applies to on `BlockingWorkExecutor.shared` instead of Swift's
/// cooperative pool, so that the test's blocking calls hold no thread another test needs.
/// On a suite it applies to every test in it.
public struct OffThePoolTrait: TestTrait, SuiteTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(for test: Test, testCase: Test.Case?,
                             performing function: @Sendable () async throws -> Void) async throws {
        try await withTaskExecutorPreference(BlockingWorkExecutor.shared) {
            try await function()
        }
    }
}

extension Trait where Self == OffThePoolTrait {
    /// Runs the test (or every test of the suite) on `BlockingWorkExecutor.shared`'s threads,
    /// where it may block without holding up the cooperative pool.
    public static var offThePool: Self { OffThePoolTrait() }
}
