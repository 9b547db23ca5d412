import LarderSystem
import LarderWire

/// Renders a `--call` request per call from its template (on the loop's thread).
final class PayloadGenerator: Sendable {
    let template: PayloadTemplate
    let prefix: String
    let locationIDs: [String]
    let mealIDs: [String]

    init(template: PayloadTemplate, prefix: String, locationIDs: [String], mealIDs: [String]) {
        self.template = template
        self.prefix = prefix
        self.locationIDs = locationIDs
        self.mealIDs = mealIDs
    }

    func encode(number: Int, random: inout SplitMix64) throws(RPCError) -> [UInt8] {
        try template.encode(number: number, prefix: prefix, random: &random, locationIDs: locationIDs, mealIDs: mealIDs)
    }
}
