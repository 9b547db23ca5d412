import LarderAPI
import LarderWire

/// Ids people can type: a full id, a unique prefix of at least `minimumPrefix` characters,
/// or, for groups, categories and locations, the exact name. Resolved on the client by listing.
///
/// Meals have no unique names and can be many, so a meal id prefix is looked up among the
/// `mealScanLimit` newest meals only (`mealScanLimit / 1000` pages); an older meal needs its full id.
enum IDResolver {
    /// The shortest id prefix accepted (8 hex digits: one in four billion).
    static let minimumPrefix = 8
    /// How many of the newest meals a meal id prefix is looked up in.
    static let mealScanLimit = 10_000
    /// Candidates listed in an "ambiguous" error at most.
    static let maxListed = 10

    /// One thing an id may name.
    struct Entry: Equatable {
        let id: String
        /// The name, and for a category its group's: what the user sees next to the id.
        let label: String
        let name: String?
    }

    /// The kind of thing, as the messages name it.
    struct Kind: Sendable {
        let singular: String
        let plural: String
        /// Whether an exact name selects it too.
        let hasUniqueNames: Bool

        static let location = Kind(singular: "location", plural: "locations", hasUniqueNames: true)
        static let group = Kind(singular: "category group", plural: "category groups", hasUniqueNames: true)
        static let category = Kind(singular: "item category", plural: "item categories", hasUniqueNames: true)
        static let meal = Kind(singular: "meal", plural: "meals", hasUniqueNames: false)
    }

    /// `text` as a full id in canonical lower case, or nil when it is no complete UUID.
    /// `dashless` also takes 32 hex digits alone, as some tools print a UUID, and puts the
    /// dashes in: for meals, which have no names. A thing with a unique name might be named
    /// so, and is looked up instead (`matches` takes the digits as a name or a whole id).
    static func fullID(_ text: String, dashless: Bool = false) -> String? {
        let utf8 = Array(text.utf8)
        if dashless && utf8.count == 32 && utf8.allSatisfy(isHex) {
            var id = ""
            for (index, byte) in utf8.enumerated() {
                if index == 8 || index == 12 || index == 16 || index == 20 { id += "-" }
                id.unicodeScalars.append(Unicode.Scalar(byte))
            }
            return id.lowercased()
        }
        guard utf8.count == 36 else { return nil }
        for (index, byte) in utf8.enumerated() {
            if index == 8 || index == 13 || index == 18 || index == 23 {
                guard byte == UInt8(ascii: "-") else { return nil }
            } else if !isHex(byte) {
                return nil
            }
        }
        return text.lowercased()
    }

    /// The id prefix `text` stands for (lower case, a trailing `…` from a cut table cell removed),
    /// or nil when it is too short or holds other characters than hex digits and dashes.
    static func prefix(_ text: String) -> String? {
        var text = Substring(text)
        if text.hasSuffix("…") { text = text.dropLast() }
        guard text.utf8.count >= minimumPrefix, text.utf8.count <= 36,
              text.utf8.allSatisfy({ isHex($0) || $0 == UInt8(ascii: "-") })
        else { return nil }
        return text.lowercased()
    }

    /// The entries `text` selects: by exact name (when `kind` has unique names; whitespace around
    /// it ignored, as the server trims names it stores) or id prefix (one with no dashes is
    /// matched against the ids' hex digits alone).
    static func matches(_ text: String, in entries: [Entry], kind: Kind) -> [Entry] {
        let prefix = prefix(text)
        let digitsOnly = prefix.map { !$0.contains("-") } ?? false
        let name = text.trimmedOfWhiteSpace ?? text
        var found: [Entry] = []
        for entry in entries {
            let byName = kind.hasUniqueNames && entry.name == name
            let id = digitsOnly ? entry.id.lowercased().filter { $0 != "-" } : entry.id.lowercased()
            let byPrefix = prefix.map { id.hasPrefix($0) } ?? false
            if byName || byPrefix { found.append(entry) }
        }
        return found
    }

    /// The one id of `found`, or the error that says why there is none.
    /// - Parameter complete: false when only part of the entries were searched (meals).
    static func single(_ found: [Entry], text: String, kind: Kind, argument: String, usagePath: String,
                       complete: Bool = true) throws(CLIError) -> String {
        if found.count == 1, let only = found.first { return only.id }
        if found.isEmpty {
            var what = kind.hasUniqueNames ? "the name \"\(text)\" or an id starting with it" : "an id starting with \"\(text)\""
            if !complete { what += " among the \(mealScanLimit) newest; give the full id" }
            let short = kind.hasUniqueNames && prefix(text) == nil
                ? " (an id prefix needs at least \(minimumPrefix) hex digits)" : ""
            throw .rpc(RPCError.notFound("\(argument): no \(kind.singular) has \(what)\(short)"))
        }
        let rows = found.prefix(maxListed).map { ["  " + $0.id, $0.label] }
        var message = "\(argument) \"\(text)\" matches \(found.count)\(complete ? "" : " or more") \(kind.plural); "
            + "give more of the id or the full id:\n"
            + TableRenderer(columns: [.init(""), .init("")], rows: rows, showsHeader: false).render()
        if found.count > maxListed { message += "  … and \(found.count - maxListed) more\n" }
        while message.hasSuffix("\n") { message.removeLast() }
        throw .usage(message, command: usagePath)
    }

    private static func isHex(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
             UInt8(ascii: "A")...UInt8(ascii: "F"): true
        default: false
        }
    }
}

extension CommandContext {
    /// The location `text` names (full id, id prefix or exact name).
    func locationID(_ text: String, argument: String = "ID") async throws(CLIError) -> String {
        if let id = IDResolver.fullID(text) { return id }
        let locations = try await allLocations().locations
        let entries = locations.map { IDResolver.Entry(id: $0.id, label: $0.name, name: $0.name) }
        return try resolved(text, entries, .location, argument)
    }

    /// The category group `text` names (full id, id prefix or exact name).
    func groupID(_ text: String, argument: String = "ID") async throws(CLIError) -> String {
        if let id = IDResolver.fullID(text) { return id }
        let groups = try await allCategoryGroups().categoryGroups
        let entries = groups.map { IDResolver.Entry(id: $0.id, label: $0.name, name: $0.name) }
        return try resolved(text, entries, .group, argument)
    }

    /// The item category `text` names (full id, id prefix or exact name, which may be in several groups).
    func categoryID(_ text: String, argument: String = "ID") async throws(CLIError) -> String {
        if let id = IDResolver.fullID(text) { return id }
        let categories = try await allItemCategories().itemCategories
        var groupNames: [String: String] = [:]
        if Set(categories.map(\.name)).count != categories.count,
           let groups = try? await allCategoryGroups() {
            groupNames = Dictionary(groups.categoryGroups.map { ($0.id, $0.name) }, uniquingKeysWith: { a, _ in a })
        }
        let entries = categories.map { category in
            IDResolver.Entry(id: category.id,
                             label: "\(category.name) (group \(groupNames[category.categoryGroupID] ?? category.categoryGroupID))",
                             name: category.name)
        }
        return try resolved(text, entries, .category, argument)
    }

    /// The meal `text` names: a full id, or a unique id prefix among the `IDResolver.mealScanLimit` newest meals.
    func mealID(_ text: String, argument: String = "ID") async throws(CLIError) -> String {
        if let id = IDResolver.fullID(text, dashless: true) { return id }
        let usagePath = command?.usagePath ?? "larder"
        guard IDResolver.prefix(text) != nil else {
            throw .usage("\(argument) must be a meal id or a prefix of one with at least \(IDResolver.minimumPrefix) "
                         + "hex digits, got \"\(text)\"", command: usagePath)
        }
        var request = ListMealRecordsRequest(pageSize: 1000)
        var found: [IDResolver.Entry] = []
        var scanned = 0
        var complete = false
        while scanned < IDResolver.mealScanLimit {
            let page = try await call(MealRecordMethods.listMealRecords, request)
            scanned += page.mealRecords.count
            let entries = page.mealRecords.map { meal in
                IDResolver.Entry(id: meal.id, label: "\(meal.name) (\(meal.eatenAt.map(localTime.format) ?? "-"))",
                                 name: nil)
            }
            found += IDResolver.matches(text, in: entries, kind: .meal)
            if found.count > 1 { break }
            if page.nextPageToken.isEmpty {
                complete = true
                break
            }
            request.pageToken = page.nextPageToken
        }
        return try IDResolver.single(found, text: text, kind: .meal, argument: argument, usagePath: usagePath,
                                     complete: complete)
    }

    private func resolved(_ text: String, _ entries: [IDResolver.Entry], _ kind: IDResolver.Kind,
                          _ argument: String) throws(CLIError) -> String {
        try IDResolver.single(IDResolver.matches(text, in: entries, kind: kind), text: text, kind: kind,
                              argument: argument, usagePath: command?.usagePath ?? "larder")
    }
}
