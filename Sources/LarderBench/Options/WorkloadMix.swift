public import LarderWire

/// Weights of the single workloads in a `mix` run, e.g. `get=80,create=15,list=5`.
public struct WorkloadMix: Sendable, Equatable {
    /// Positive weights by workload; never `.mix`.
    public private(set) var weights: [(workload: Workload, weight: Int)]

    /// The default mix: get=80,create=15,list=5.
    public static let standard = WorkloadMix(uncheckedWeights: [(.get, 80), (.create, 15), (.list, 5)])

    init(uncheckedWeights: [(Workload, Int)]) {
        weights = uncheckedWeights.map { (workload: $0.0, weight: $0.1) }
    }

    /// A mix made of the single workload `workload` (weight 1).
    public init(single workload: Workload) {
        weights = [(workload: workload, weight: 1)]
    }

    /// Parses `NAME=WEIGHT,...` with names ping, get, create, list and integer weights 0-1000000.
    /// - Throws: INVALID_ARGUMENT naming the bad entry and the expected form.
    public init(parsing text: String) throws(RPCError) {
        let expected = "expected NAME=WEIGHT,... with NAME one of ping, get, create, list, e.g. get=80,create=15,list=5"
        var result: [(Workload, Int)] = []
        for entry in text.split(separator: ",", omittingEmptySubsequences: false) {
            let parts = entry.split(separator: "=", omittingEmptySubsequences: false)
            guard parts.count == 2 else { throw .invalidArgument("--mix entry \"\(entry)\" has no '='; \(expected)") }
            let name = parts[0].trimmingCharacters(in: " ")
            guard let workload = Workload(rawValue: name), workload != .mix, workload != .call else {
                throw .invalidArgument("--mix: unknown workload \"\(name)\"; \(expected)")
            }
            guard let weight = Int(parts[1].trimmingCharacters(in: " ")), (0...1_000_000).contains(weight) else {
                throw .invalidArgument("--mix: weight of \(name) must be an integer 0-1000000, got \"\(parts[1])\"")
            }
            guard !result.contains(where: { $0.0 == workload }) else {
                throw .invalidArgument("--mix names \(name) twice")
            }
            if weight > 0 { result.append((workload, weight)) }
        }
        guard !result.isEmpty else { throw .invalidArgument("--mix needs at least one positive weight; \(expected)") }
        self.init(uncheckedWeights: result)
    }

    /// The workloads with a positive weight.
    public var workloads: [Workload] { weights.map(\.workload) }

    /// Sum of the weights.
    public var totalWeight: Int { weights.reduce(0) { $0 + $1.weight } }

    /// `get=80,create=15,list=5`.
    public var description: String { weights.map { "\($0.workload.rawValue)=\($0.weight)" }.joined(separator: ",") }

    public static func == (lhs: WorkloadMix, rhs: WorkloadMix) -> Bool {
        lhs.weights.elementsEqual(rhs.weights) { $0.workload == $1.workload && $0.weight == $1.weight }
    }
}

extension Substring {
    func trimmingCharacters(in set: Character) -> String {
        var slice = self
        while slice.first == set { slice.removeFirst() }
        while slice.last == set { slice.removeLast() }
        return String(slice)
    }
}
