/// How the open-loop rate changes over the measured window (`--load-schedule`),
/// like ghz: `step` adds `step` calls/s every `stepSeconds`, `line` adds `step`
/// calls/s every second; both stop changing at `end` when given. The warm-up
/// runs at the start rate; the ramp starts with the measured window.
public struct LoadSchedule: Sendable, Equatable {
    /// The shape of the ramp.
    public enum Kind: String, Sendable, CaseIterable {
        case step, line
    }

    public var kind: Kind
    /// Calls per second at the start of the measured window.
    public var start: Double
    /// Calls per second added per step (`step`) or per second (`line`); negative ramps down.
    public var step: Double
    /// Length of a step; a `line` ramp is reported in windows of this length.
    public var stepSeconds: Double
    /// The rate the ramp stops at (a ceiling, or a floor when `step` is negative).
    public var end: Double?

    public init(kind: Kind, start: Double, step: Double, stepSeconds: Double, end: Double?) {
        self.kind = kind
        self.start = start
        self.step = step
        self.stepSeconds = stepSeconds
        self.end = end
    }

    /// The lowest rate a ramp goes down to when it has no `end`.
    static let minimumRate = 1.0

    /// The intended calls per second `seconds` after the measured window starts (negative: warm-up).
    public func rate(atSecond seconds: Double) -> Double {
        let elapsed = max(0, seconds)
        var rate: Double
        switch kind {
        case .step: rate = start + step * (elapsed / stepSeconds).rounded(.down)
        case .line: rate = start + step * elapsed
        }
        if let end { rate = step >= 0 ? min(rate, end) : max(rate, end) }
        return max(rate, Self.minimumRate)
    }

    /// Seconds from the start of the window until the rate reaches `end` (nil without one).
    public var rampSeconds: Double? {
        guard let end, step != 0 else { return nil }
        let steps = (end - start) / step
        switch kind {
        case .step: return steps.rounded(.up) * stepSeconds
        case .line: return steps
        }
    }

    /// The measured time when `--duration` is not given: the ramp plus one more step, or 10 s.
    var defaultDurationSeconds: Double {
        guard let rampSeconds else { return 10 }
        return rampSeconds + stepSeconds
    }

    /// `step 100 → 1000 calls/s, +100 every 2s`.
    public var description: String {
        func number(_ value: Double) -> String { Format.compact(value) }
        let target = end.map { " → \(number($0))" } ?? ""
        let sign = step >= 0 ? "+" : "−"
        switch kind {
        case .step:
            return "step \(number(start))\(target) calls/s, \(sign)\(number(abs(step))) every \(Format.seconds(stepSeconds))"
        case .line:
            return "line \(number(start))\(target) calls/s, \(sign)\(number(abs(step)))/s"
        }
    }
}
