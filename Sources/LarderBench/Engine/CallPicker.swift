import LarderSystem

/// Picks the template of the next call: a workload by weight, then one of its
/// templates uniformly (e.g. a random location id for `get`).
struct CallPicker: Sendable {
    private let cumulativeWeights: [Int]
    private let ranges: [Range<Int>]
    /// The workloads picked from, in group order.
    let workloads: [Workload]
    private let totalWeight: Int

    init(mix: WorkloadMix, ranges: [Workload: Range<Int>]) {
        var cumulative: [Int] = []
        var selected: [Range<Int>] = []
        var workloads: [Workload] = []
        var sum = 0
        for (workload, weight) in mix.weights {
            guard let range = ranges[workload], !range.isEmpty else { continue }
            sum += weight
            cumulative.append(sum)
            selected.append(range)
            workloads.append(workload)
        }
        precondition(!selected.isEmpty, "no request templates for \(mix.description)")
        cumulativeWeights = cumulative
        self.ranges = selected
        self.workloads = workloads
        totalWeight = sum
    }

    /// A template to send and the index of its workload in `workloads`.
    func pick(_ random: inout SplitMix64) -> (template: Int, group: Int) {
        var group = 0
        if ranges.count > 1 {
            let ticket = random.below(totalWeight)
            while ticket >= cumulativeWeights[group] { group += 1 }
        }
        let range = ranges[group]
        let template = range.count == 1 ? range.lowerBound : range.lowerBound + random.below(range.count)
        return (template, group)
    }
}
