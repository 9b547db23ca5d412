import LarderAPI
import LarderWire

/// The field-mask rule of every Update method.
enum UpdateMask {
    /// Throws INVALID_ARGUMENT when `mask` names a path outside `allowed`.
    static func check(_ mask: FieldMask, allowed: [String]) throws(RPCError) {
        for path in mask.paths where !allowed.contains(path) {
            throw RPCError.invalidArgument(
                "update_mask path \(SafeText.quoted(path)) cannot be updated; allowed paths: \(allowed.joined(separator: ", "))")
        }
    }
}
