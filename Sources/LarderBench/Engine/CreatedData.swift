import LarderSystem

/// What a run created on the server, named under its prefix, so that it can
/// be deleted afterwards (or named in the report when kept or left behind).
public final class CreatedData: Sendable {
    /// Every prefix starts with this; `larder bench --clean-up larder-bench-` removes every run's data.
    public static let namePrefix = "larder-bench-"

    /// `larder-bench-` and six random base-36 characters.
    public let prefix: String
    /// Wall-clock milliseconds when the run began (create calls without eaten_at land after it).
    let startedAtMilliseconds: Int64
    private let state = LockedValue<State>(State())

    struct State {
        var locationIDs: [String] = []
        var mealIDs: [String] = []
        /// Create calls ran whose ids are not (all) in `mealIDs`: meals eaten "now" under the prefix exist beyond them.
        var createCallsMade = false
        /// `--call` ran: anything named with the prefix may exist.
        var callsMade = false
    }

    init(prefix: String? = nil) {
        var random = SplitMix64(seed: MonotonicClock.nanoseconds() ^ UInt64(UInt32(bitPattern: getProcessID())) << 32)
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        self.prefix = prefix ?? Self.namePrefix + String((0..<6).map { _ in alphabet[random.below(alphabet.count)] })
        startedAtMilliseconds = Int64(wallClockSeconds() * 1000)
    }

    func addLocations(_ ids: [String]) { state.withLock { $0.locationIDs += ids } }
    func addMeals(_ ids: [String]) { state.withLock { $0.mealIDs += ids } }
    func noteCreateCalls() { state.withLock { $0.createCallsMade = true } }
    /// The create calls' ids: when every reply had one, no meal needs to be found by name.
    func addCreated(_ ids: [String], complete: Bool) {
        state.withLock {
            $0.mealIDs += ids
            if complete { $0.createCallsMade = false }
        }
    }
    func noteCalls() { state.withLock { $0.callsMade = true } }

    var snapshot: State { state.withLock { $0 } }

    /// Whether anything may have been created.
    public var isEmpty: Bool {
        let state = snapshot
        return state.locationIDs.isEmpty && state.mealIDs.isEmpty && !state.createCallsMade && !state.callsMade
    }

    /// `1,000 locations and the meal records of create calls named larder-bench-x1y2z3…`.
    public var summary: String {
        let state = snapshot
        var parts: [String] = []
        if !state.locationIDs.isEmpty { parts.append("\(Format.grouped(state.locationIDs.count)) locations") }
        if !state.mealIDs.isEmpty { parts.append("\(Format.grouped(state.mealIDs.count)) meal records") }
        if state.createCallsMade { parts.append("the meal records of the create calls") }
        if state.callsMade { parts.append("what the --call calls created") }
        let list = parts.count > 1 ? parts.dropLast().joined(separator: ", ") + " and " + parts[parts.count - 1]
            : parts.first ?? "nothing"
        return "\(list) named \(prefix)…"
    }
}
