/// The page tokens a server sent in one listing, to notice one it sends again: following it
/// would fetch the same pages for ever (`meals list --all` did, growing by ~110 MB/s).
///
/// Every token is remembered while they total at most `maxBytes`, the last one always: a
/// Larder server's tokens are ~50 bytes, so a listing of `MealCommands.maxPages` pages is
/// checked whole, and a server sending huge tokens is still caught repeating the last one.
struct PageTokenTrail {
    /// The most token bytes remembered.
    static let maxBytes = 1 << 20

    private var seen: Set<String> = []
    private var bytes = 0
    private var last: String?

    /// Records `token`; false when this listing already had it.
    mutating func insert(_ token: String) -> Bool {
        if token == last || seen.contains(token) { return false }
        last = token
        if bytes + token.utf8.count <= Self.maxBytes {
            seen.insert(token)
            bytes += token.utf8.count
        }
        return true
    }
}
