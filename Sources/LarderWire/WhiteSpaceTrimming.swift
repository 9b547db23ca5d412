extension String {
    /// The text without the white space around it (Unicode's White_Space property), as the
    /// server stores a name; nil when there is nothing else. One rule for the server's
    /// validation and the CLI's lookup of names, so the two cannot drift.
    public var trimmedOfWhiteSpace: String? {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
              let last = scalars.lastIndex(where: { !$0.properties.isWhitespace }) else { return nil }
        return String(scalars[first...last])
    }
}
