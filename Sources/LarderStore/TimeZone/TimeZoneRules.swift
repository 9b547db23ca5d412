import LarderWire

/// The UTC offsets of one IANA time zone over time, read from its TZif file
/// (RFC 8536): the listed transitions, then the footer's POSIX rule.
struct TimeZoneRules: Sendable {
    /// UTC seconds at which the offset changes, ascending, with the offset after each.
    let transitions: [(at: Int64, offset: Int64)]
    /// The offset before the first transition.
    let initialOffset: Int64
    /// The rule after the last transition, if the file has one.
    let footer: POSIXTimeZoneRule?

    init(transitions: [(at: Int64, offset: Int64)], initialOffset: Int64, footer: POSIXTimeZoneRule?) {
        self.transitions = transitions
        self.initialOffset = initialOffset
        self.footer = footer
    }

    /// A zone that is always `offset` seconds east of UTC.
    init(fixedOffset offset: Int64) {
        self.init(transitions: [], initialOffset: offset, footer: nil)
    }

    /// The stretches of constant offset that cover [start, end) (UTC seconds): each one
    /// starts at `start` or at a change of offset, and lasts until the next one.
    func segments(from start: Int64, to end: Int64) -> [(start: Int64, offset: Int64)] {
        var result: [(start: Int64, offset: Int64)] = [(start, offset(at: start))]
        func add(_ at: Int64, _ offset: Int64) {
            guard at > start, at < end, let last = result.last else { return }
            if at <= last.start { return }
            if offset != last.offset { result.append((at, offset)) }
        }
        let lastListed = transitions.last?.at ?? .min
        // The first listed transition after start (binary search), then every one up to end.
        var index = firstTransition(after: start)
        while index < transitions.count, transitions[index].at < end {
            add(transitions[index].at, transitions[index].offset)
            index += 1
        }
        if let footer, end > lastListed {
            let firstYear = Self.year(of: max(start, lastListed == .min ? start : lastListed))
            let lastYear = Self.year(of: end)
            for year in firstYear...max(firstYear, lastYear) {
                for change in footer.transitions(inYear: year) where change.at > lastListed {
                    add(change.at, change.offset)
                }
            }
        }
        return result
    }

    /// The offset in force at UTC second `time`.
    func offset(at time: Int64) -> Int64 {
        let index = firstTransition(after: time)
        if index < transitions.count { return index == 0 ? initialOffset : transitions[index - 1].offset }
        // At or after the last listed transition: the footer's rule, when there is one.
        guard let footer else { return transitions.last?.offset ?? initialOffset }
        let year = Self.year(of: time)
        var offset = footer.offsetAtStart(ofYear: year)
        for change in footer.transitions(inYear: year) where change.at <= time { offset = change.offset }
        return offset
    }

    /// The index of the first listed transition strictly after `time`.
    private func firstTransition(after time: Int64) -> Int {
        var low = 0
        var high = transitions.count
        while low < high {
            let mid = (low + high) / 2
            if transitions[mid].at <= time { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// The UTC calendar year of UTC second `time`.
    static func year(of time: Int64) -> Int {
        let days = time >= 0 ? time / 86_400 : (time - 86_399) / 86_400
        return CivilDate(daysSinceEpoch: days).year
    }
}
